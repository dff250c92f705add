package reflector

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// causes is an error whose dynamic type is not comparable, as an embedder's may be.
type causes []string

func (c causes) Error() string { return strings.Join(c, "; ") }

func TestTransitionComparesWhatMatters(t *testing.T) {
	base := Status{State: StateWatching, Listed: true, LastSyncResourceVersion: "5", LastError: causes{"a"}}
	tests := []struct {
		name   string
		change func(*Status)
		want   bool
	}{
		{"nothing", func(*Status) {}, false},
		{"the resourceVersion alone", func(s *Status) { s.LastSyncResourceVersion = "6" }, false},
		{"another error saying the same", func(s *Status) { s.LastError = causes{"a"} }, false},
		{"an error saying something else", func(s *Status) { s.LastError = causes{"a", "b"} }, true},
		{"the error cleared", func(s *Status) { s.LastError = nil }, true},
		{"the state", func(s *Status) { s.State = StateBackingOff }, true},
		{"the backoff", func(s *Status) { s.Backoff = time.Second }, true},
		{"the relists", func(s *Status) { s.Relists++ }, true},
		{"the fallback", func(s *Status) { s.StreamingFallback, s.StreamingFallbackReason = true, causes{"no"} }, true},
		{"the fallback's reason alone", func(s *Status) { s.StreamingFallbackReason = errors.New("why") }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := base
			tt.change(&next)
			if got := next.transition(base); got != tt.want {
				t.Errorf("transition = %v, want %v", got, tt.want)
			}
		})
	}
}
