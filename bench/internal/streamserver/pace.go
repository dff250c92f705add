package streamserver

import (
	"context"
	"time"
)

// coarse is how late the runtime's timers may wake: an idle Go process waits for
// its next timer in epoll with a timeout in whole milliseconds, so a 200µs timer
// fires after about 1.1 ms. Paced at 5k events/s on such timers, a watch would send
// bursts of five or six events a millisecond apart instead of one every 200µs, and
// the latency measured would be the client's work through each burst.
const coarse = 2 * time.Millisecond

// sleepUntil returns at t, or early with ctx's error when ctx ends. Waits longer
// than coarse go on a timer, which ctx can interrupt, until coarse before t; the
// rest is slept precisely (see preciseSleep), uninterrupted, as it is short.
func sleepUntil(ctx context.Context, timer *time.Timer, t time.Time) error {
	if d := time.Until(t) - coarse; d > 0 {
		timer.Reset(d)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
	}
	if d := time.Until(t); d > 0 {
		preciseSleep(d)
	}
	return ctx.Err()
}
