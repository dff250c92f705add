package object

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

func TestStatusHelpers(t *testing.T) {
	tests := []struct {
		name string
		err  error
		is   func(error) bool
	}{
		{"not found", NewNotFound("pods", "a"), IsNotFound},
		{"already exists", NewAlreadyExists("pods", "a"), IsAlreadyExists},
		{"conflict", NewConflict("pods", "a", "the object has been modified"), IsConflict},
		{"expired", NewExpired("too old resource version: 1 (5)"), IsGone},
		{"gone by code only", &StatusError{Status: Status{Code: 410}}, IsGone},
		{"429", NewTooManyRequests("slow down", 2*time.Second), IsTooManyRequests},
		{"forbidden", NewStatusError(403, ReasonForbidden, "no"), IsForbidden},
		{"unauthorized", NewStatusError(401, ReasonUnauthorized, "no"), IsUnauthorized},
		{"wrapped", fmt.Errorf("listing: %w", NewNotFound("pods", "a")), IsNotFound},
	}
	all := []func(error) bool{IsNotFound, IsAlreadyExists, IsConflict, IsGone, IsTooManyRequests, IsForbidden, IsUnauthorized}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.is(tt.err) {
				t.Fatalf("helper does not recognise %v", tt.err)
			}
			matches := 0
			for _, f := range all {
				if f(tt.err) {
					matches++
				}
			}
			if matches != 1 {
				t.Errorf("%d helpers match %v, want exactly 1", matches, tt.err)
			}
		})
	}
	if IsNotFound(fmt.Errorf("plain")) {
		t.Error("a plain error is not NotFound")
	}
}

func TestRetryAfter(t *testing.T) {
	var s Status
	if err := json.Unmarshal([]byte(`{"kind":"Status","code":429,"reason":"TooManyRequests","details":{"retryAfterSeconds":3}}`), &s); err != nil {
		t.Fatal(err)
	}
	d, ok := RetryAfter(&StatusError{Status: s})
	if !ok || d != 3*time.Second {
		t.Errorf("RetryAfter = %v, %v; want 3s", d, ok)
	}
	if _, ok := RetryAfter(NewNotFound("pods", "x")); ok {
		t.Error("NotFound carries no retry hint")
	}
}
