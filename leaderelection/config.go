package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/lease"
	"github.com/kinformer/kinformer/listwatch"
)

// The timings kube-controller-manager uses unless its flags say otherwise.
const (
	DefaultLeaseDuration = lease.DefaultLeaseDuration
	DefaultRenewDeadline = lease.DefaultRenewDeadline
	DefaultRetryPeriod   = lease.DefaultRetryPeriod
)

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

	// Clock is the only time the elector reads: its waits, the timeouts of its requests,
	// its renew deadline and its view of other holders' expiry. nil means clock.Real,
	// whose readings carry Go's monotonic clock, so a process frozen past its renew
	// deadline (SIGSTOP, a long pause) stops leading the moment it wakes.
	Clock clock.Clock
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

// timing is the Config's timings as package lease takes them.
func (c Config) timing() lease.Timing {
	return lease.Timing{LeaseDuration: c.LeaseDuration, RenewDeadline: c.RenewDeadline, RetryPeriod: c.RetryPeriod}
}

// withDefaults returns c with its zero timings replaced by the defaults, and the real
// clock when it has none.
func (c Config) withDefaults() Config {
	t := c.timing().WithDefaults()
	c.LeaseDuration, c.RenewDeadline, c.RetryPeriod = t.LeaseDuration, t.RenewDeadline, t.RetryPeriod
	if c.Clock == nil {
		c.Clock = clock.Real{}
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
	// The gap between RenewDeadline and LeaseDuration also covers the time a cancelled
	// OnStartedLeading takes to notice.
	if err := c.timing().Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("leaderelection: invalid config: %w", err)
	}
	return nil
}
