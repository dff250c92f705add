package lease

import (
	"errors"
	"fmt"
	"time"
)

// The timings of kube-controller-manager's leader election.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// JitterFactor stretches waits between attempts by up to this fraction of RetryPeriod:
// processes started together (a rollout restarts them all) would otherwise read and
// write in lock-step, which optimistic concurrency keeps correct at the cost of one
// conflict per round.
const JitterFactor = 0.2

// Timing is how a Lease is held. Zero fields pick the defaults (WithDefaults).
type Timing struct {
	// LeaseDuration is how long the others wait, from the moment they saw the holder's
	// Lease last change, before they take over. Written to the Lease rounded up to whole
	// seconds (Seconds).
	LeaseDuration time.Duration
	// RenewDeadline is how long the holder keeps acting without a successful renewal.
	RenewDeadline time.Duration
	// RetryPeriod is the time between renewals, and between attempts to acquire.
	RetryPeriod time.Duration
}

// WithDefaults returns t with its zero fields replaced by the defaults.
func (t Timing) WithDefaults() Timing {
	if t.LeaseDuration == 0 {
		t.LeaseDuration = DefaultLeaseDuration
	}
	if t.RenewDeadline == 0 {
		t.RenewDeadline = DefaultRenewDeadline
	}
	if t.RetryPeriod == 0 {
		t.RetryPeriod = DefaultRetryPeriod
	}
	return t
}

// Validate reports what makes t unsafe or unworkable.
func (t Timing) Validate() error {
	var errs []error
	if t.RetryPeriod < 0 || t.RenewDeadline < 0 || t.LeaseDuration < 0 {
		errs = append(errs, errors.New("durations must not be negative"))
	}
	// The holder stops acting RenewDeadline after its last renewal; the others take over
	// no sooner than LeaseDuration after they saw that renewal, which is later still. The
	// gap absorbs clocks that run at slightly different rates and the time the holder's
	// work takes to notice it must stop.
	if t.LeaseDuration <= t.RenewDeadline {
		errs = append(errs, fmt.Errorf("LeaseDuration (%v) must be greater than RenewDeadline (%v)", t.LeaseDuration, t.RenewDeadline))
	}
	// The first renewal attempt starts a RetryPeriod (and, for leader election, its
	// jitter) after the last success and must have time to finish before the deadline:
	// client-go's bound, so any timing it accepts works here too. Surviving failed renewals takes more: every further attempt
	// needs one more RetryPeriod (the defaults allow five).
	if limit := t.RetryPeriod + t.MaxJitter(); t.RenewDeadline <= limit {
		errs = append(errs, fmt.Errorf("RenewDeadline (%v) must be greater than RetryPeriod with its jitter (%v)", t.RenewDeadline, limit))
	}
	return errors.Join(errs...)
}

// MaxJitter is the most a wait between attempts is stretched by.
func (t Timing) MaxJitter() time.Duration {
	return time.Duration(JitterFactor * float64(t.RetryPeriod))
}

// Seconds is LeaseDuration as a Lease stores it, whole seconds rounded up: the others
// waiting a little longer is safe, shorter is not.
func (t Timing) Seconds() int32 { return int32((t.LeaseDuration + time.Second - 1) / time.Second) }
