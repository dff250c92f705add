package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/listwatch"
)

// The timings kube-controller-manager uses unless its flags say otherwise.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// jitterFactor stretches each wait between acquisition attempts by up to this fraction of
// RetryPeriod. Candidates started together (a rollout restarts them all) would otherwise
// poll the lease in lock-step; optimistic concurrency keeps that correct, but every
// round would then cost one conflict per loser.
const jitterFactor = 0.2

func maxJitter(d time.Duration) time.Duration { return time.Duration(jitterFactor * float64(d)) }

// Config says which Lease to contend for, as whom, how fast, and what to run as leader.
type Config struct {
	// Client reaches the apiserver holding the Lease.
	Client *listwatch.Client
	// Namespace and Name locate the Lease (kube-controller-manager uses
	// "kube-system"/"kube-controller-manager"). It is created when absent.
	Namespace, Name string
	// Identity is this candidate's name in the Lease's holderIdentity. It must be unique
	// among the candidates: two of one identity would both believe they hold the lease
	// (kube-controller-manager uses the hostname plus a random suffix).
	Identity string

	// LeaseDuration is how long other candidates wait, from the moment they saw the
	// holder's last renewal, before they take the lease over. It is written to the Lease
	// rounded up to whole seconds. Zero means DefaultLeaseDuration.
	LeaseDuration time.Duration
	// RenewDeadline is how long the leader keeps leading without a successful renewal.
	// Zero means DefaultRenewDeadline.
	RenewDeadline time.Duration
	// RetryPeriod is the time between attempts, to acquire (stretched by a small random
	// jitter) and to renew. Zero means DefaultRetryPeriod.
	RetryPeriod time.Duration

	// ReleaseOnCancel empties the Lease's holder when Run's context ends while leading,
	// once OnStartedLeading has returned, so that a standby takes over at once instead
	// of after LeaseDuration.
	ReleaseOnCancel bool

	Callbacks Callbacks

	// Registerer, when set, receives the gauge leader_election_master_status{name=Name}:
	// 1 while this elector leads, 0 otherwise.
	Registerer prometheus.Registerer
}

// Callbacks are what the elector runs as leadership comes and goes.
type Callbacks struct {
	// OnStartedLeading runs in its own goroutine when this candidate becomes the leader.
	// Its ctx is cancelled the moment leadership is lost or given up, and it must then
	// return promptly: Run does not return before it has. Required.
	OnStartedLeading func(ctx context.Context)
	// OnStoppedLeading is called when leadership ends. When it is lost it is called at
	// once, while OnStartedLeading may still be winding down: a process that must not
	// act without a lease can exit here, as kube-controller-manager does. When Run's
	// context ended, it is called after OnStartedLeading returned and the lease was
	// released. Optional.
	OnStoppedLeading func()
	// OnNewLeader is called with the holder's identity each time a different holder is
	// observed, this candidate included. It runs on Run's goroutine, between lease
	// requests, and must not block. Optional.
	OnNewLeader func(identity string)
}

// withDefaults returns c with its zero timings replaced by the defaults.
func (c Config) withDefaults() Config {
	if c.LeaseDuration == 0 {
		c.LeaseDuration = DefaultLeaseDuration
	}
	if c.RenewDeadline == 0 {
		c.RenewDeadline = DefaultRenewDeadline
	}
	if c.RetryPeriod == 0 {
		c.RetryPeriod = DefaultRetryPeriod
	}
	return c
}

func (c Config) validate() error {
	var errs []error
	if c.Client == nil {
		errs = append(errs, errors.New("a Client is required"))
	}
	if c.Namespace == "" || c.Name == "" {
		errs = append(errs, errors.New("the Lease's Namespace and Name are required"))
	}
	if c.Identity == "" {
		errs = append(errs, errors.New("an Identity is required"))
	}
	if c.Callbacks.OnStartedLeading == nil {
		errs = append(errs, errors.New("Callbacks.OnStartedLeading is required"))
	}
	if c.RetryPeriod < 0 || c.RenewDeadline < 0 || c.LeaseDuration < 0 {
		errs = append(errs, errors.New("durations must not be negative"))
	}
	// The leader stops acting RenewDeadline after its last renewal; the others take over
	// no sooner than LeaseDuration after they saw that renewal, which is later still. The
	// gap between the two is what keeps an old and a new leader from overlapping: it
	// absorbs clocks that run at slightly different rates and the time a cancelled
	// OnStartedLeading takes to notice.
	if c.LeaseDuration <= c.RenewDeadline {
		errs = append(errs, fmt.Errorf("LeaseDuration (%v) must be greater than RenewDeadline (%v)", c.LeaseDuration, c.RenewDeadline))
	}
	// The first renewal attempt starts RetryPeriod after the last success and must have
	// time to finish before the deadline. Requiring RenewDeadline > 1.2 × RetryPeriod
	// leaves it at least a fifth of a period, and is client-go's bound, so any timing it
	// accepts works here too. Surviving failed renewals takes more: every further attempt
	// needs one more RetryPeriod (the defaults, 10 s and 2 s, allow five attempts).
	if limit := c.RetryPeriod + maxJitter(c.RetryPeriod); c.RenewDeadline <= limit {
		errs = append(errs, fmt.Errorf("RenewDeadline (%v) must be greater than RetryPeriod with its jitter (%v)", c.RenewDeadline, limit))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("leaderelection: invalid config: %w", err)
	}
	return nil
}
