package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/lease"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// ErrLeadershipLost is returned by Run when leadership ended although Run's context had
// not: the lease could not be renewed within RenewDeadline, or another holder took it.
// The work has been told to stop; the process should exit, as kube-controller-manager
// does, and start again as a candidate.
var ErrLeadershipLost = errors.New("leaderelection: leadership lost")

// Elector is one candidate for leadership of one Lease.
type Elector struct {
	cfg     Config
	clk     clock.Clock
	timing  lease.Timing
	metrics *statusCollector

	running atomic.Bool // Run is not reentrant

	// What Run's goroutine knows of the lease; only that goroutine touches them.
	own      *lease.Own    // the lease as written, and the renew deadline
	expiry   *lease.Expiry // when the lease as last seen expires
	reported string        // the holder last passed to OnNewLeader

	mu        sync.Mutex
	leading   bool      // between winning the lease and stepping down
	lastRenew time.Time // start of the last successful acquire or renew, on clk
	leader    string    // the holder last observed
}

// New checks cfg, applies the default timings, and registers the elector's gauge on
// cfg.Registerer when there is one.
func New(cfg Config) (*Elector, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	t := cfg.timing()
	leases := listwatch.For[*object.Lease](cfg.Client, listwatch.LeaseResource(), cfg.Namespace)
	e := &Elector{
		cfg:    cfg,
		clk:    cfg.Clock,
		timing: t,
		own:    lease.NewOwn(leases, cfg.Name, t, cfg.Clock),
		expiry: lease.NewExpiry(cfg.Clock, t.LeaseDuration),
	}
	if cfg.Registerer != nil {
		e.metrics = newStatusCollector(e)
		if err := cfg.Registerer.Register(e.metrics); err != nil {
			return nil, fmt.Errorf("leaderelection: registering metrics: %w", err)
		}
	}
	return e, nil
}

// Run contends for the lease until ctx ends or leadership is lost. It tries at once,
// then every RetryPeriod; once it holds the lease it starts OnStartedLeading and renews
// every RetryPeriod.
//
// When ctx ends while leading, OnStartedLeading's context is cancelled and the lease is
// kept renewed until OnStartedLeading has returned, so that no successor starts while
// its work is still winding down; then the lease is released if ReleaseOnCancel is set,
// and Run returns nil (or the error of the release, after which the lease expires on
// its own). When a renewal fails for longer than RenewDeadline, or the lease turns out
// to have another holder, Run returns ErrLeadershipLost once OnStartedLeading has
// returned. Run may be called again after it returned, but not concurrently.
func (e *Elector) Run(ctx context.Context) error {
	if !e.running.CompareAndSwap(false, true) {
		return errors.New("leaderelection: Run is already running")
	}
	defer e.running.Store(false)
	if !e.acquire(ctx) {
		return nil
	}
	return e.lead(ctx)
}

// acquire attempts at once, then after every jittered RetryPeriod, until this candidate
// holds the lease (true) or ctx ends (false).
func (e *Elector) acquire(ctx context.Context) bool {
	for {
		// A request that hangs must not stall the candidate: each attempt gets as long
		// as a leader's renewal would. Attempts do end with ctx, and a write abandoned
		// then may still land, naming this candidate the holder of a lease it will not
		// renew: the others take it over after LeaseDuration, a delay but never a
		// second leader.
		actx, cancel := e.withTimeout(ctx, e.cfg.RenewDeadline)
		won := e.tryAcquireOrRenew(actx) == lease.Written
		cancel()
		if won {
			return true
		}
		wait := e.cfg.RetryPeriod + time.Duration(rand.Float64()*float64(e.timing.MaxJitter()))
		if !e.sleep(ctx.Done(), wait) {
			return false
		}
	}
}

// lead runs OnStartedLeading and keeps the lease while it works, as Run describes.
func (e *Elector) lead(ctx context.Context) error {
	// Nothing this leadership wrote counts for the next one.
	defer e.own.Forget()
	leaderCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.cfg.Callbacks.OnStartedLeading(leaderCtx)
	}()

	// A leader's requests do not end with ctx, only at their deadline: a renewal
	// abandoned in flight could still land after Run had moved on, between the release's
	// read and its write.
	requests := context.WithoutCancel(ctx)
	if !e.keepRenewing(requests, ctx.Done()) {
		return e.lose(cancel, done)
	}
	// ctx has ended, and leaderCtx with it. The work may take a while to stop: go on
	// renewing until it has.
	if !e.keepRenewing(requests, done) {
		return e.lose(cancel, done)
	}
	e.stepDown()
	var err error
	if e.cfg.ReleaseOnCancel {
		err = e.release(requests)
	}
	if f := e.cfg.Callbacks.OnStoppedLeading; f != nil {
		f()
	}
	return err
}

// keepRenewing renews the lease every RetryPeriod until stop is closed (true) or
// leadership is lost (false): RenewDeadline has passed since the start of the last
// successful renewal, or the lease has another holder. Every request is bounded by the
// deadline, so a server that hangs costs leadership on time, not late.
func (e *Elector) keepRenewing(ctx context.Context, stop <-chan struct{}) bool {
	for {
		deadline := e.own.Deadline()
		if !e.sleep(stop, min(e.cfg.RetryPeriod, deadline.Sub(e.clk.Now()))) {
			return true
		}
		left := deadline.Sub(e.clk.Now())
		if left <= 0 {
			return false
		}
		rctx, cancel := e.withTimeout(ctx, left)
		result := e.tryAcquireOrRenew(rctx)
		cancel()
		if result == lease.Refused {
			return false
		}
	}
}

// lose ends a leadership that was not given up: IsLeader turns false and the work is told
// to stop before anything else, and Run waits for the work only after OnStoppedLeading had
// its chance to act.
func (e *Elector) lose(cancelWork context.CancelFunc, workDone <-chan struct{}) error {
	e.stepDown()
	cancelWork()
	if f := e.cfg.Callbacks.OnStoppedLeading; f != nil {
		f()
	}
	<-workDone
	return ErrLeadershipLost
}

// renewed records a successful acquire or renewal that started at start. The write
// reached the server after that, so every other candidate starts counting the lease's
// duration later than this candidate starts counting its renew deadline.
func (e *Elector) renewed(start time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.leading = true
	e.lastRenew = start
}

func (e *Elector) stepDown() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.leading = false
}

// IsLeader reports whether this elector holds the lease now. It turns false the moment
// RenewDeadline has passed since the last renewal on Config.Clock, even before Run has
// noticed: a process that was frozen past its deadline knows on waking, before any of
// its goroutines has run.
func (e *Elector) IsLeader() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leading && e.clk.Now().Before(e.lastRenew.Add(e.cfg.RenewDeadline))
}

// Leader returns the holder of the lease as last observed, or "" when it was free or has
// not been read yet.
func (e *Elector) Leader() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leader
}

// Check is a health check for /healthz. It fails when this elector still acts as leader
// although its lease has gone unrenewed for longer than RenewDeadline plus one
// RetryPeriod on Config.Clock: Run should have stepped down by then, so its goroutine is
// stuck (a blocking OnNewLeader, say) and the process is best restarted. A candidate
// that does not lead is always healthy.
func (e *Elector) Check() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.leading {
		return nil
	}
	if since := e.clk.Now().Sub(e.lastRenew); since > e.cfg.RenewDeadline+e.cfg.RetryPeriod {
		return fmt.Errorf("leaderelection: leading lease %s/%s without a renewal for %v (renew deadline %v)",
			e.cfg.Namespace, e.cfg.Name, since.Round(time.Millisecond), e.cfg.RenewDeadline)
	}
	return nil
}

// sleep waits d on the elector's clock and reports true, or false as soon as stop is
// closed.
func (e *Elector) sleep(stop <-chan struct{}, d time.Duration) bool {
	select {
	case <-stop:
		return false
	default:
	}
	// On a fake clock even a timer already due waits for the next step.
	if d <= 0 {
		return true
	}
	fired := make(chan struct{})
	t := e.clk.AfterFunc(d, func() { close(fired) })
	defer t.Stop()
	select {
	case <-stop:
		return false
	case <-fired:
		return true
	}
}

// withTimeout is context.WithTimeout on the elector's clock. The context's Err is
// context.Canceled when the time is up (its Cause is context.DeadlineExceeded), and it has
// no Deadline: neither is read by the requests it bounds.
func (e *Elector) withTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	t := e.clk.AfterFunc(d, func() { cancel(context.DeadlineExceeded) })
	return ctx, func() {
		t.Stop()
		cancel(context.Canceled)
	}
}
