package reflector

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// TestClassifyWatchEnd covers every way a watch ends.
func TestClassifyWatchEnd(t *testing.T) {
	reset := errors.New("read: connection reset by peer")
	tooLargeRV := object.NewStatusError(http.StatusGatewayTimeout, object.ReasonTimeout, "Too large resource version: 12, current: 10")
	for _, tc := range []struct {
		name   string
		err    error
		lasted time.Duration
		events int
		want   watchEnd
	}{
		{"server ended the stream on time", nil, 5 * time.Minute, 0, endedOnTime},
		{"410 Gone", object.NewExpired("too old resource version: 1 (5)"), time.Minute, 3, mustRelist},
		{"410 Gone at once", fmt.Errorf("wrapped: %w", object.NewExpired("too old")), 0, 0, mustRelist},
		{"too large resource version", tooLargeRV, 0, 0, mustRelist},
		{"oversized event", &listwatch.FrameError{Reason: "too large", Err: listwatch.ErrFrameTooLarge}, time.Minute, 1, mustRelist},
		{"healthy stream broke", reset, 2 * time.Second, 0, brokeAfterWorking},
		{"stream that delivered events broke", reset, 10 * time.Millisecond, 1, brokeAfterWorking},
		{"failed at once", reset, 10 * time.Millisecond, 0, failedEarly},
		{"short clean end", errShortWatch, 10 * time.Millisecond, 0, failedEarly},
		{"malformed frame at once", &listwatch.FrameError{Reason: "invalid JSON"}, 0, 0, failedEarly},
		{"429 at once", object.NewTooManyRequests("slow down", time.Second), 0, 0, failedEarly},
		{"idle timeout", listwatch.ErrIdleTimeout, 6 * time.Minute, 0, brokeAfterWorking},
		{"unexpected EOF early", io.ErrUnexpectedEOF, 0, 0, failedEarly},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := classifyWatchEnd(tc.err, tc.lasted, tc.events); got != tc.want {
				t.Errorf("classifyWatchEnd(%v, %v, %d) = %d, want %d", tc.err, tc.lasted, tc.events, got, tc.want)
			}
		})
	}
}

func TestStatusTransitionIgnoresResourceVersionAlone(t *testing.T) {
	base := Status{State: StateWatching, Listed: true, LastSyncResourceVersion: "5"}
	moved := base
	moved.LastSyncResourceVersion = "6"
	if moved.transition(base) {
		t.Error("a new resourceVersion alone is reported as a transition")
	}
	failed := moved
	failed.LastError = errors.New("x")
	if !failed.transition(base) {
		t.Error("a new LastError is not reported as a transition")
	}
}
