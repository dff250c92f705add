//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package streamserver

import "time"

// preciseSleep falls back to the runtime's timer where nanosleep(2) is not at hand:
// paced watches then send bursts at rates above the timer's resolution.
func preciseSleep(d time.Duration) { time.Sleep(d) }
