package shardgroup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
)

// Member is one process of a group. New makes it, Run takes part in the group until its
// context ends; Acts, Acting and Status may be called from any goroutine at any time.
type Member struct {
	opts    Options
	name    string // of its Lease
	leases  *listwatch.Resource[*object.Lease]
	log     *slog.Logger
	metrics *metrics

	running atomic.Bool // Run is not reentrant
	state   atomic.Pointer[snapshot]

	// For the package's tests, which step a fake clock only once every member waits for
	// it: whether Run's loop is waiting for its next round, and how often it woke.
	idle  atomic.Bool
	wakes atomic.Uint64
}

// snapshot is what Acts, Acting and Status read: made by Run's loop after every change,
// never modified after.
type snapshot struct {
	acting     BucketSet
	validUntil time.Time // RenewDeadline after the last renewal: Acts is false from then on
	status     Status
}

// Status is a member's view of the group and its part in it.
type Status struct {
	ID string
	// Members are the live members this one counts, itself included, sorted: the names
	// Target is computed from.
	Members []string
	// Target is what shard.Assign gives this member among Members (nothing while it
	// leaves).
	Target BucketSet
	// Acting is what it acts on: Acquire returned, Release not yet called.
	Acting BucketSet
	// Claimed is what its Lease lists: Acting, and what it is acquiring, releasing, or has
	// claimed and waits to acquire.
	Claimed BucketSet
	// HandingOver is true while Acting differs from Target or a callback runs.
	HandingOver bool
	// Lost is true from the moment RenewDeadline passed without a renewal until the
	// member renews again: it acts on nothing meanwhile.
	Lost bool
	// Leaving is true once Run's context has ended.
	Leaving bool
	// RenewedAt is when the last successful renewal started, on this member's clock.
	RenewedAt time.Time
}

// New checks opts, fills in the defaults, and registers the member's metrics on
// opts.Registerer when there is one. c reaches the apiserver holding the Leases.
func New(c *listwatch.Client, opts Options) (*Member, error) {
	if c == nil {
		return nil, errors.New("shardgroup: a client is required")
	}
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	m := &Member{
		opts:   opts,
		name:   leaseName(opts.Group, opts.ID),
		leases: listwatch.For[*object.Lease](c, listwatch.LeaseResource(), opts.Namespace),
		log:    opts.Logger.With("group", opts.Group, "member", opts.ID),
	}
	m.state.Store(&snapshot{acting: newBucketSet(opts.Buckets), status: Status{ID: opts.ID,
		Target: newBucketSet(opts.Buckets), Acting: newBucketSet(opts.Buckets), Claimed: newBucketSet(opts.Buckets)}})
	if opts.Registerer != nil {
		m.metrics = newMetrics(m)
		if err := opts.Registerer.Register(m.metrics); err != nil {
			return nil, fmt.Errorf("shardgroup: registering metrics: %w", err)
		}
	}
	return m, nil
}

// Acts reports whether this member acts on the objects whose Field has this value (the
// namespace, when sharding by namespace) at this moment: a controller checks it before
// each sync of an object, and leaves the object alone when it is false. It is true from
// the return of the Acquire that covered the value until just before the Release that
// covers it is called, and turns false on its own once RenewDeadline has passed since the
// last renewal, before Run has noticed. It costs a hash and a clock read.
func (m *Member) Acts(value string) bool {
	s := m.state.Load()
	if s.acting.IsEmpty() || !m.opts.Clock.Now().Before(s.validUntil) {
		return false
	}
	return s.acting.Has(BucketOf(shard.Hash(value), s.acting.Total()))
}

// Acting returns what this member acts on as a selector for sharded lists and watches,
// or ok false when it acts on nothing: a Selector without ranges would select everything.
func (m *Member) Acting() (sel shard.Selector, ok bool) {
	s := m.state.Load()
	if s.acting.IsEmpty() || !m.opts.Clock.Now().Before(s.validUntil) {
		return shard.Selector{}, false
	}
	return shard.Selector{Field: m.opts.Field, Ranges: s.acting.Ranges()}, true
}

// Status returns this member's view of the group, as of its last round.
func (m *Member) Status() Status {
	st := m.state.Load().status
	st.Members = append([]string(nil), st.Members...)
	return st
}

// Run takes part in the group until ctx ends, then leaves it: it releases everything
// (calling Release and waiting for it, while renewing its Lease), publishes that it claims
// nothing, and deletes its Lease, so that the others take its buckets over at once. It
// returns nil once the Lease is deleted, or an error when that could not be done before
// RenewDeadline passed without a renewal (the Lease then expires on its own) or the Lease
// turned out to belong to someone else. Losing the Lease while running is not an error:
// the member releases everything and joins again as soon as it can renew.
//
// Run may be called again after it returned, but not concurrently.
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

	for {
		if ctx.Err() != nil && !r.shutting {
			r.shutting = true
			m.log.Info("leaving the group: releasing everything")
		}
		r.round()
		if r.done {
			break
		}
		r.wait()
	}
	r.publish()
	return r.err
}

// bucketState is where one bucket stands in this member's hands.
type bucketState uint8

const (
	free          bucketState = iota // not acted on (it may be claimed: see runner.published)
	acquiring                        // in an Acquire that has not returned
	acting                           // Acquire returned nil, Release not called
	releasing                        // in a Release that has not returned
	releaseFailed                    // its Release failed: work may still run on it
)

// runner is the state of one Run. Only Run's goroutine touches it, but for view and wake,
// which the watch shares.
type runner struct {
	m    *Member
	o    Options
	ctx  context.Context // Run's
	reqs context.Context // requests outlive ctx, for the hand-over after it
	view *view
	wake chan struct{} // the watch saw a change that matters

	states    []bucketState
	published BucketSet // the claims of the last successful write, in this incarnation
	pubTarget BucketSet // and its target
	target    BucketSet
	assign    shard.Assignment
	members   []string
	holdoff   map[int]time.Time // buckets not to claim before then
	warned    map[string]string // the last unreadable claims logged, by Lease

	own        *object.Lease // the Lease as last read or written; nil: read it first
	ownUID     string        // of the Lease written since joining
	joined     bool          // a write succeeded since the start or the last loss
	lastRenew  time.Time     // start of the last successful write
	renewAt    time.Time     // when the next write is due
	lost       bool
	stopping   bool // lost, and still releasing: see stop
	lostReason string

	cb       *callback
	shutting bool
	again    bool // run the next round at once
	done     bool
	err      error

	handoverSince time.Time
}

func newRunner(m *Member, ctx context.Context) *runner {
	n := m.opts.Buckets
	return &runner{
		m: m, o: m.opts, ctx: ctx, reqs: context.WithoutCancel(ctx),
		view:      newView(m.name, n),
		wake:      make(chan struct{}, 1),
		states:    make([]bucketState, n),
		published: newBucketSet(n), pubTarget: newBucketSet(n), target: newBucketSet(n),
		holdoff: map[int]time.Time{}, warned: map[string]string{},
	}
}

// round is one turn of the protocol: read the group, renew the Lease with the claims that
// follow from it, and start the callback that is due. See the package documentation for
// why each step is safe.
func (r *runner) round() {
	defer r.publish()
	r.reap()
	if r.stopping {
		r.stop()
		return
	}
	now := r.o.Clock.Now()
	if r.joined && !now.Before(r.deadline()) {
		r.lose("the Lease was not renewed within RenewDeadline")
		return
	}
	if r.shutting && !r.joined && r.cb == nil {
		r.done = true // nothing acted on, nothing of this run's published
		return
	}
	ctx, cancel := r.requestContext(now)
	defer cancel()

	listed := r.read(ctx)
	now = r.o.Clock.Now()
	peers := r.view.peers(now)
	r.updateTarget(peers, now)

	// (1) Release what is acted on and no longer targeted. Its claim stays published
	// until Release has returned.
	r.startRelease()
	// (2) Acquire what was claimed by an earlier write and that nobody else claims in
	// this read, which follows that write.
	if listed {
		r.startAcquire(peers, now)
	}
	// (3) Publish: renew, drop the claims given up, add new ones; those are acquired
	// from the read of the next round, which follows at once.
	want, claims := r.want(peers, listed, now)
	if !r.joined || !now.Before(r.renewAt) || !want.Equal(r.published) || !r.target.Equal(r.pubTarget) {
		switch r.write(ctx, want) {
		case written:
			if claims {
				r.again = true
			}
		case gone:
			if r.shutting && r.published.IsEmpty() && r.cb == nil && r.allFree() {
				// A delete that failed on the way back but was done.
				r.joined, r.done = false, true
				return
			}
			r.lose("the Lease was deleted or replaced by another")
			return
		case foreign:
			// Run returns the error write set, once everything is released.
			r.shutting = true
			if !r.joined {
				r.done = true
				return
			}
			r.lose(r.err.Error())
			return
		case failed:
			// The write may have been applied all the same (a timeout says nothing):
			// the server lists the old claims or the new, so only what both hold is
			// surely published.
			r.published = r.published.Intersect(want)
			r.renewAt = r.o.Clock.Now().Add(r.o.RetryPeriod)
			return
		}
	}
	if r.shutting && r.joined && r.published.IsEmpty() && r.cb == nil && r.allFree() {
		r.leave(ctx)
		return
	}
	if listed && r.joined {
		r.collect(ctx)
	}
}

// collect deletes the Leases of members long gone (see staleFactor). The delete names
// the version seen, so a Lease renewed meanwhile stays; several members collecting the
// same Lease is harmless.
func (r *runner) collect(ctx context.Context) {
	for _, s := range r.view.stale(r.o.Clock.Now()) {
		err := r.m.leases.Delete(ctx, s.name, listwatch.DeleteOptions{
			Preconditions: &listwatch.Preconditions{UID: s.uid, ResourceVersion: s.rv},
		})
		if err == nil {
			r.m.log.Info("deleted the Lease of a member long gone", "lease", s.name)
		} else if !object.IsNotFound(err) && !object.IsConflict(err) {
			r.m.log.Debug("deleting a stale Lease", "lease", s.name, "err", err)
		}
	}
}

// deadline is when this member must stop acting unless it renews first.
func (r *runner) deadline() time.Time { return r.lastRenew.Add(r.o.RenewDeadline) }

// requestContext bounds a round's requests: a joined member's by its deadline, so that a
// server that hangs costs the Lease on time, not late; a joining one's by as long.
func (r *runner) requestContext(now time.Time) (context.Context, context.CancelFunc) {
	deadline := now.Add(r.o.RenewDeadline)
	if r.joined {
		deadline = r.deadline()
	}
	return withClockDeadline(r.reqs, r.o, deadline)
}

// read lists the group's Leases with a consistent read (resourceVersion ""), the newest
// state etcd has, and records them.
func (r *runner) read(ctx context.Context) bool {
	list, err := r.m.leases.List(ctx, listwatch.ListOptions{LabelSelector: GroupLabel + "=" + r.o.Group})
	if err != nil {
		r.m.log.Debug("listing the group's Leases", "err", err)
		return false
	}
	r.view.observeList(list.Items, list.ResourceVersion, r.o.Clock.Now(), r.o.LeaseDuration)
	for _, l := range list.Items {
		// A newer version of its own Lease than it wrote last (an annotation added by
		// hand, or a write it gave up on that landed anyway) is the base of the next.
		if l.Name == r.m.name && r.own != nil && l.UID == r.own.UID && newer(l.ResourceVersion, r.own.ResourceVersion) {
			r.own = l
		}
	}
	return true
}

// updateTarget computes the assignment of the live members, this one included.
func (r *runner) updateTarget(peers []peer, now time.Time) {
	ids := []string{r.o.ID}
	for _, p := range peers {
		if p.live {
			ids = append(ids, p.holder)
		}
		if p.actErr != nil && r.warned[p.name] != p.actErr.Error() {
			r.warned[p.name] = p.actErr.Error()
			r.m.log.Warn("a member's claims do not parse: taken as the whole space until its Lease expires",
				"lease", p.name, "err", p.actErr)
		}
	}
	assign := shard.Assign(ids, r.o.Buckets)
	target := setOf(assign[r.o.ID], r.o.Buckets)
	if r.shutting {
		target = newBucketSet(r.o.Buckets)
	}
	if r.assign != nil && !r.shutting && !target.Equal(r.target) {
		if r.m.metrics != nil {
			r.m.metrics.rebalances.Inc()
		}
		r.m.log.Info("target changed", "members", len(assign), "buckets", target.Len(),
			"moved", shard.Moved(r.assign, assign))
	}
	r.assign, r.target = assign, target
	r.members = slices.Sorted(maps.Keys(assign))
	for b, until := range r.holdoff {
		if !now.Before(until) {
			delete(r.holdoff, b)
		}
	}
}

// startRelease calls Release for what is acted on and no longer targeted, and retries a
// Release that failed, unless a callback runs.
func (r *runner) startRelease() {
	if r.cb != nil {
		return
	}
	var idx []int
	for b, s := range r.states {
		if s == releaseFailed || s == acting && !r.target.Has(b) {
			idx = append(idx, b)
		}
	}
	if len(idx) == 0 {
		return
	}
	for _, b := range idx {
		r.states[b] = releasing
	}
	// Acts turns false for them before Release is called.
	r.publish()
	r.call(releaseCall, bucketsOf(r.o.Buckets, idx...), r.reqs)
}

// startAcquire calls Acquire for the claims published by an earlier write that are still
// targeted and that no other live Lease lists in the read just made, unless a callback
// runs. A claim another Lease also lists waits, published, while that member releases or
// retracts it; when that member targets it too (their views of the membership differ,
// for a round or two), this one retracts it and waits a jittered RetryPeriod before
// claiming it again.
func (r *runner) startAcquire(peers []peer, now time.Time) {
	if r.cb != nil || r.shutting || !r.joined {
		return
	}
	var clear []int
	for b := range r.states {
		if r.states[b] != free || !r.published.Has(b) || !r.target.Has(b) || r.heldOff(b, now) {
			continue
		}
		ok := true
		for _, p := range peers {
			if !p.acting.Has(b) {
				continue
			}
			ok = false
			if p.target.Has(b) {
				r.holdoff[b] = now.Add(r.o.RetryPeriod + jitter(r.o.RetryPeriod))
				r.m.log.Debug("retracting a claim another member also targets", "bucket", b, "other", p.holder)
			}
		}
		if ok {
			clear = append(clear, b)
		}
	}
	if len(clear) == 0 {
		return
	}
	for _, b := range clear {
		r.states[b] = acquiring
	}
	r.call(acquireCall, bucketsOf(r.o.Buckets, clear...), r.ctx)
}

// want is the claim set to publish: every bucket this member may act on, its pending
// claims still targeted, and, after a successful read, new claims on targeted buckets
// that no other Lease lists. claims reports whether there are new ones.
func (r *runner) want(peers []peer, listed bool, now time.Time) (BucketSet, bool) {
	var idx []int
	claims := false
	for b, s := range r.states {
		switch {
		case s != free:
			idx = append(idx, b) // acted on, or may be: never dropped
		case !r.target.Has(b) || r.heldOff(b, now):
			// given up
		case r.published.Has(b):
			idx = append(idx, b) // pending
		case listed && !r.shutting && !claimedByPeer(peers, b):
			idx = append(idx, b)
			claims = true
		}
	}
	return bucketsOf(r.o.Buckets, idx...), claims
}

func claimedByPeer(peers []peer, b int) bool {
	for _, p := range peers {
		if p.acting.Has(b) {
			return true
		}
	}
	return false
}

func (r *runner) heldOff(b int, now time.Time) bool {
	until, ok := r.holdoff[b]
	return ok && now.Before(until)
}

func (r *runner) allFree() bool {
	for _, s := range r.states {
		if s != free {
			return false
		}
	}
	return true
}

// lose stops acting on everything at once: Acts turns false, a running callback is told
// to stop, and once it has returned, Release is called for everything that may still be
// worked on (see stop). Nothing of this member's claims is trusted any more, not even by
// itself: it joins again as a new claimant at its next successful write.
func (r *runner) lose(reason string) {
	r.joined, r.lost, r.stopping = false, true, true
	r.lostReason = reason
	r.m.log.Warn("lost the Lease: stopping everything", "reason", reason)
	if r.m.metrics != nil {
		r.m.metrics.losses.Inc()
	}
	if r.cb != nil {
		r.cb.cancel()
	}
	r.stop()
}

// stop carries a loss through, a step each time it is called: once no callback runs, it
// calls Release for everything acted on (or whose Release failed) with a context that
// ends when the others may take over, LeaseDuration after the start of the last renewal,
// before which no other member can have seen this Lease expire; once that has returned,
// it forgets its claims.
func (r *runner) stop() {
	if r.cb != nil {
		return
	}
	var idx []int
	for b, s := range r.states {
		if s == acting || s == releaseFailed {
			idx = append(idx, b)
			r.states[b] = releasing
		}
	}
	if len(idx) > 0 {
		ctx, cancel := withClockDeadline(context.Background(), r.o, r.lastRenew.Add(r.o.LeaseDuration))
		r.call(releaseCall, bucketsOf(r.o.Buckets, idx...), ctx)
		r.cb.final, r.cb.cancelDeadline = true, cancel
		return
	}
	r.stopping = false
	r.published, r.pubTarget = newBucketSet(r.o.Buckets), newBucketSet(r.o.Buckets)
	r.own, r.ownUID = nil, ""
	clear(r.holdoff)
	r.renewAt = r.o.Clock.Now()
	if r.shutting {
		r.done = true
		if r.err == nil {
			r.err = fmt.Errorf("shardgroup: leaving %s: %s; the Lease expires on its own", r.m.name, r.lostReason)
		}
	}
}

// leave deletes the Lease, which now claims nothing, so that the others count this
// member out at once. The delete names the version written, so a Lease changed since is
// read again and emptied first.
func (r *runner) leave(ctx context.Context) {
	err := r.m.leases.Delete(ctx, r.m.name, listwatch.DeleteOptions{
		Preconditions: &listwatch.Preconditions{UID: r.own.UID, ResourceVersion: r.own.ResourceVersion},
	})
	switch {
	case err == nil || object.IsNotFound(err):
		r.m.log.Info("left the group")
		r.joined, r.done = false, true
	case object.IsConflict(err):
		r.own = nil
		r.again = true
	default:
		r.m.log.Debug("deleting the Lease", "err", err)
	}
}

// wait sleeps until the next round is due: the next renewal, the deadline, the end of a
// hold-off, a callback's return, a change the watch saw, or the end of Run's context.
func (r *runner) wait() {
	if r.again {
		r.again = false
		return
	}
	now := r.o.Clock.Now()
	next := r.renewAt
	if r.joined && r.deadline().Before(next) {
		next = r.deadline()
	}
	for _, until := range r.holdoff {
		if until.Before(next) {
			next = until
		}
	}
	d := next.Sub(now)
	switch {
	case r.stopping:
		d = time.Hour // nothing to do but wait for the callback
	case d <= 0:
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
	if !r.shutting {
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

// poke asks for a round at once; it never blocks.
func (r *runner) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// publish makes the state visible to Acts, Acting, Status and the metrics, and times
// hand-overs.
func (r *runner) publish() {
	n := r.o.Buckets
	var actingIdx []int
	for b, s := range r.states {
		if s == acting {
			actingIdx = append(actingIdx, b)
		}
	}
	s := &snapshot{acting: bucketsOf(n, actingIdx...)}
	if r.joined {
		s.validUntil = r.deadline()
	}
	handing := !s.acting.Equal(r.target) || r.cb != nil
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
	s.status = Status{
		ID: r.o.ID, Members: r.members, Target: r.target, Acting: s.acting, Claimed: r.published,
		HandingOver: handing, Lost: r.lost, Leaving: r.shutting, RenewedAt: r.lastRenew,
	}
	r.m.state.Store(s)
}

// setOf is the set of n buckets covering ranges made by shard.Assign with n buckets.
func setOf(rs []shard.Range, n int) BucketSet {
	var idx []int
	for _, rg := range rs {
		for b := BucketOf(rg.First, n); b <= BucketOf(rg.Last, n); b++ {
			idx = append(idx, b)
		}
	}
	return bucketsOf(n, idx...)
}
