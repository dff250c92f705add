package shardgroup

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/lease"
	"github.com/kinformer/kinformer/shard"
)

// A state is where a member stands, with what it needs there. step runs one round of a
// state and returns the next; the package doc's table lists every transition, and
// TestTransitions runs each of its rows against step.
type state interface{ name() State }

// joining writes this incarnation's Lease: creates it, or takes it over once no other
// live incarnation holds it.
type joining struct{}

// waiting honours the claims of another live process of this member's ID, which holds
// its Lease, until they are released or expire.
type waiting struct {
	other string // that process's incarnation
}

// member renews the Lease and takes part in the rounds: read, release, acquire, claim.
type member struct{}

// leaving is a member whose Run's context has ended: it releases everything while it
// renews, publishes an empty claim, then deletes its Lease.
type leaving struct{}

// lost acts on nothing: it stops the callback that runs, then releases everything it may
// still be working on, before it joins again (or returns, if leaving).
type lost struct {
	reason string
	// until is when the others may take over: LeaseDuration after the start of the last
	// renewal. The last Release must have stopped the work by then.
	until time.Time
}

func (joining) name() State { return StateJoining }
func (waiting) name() State { return StateWaiting }
func (member) name() State  { return StateMember }
func (leaving) name() State { return StateLeaving }
func (lost) name() State    { return StateLost }

// Run takes part in the group until ctx ends, then leaves it: it releases everything
// (calling Release and waiting for it, while renewing its Lease), publishes that it claims
// nothing, and deletes its Lease, so that the others take its part over at once. It
// returns nil once the Lease is deleted (or when it had none to delete), or an error when
// that could not be done (the member lost its Lease meanwhile: it then expires on its
// own) or the Lease turned out to belong to another group or member. Losing the Lease
// while running is not an error: the member releases everything and joins again.
//
// Run may be called again after it returned, but not concurrently; each Run is a new
// incarnation of the member.
func (m *Member) Run(ctx context.Context) error {
	if !m.running.CompareAndSwap(false, true) {
		return errors.New("shardgroup: Run is already running")
	}
	defer m.running.Store(false)
	r := newRunner(m, ctx)

	// The watch only wakes the loop early; every decision rests on the loop's own
	// consistent lists. It outlives ctx, for the hand-over that follows it.
	wctx, stopWatch := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { r.watch(wctx) })
	defer func() {
		stopWatch()
		wg.Wait()
	}()

	var s state = joining{}
	for s != nil {
		s = r.step(s)
		r.publish(s)
		r.announce(s)
		if s != nil {
			r.wait(s)
		}
	}
	return r.err
}

// announce hands Options.Acting the parts the member has begun acting on, once the
// snapshot that lets them through is published; a member that lost meanwhile announces
// nothing (it releases them).
func (r *runner) announce(s state) {
	fresh := r.fresh
	r.fresh = shard.Set{}
	switch s.(type) {
	case member, leaving:
	default:
		return
	}
	if part := fresh.Intersect(r.acting); !part.IsEmpty() && r.o.Acting != nil {
		r.o.Acting(part)
	}
}

// runner is the state of one Run. Only Run's goroutine touches it, but for view and wake,
// which the watch shares.
type runner struct {
	m    *Member
	o    Options
	ctx  context.Context // Run's
	reqs context.Context // requests outlive ctx, for the hand-over after it
	inc  string          // this Run's incarnation
	own  *lease.Own
	view *view
	wake chan struct{} // the watch saw a change that matters

	// The member's part, as disjoint sets: what it acts on, what a callback has, and
	// what a Release failed for (work may still run there), since unreleasedSince.
	acting, acquiring, releasing, unreleased shard.Set
	unreleasedSince                          time.Time
	fresh                                    shard.Set // acted on since the last announce

	published shard.Set // the claims of the last successful write, in this incarnation
	pubTarget shard.Set // and its target
	target    shard.Set
	plan      shard.Plan // dealt by: the group's, or an equal plan while it has none
	assign    shard.Assignment
	members   []string
	holdoff   []held            // parts not to claim before a time
	warned    map[string]string // the last unreadable claims logged, by Lease

	load   []shard.Point // of what it acts on, measured once settled; nil: none to publish
	loadAt time.Time
	// planLoad is the group's load the planner last saw change by more than 5%, at
	// planSteadySince.
	planLoad        int64
	planSteadySince time.Time

	renewAt time.Time // when the next write (or attempt) is due
	readAt  time.Time // when the last read of the group began
	cb      *callback
	leaving bool // Run's context has ended
	again   bool // run the next round at once
	err     error

	reason    string // why it is Lost or Waiting
	stuck     string // why it gave everything up while a callback would not return
	duplicate string // another live incarnation of this ID
	markedAt  time.Time

	handoverSince time.Time
}

// held is a part not to claim before until.
type held struct {
	part  shard.Set
	until time.Time
}

func newRunner(m *Member, ctx context.Context) *runner {
	inc := newIncarnation()
	return &runner{
		m: m, o: m.opts, ctx: ctx, reqs: context.WithoutCancel(ctx), inc: inc,
		own:    lease.NewOwn(m.leases, m.name, m.opts.timing(), m.opts.Clock),
		view:   newView(m.name, m.opts.Group, m.opts.ID, inc, m.opts.Clock, m.opts.LeaseDuration),
		wake:   make(chan struct{}, 1),
		plan:   shard.EqualPlan(m.opts.Slots),
		warned: map[string]string{},
	}
}

// step runs one round of s and returns the next state, nil once Run is to return.
func (r *runner) step(s state) state {
	r.reap()
	if r.ctx.Err() != nil && !r.leaving {
		r.leaving = true
		r.m.log.Info("leaving the group: releasing everything")
	}
	switch s := s.(type) {
	case joining:
		return r.join()
	case waiting:
		return r.waitFor(s)
	case member, leaving:
		return r.round()
	case lost:
		return r.stop(s)
	default:
		panic(fmt.Sprintf("shardgroup: no step for %T", s))
	}
}

// lose stops acting on everything at once: Acts turns false and the Guard refuses every
// write before anything else, a running callback is told to stop, and the state that
// follows releases everything that may still be worked on. Nothing of this member's
// claims is trusted any more, not even by itself: it joins again as a new claimant.
func (r *runner) lose(reason string) state {
	s := lost{reason: reason, until: r.own.Renewed().Add(r.o.LeaseDuration)}
	r.reason = reason
	r.publish(s)
	r.m.log.Warn("stopping everything", "reason", reason)
	if r.m.metrics != nil {
		r.m.metrics.losses.Inc()
	}
	if r.cb != nil {
		r.cb.cancel()
	}
	return s
}

// stop carries a loss through, a step each time it is called: once no callback runs, it
// calls Release for everything acted on (or whose Release failed) with a context that
// ends when the others may take over; once that has returned and that moment has come,
// it forgets its claims and joins again.
func (r *runner) stop(s lost) state {
	if r.cb != nil {
		return s
	}
	if part := r.acting.Union(r.unreleased); !part.IsEmpty() {
		r.acting, r.unreleased, r.releasing = shard.Set{}, shard.Set{}, part
		ctx, cancel := withClockDeadline(context.Background(), r.o, s.until)
		r.call(releaseCall, part, ctx, cancel, true)
		return s
	}
	if r.leaving {
		if r.err == nil {
			r.err = fmt.Errorf("shardgroup: leaving %s: %s; the Lease expires on its own", r.m.name, s.reason)
		}
		return nil
	}
	// Its claims stand in the others' eyes until then, and must: a write it let through
	// may still be held by the server, and a Release may have failed. Joining writes an
	// empty claim, which would let the others take over at once.
	if now := r.o.Clock.Now(); now.Before(s.until) {
		r.renewAt = s.until
		return s
	}
	r.published, r.pubTarget, r.load, r.holdoff = shard.Set{}, shard.Set{}, nil, nil
	r.unreleasedSince = time.Time{}
	r.own.Forget()
	r.publish(joining{}) // the old deadline goes with the claims
	r.renewAt = r.o.Clock.Now()
	return joining{}
}

// requestContext bounds a round's requests: a member's by its deadline, so that a server
// that hangs costs the Lease on time, not late; any other's by as long.
func (r *runner) requestContext(s state) (context.Context, context.CancelFunc) {
	deadline := r.o.Clock.Now().Add(r.o.RenewDeadline)
	switch s.(type) {
	case member, leaving:
		deadline = r.own.Deadline()
	}
	return withClockDeadline(r.reqs, r.o, deadline)
}

// wait sleeps until the next round is due: the next renewal or attempt, the deadline, the
// end of a hold-off, a callback's return, a change the watch saw, or the end of Run's
// context.
func (r *runner) wait(s state) {
	if r.again {
		r.again = false
		return
	}
	now := r.o.Clock.Now()
	next := r.renewAt
	switch s.(type) {
	case member, leaving:
		next = minTime(next, r.own.Deadline())
		if r.cb != nil {
			next = minTime(next, r.cb.start.Add(r.stuckAfter()))
		}
		if !r.unreleased.IsEmpty() {
			next = minTime(next, r.unreleasedSince.Add(r.o.HandoverTimeout))
		}
	case lost:
		if r.cb != nil {
			next = now.Add(time.Hour) // nothing to do but wait for the callback
		}
	}
	for _, h := range r.holdoff {
		next = minTime(next, h.until)
	}
	d := next.Sub(now)
	if d <= 0 {
		return
	}
	tick := make(chan struct{}, 1)
	t := r.o.Clock.AfterFunc(d, func() { tick <- struct{}{} })
	defer t.Stop()
	var cbDone <-chan struct{}
	if r.cb != nil {
		cbDone = r.cb.finished
	}
	var ctxDone <-chan struct{}
	if !r.leaving {
		ctxDone = r.ctx.Done()
	}
	r.m.idle.Store(true)
	select {
	case <-tick:
	case <-r.wake:
	case <-cbDone:
	case <-ctxDone:
	}
	r.m.idle.Store(false)
	r.m.wakes.Add(1)
}

// stuckAfter is how long a callback may run before the member gives everything up: its
// bound, and a round for a callback that returns at its deadline to be taken in.
func (r *runner) stuckAfter() time.Duration { return r.o.HandoverTimeout + r.o.RetryPeriod }

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// poke asks for a round at once; it never blocks.
func (r *runner) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// publish makes the state visible to Acts, the Guard, Status, Check and the metrics, and
// times hand-overs. Only a member acts, and only until its deadline.
func (r *runner) publish(s state) {
	snap := &snapshot{stuck: r.stuck}
	name := StateStopped
	if s != nil {
		name = s.name()
	}
	switch name {
	case StateMember, StateLeaving:
		snap.acting, snap.validUntil = r.acting, r.own.Deadline()
	case StateLost:
		// Acting on nothing; the deadline kept so that the Guard says a write refused
		// past it came too late, not merely outside the member's part.
		snap.validUntil = r.own.Deadline()
	}
	if r.cb != nil {
		snap.call, snap.callSince = r.cb.kind.String(), r.cb.start
	}
	handing := !r.acting.Equal(r.target) || r.cb != nil || !r.unreleased.IsEmpty()
	now := r.o.Clock.Now()
	switch {
	case handing && r.handoverSince.IsZero():
		r.handoverSince = now
	case !handing && !r.handoverSince.IsZero():
		if r.m.metrics != nil {
			r.m.metrics.handover.Observe(now.Sub(r.handoverSince).Seconds())
		}
		r.handoverSince = time.Time{}
	}
	reason := ""
	if name == StateLost || name == StateWaiting {
		reason = r.reason
	}
	snap.status = Status{
		ID: r.o.ID, Incarnation: r.inc, State: name, Members: r.members, Target: r.target, Acting: snap.acting,
		Claimed: r.published, HandingOver: handing, Reason: reason, Duplicate: r.duplicate, Plan: r.plan,
		RenewedAt: r.own.Renewed(),
	}
	r.m.state.Store(snap)
}

// withClockDeadline returns a context that ends at deadline on the options' clock, or
// with parent.
func withClockDeadline(parent context.Context, o Options, deadline time.Time) (context.Context, context.CancelFunc) {
	if _, ok := o.Clock.(clock.Real); ok {
		return context.WithDeadline(parent, deadline)
	}
	ctx, cancel := context.WithCancel(parent)
	d := deadline.Sub(o.Clock.Now())
	if d <= 0 {
		cancel()
		return ctx, cancel
	}
	t := o.Clock.AfterFunc(d, cancel)
	return ctx, func() {
		t.Stop()
		cancel()
	}
}

// sleep waits d on clk and reports true, or false as soon as ctx ends.
func sleep(ctx context.Context, clk clock.Clock, d time.Duration) bool {
	done := make(chan struct{})
	t := clk.AfterFunc(d, func() { close(done) })
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-done:
		return true
	}
}

// jitter is a random duration from 0 to d: members that collided on a claim must not
// collide again in lock-step.
func jitter(d time.Duration) time.Duration { return rand.N(d + 1) }

// sortedKeys returns the keys of an assignment, sorted.
func sortedKeys(a shard.Assignment) []string {
	out := make([]string, 0, len(a))
	for k := range a {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
