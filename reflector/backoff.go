package reflector

import (
	"math/rand/v2"
	"time"
)

// Backoff configures the wait after a failure: Initial, doubling up to Max, plus a random
// jitter of up to Jitter times the delay, and back to Initial after ResetAfter without a
// failure. The zero value means client-go's numbers: 800 ms, 30 s, 2 min, jitter 1.0.
type Backoff struct {
	Initial, Max, ResetAfter time.Duration
	Jitter                   float64
}

func (b Backoff) withDefaults() Backoff {
	if b.Initial == 0 {
		b.Initial = 800 * time.Millisecond
	}
	if b.Max == 0 {
		b.Max = 30 * time.Second
	}
	if b.ResetAfter == 0 {
		b.ResetAfter = 2 * time.Minute
	}
	if b.Jitter == 0 {
		b.Jitter = 1.0
	}
	if b.Jitter < 0 {
		b.Jitter = 0
	}
	return b
}

// backoffState tracks consecutive failures.
type backoffState struct {
	cfg         Backoff
	current     time.Duration
	lastFailure time.Time
}

// delay returns the wait after a failure at now.
func (s *backoffState) delay(now time.Time) time.Duration {
	if s.current == 0 || now.Sub(s.lastFailure) > s.cfg.ResetAfter {
		s.current = s.cfg.Initial
	} else {
		s.current = min(2*s.current, s.cfg.Max)
	}
	s.lastFailure = now
	return s.current + time.Duration(rand.Float64()*s.cfg.Jitter*float64(s.current))
}

// reset forgets the failures so far: the next one waits Initial.
func (s *backoffState) reset() { s.current = 0 }
