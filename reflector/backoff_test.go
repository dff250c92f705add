package reflector

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/object"
)

func TestBackoff(t *testing.T) {
	s := backoffState{cfg: Backoff{Initial: 800 * time.Millisecond, Max: 5 * time.Second, ResetAfter: 2 * time.Minute, Jitter: -1}.withDefaults()}
	now := time.Unix(0, 0)
	var got []time.Duration
	for range 5 {
		got = append(got, s.delay(now))
		now = now.Add(time.Second)
	}
	want := []time.Duration{800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond, 5 * time.Second, 5 * time.Second}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("doubling to the cap (-want +got):\n%s", d)
	}
	if d := s.delay(now.Add(3 * time.Minute)); d != 800*time.Millisecond {
		t.Errorf("after 3 healthy minutes: %v, want the initial delay", d)
	}
	j := backoffState{cfg: Backoff{Initial: time.Second, Jitter: 1}.withDefaults()}
	for range 50 {
		j.current = 0
		if d := j.delay(now); d < time.Second || d > 2*time.Second {
			t.Fatalf("jittered delay %v outside [1s, 2s]", d)
		}
	}
}

func TestTooLargeResourceVersion(t *testing.T) {
	e := object.NewStatusError(http.StatusGatewayTimeout, object.ReasonTimeout, "Too large resource version: 99, current: 5")
	if !isTooLargeRV(e) {
		t.Error("message form not recognised")
	}
	e2 := object.NewStatusError(http.StatusGatewayTimeout, object.ReasonTimeout, "timeout")
	e2.Status.Details = &object.StatusDetails{Causes: []object.StatusCause{{Type: "ResourceVersionTooLarge"}}}
	if !isTooLargeRV(e2) {
		t.Error("cause form not recognised")
	}
	if isTooLargeRV(object.NewStatusError(http.StatusGatewayTimeout, object.ReasonTimeout, "timeout")) {
		t.Error("a plain timeout is not a too-large RV")
	}
}
