package shardgroup

import (
	"errors"
	"fmt"
	"time"

	"github.com/kinformer/kinformer/lease"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
)

// round is one turn of a member (or a leaving one): read the group, renew the Lease with
// the claims that follow from it, and start the callback that is due. See the package
// documentation for why each step is safe.
func (r *runner) round() state {
	now := r.o.Clock.Now()
	switch {
	case !now.Before(r.own.Deadline()):
		return r.lose("the Lease was not renewed within RenewDeadline")
	case r.cb != nil && now.Sub(r.cb.start) >= r.stuckAfter():
		r.stuck = fmt.Sprintf("%s of %s has run for %v, past HandoverTimeout (%v), and has not returned",
			r.cb.kind, r.cb.part, now.Sub(r.cb.start).Round(time.Millisecond), r.o.HandoverTimeout)
		return r.lose(r.stuck)
	case !r.unreleased.IsEmpty() && now.Sub(r.unreleasedSince) >= r.o.HandoverTimeout:
		// Checked (unhealthy) until the last Release returns.
		r.stuck = fmt.Sprintf("Release of %s has failed for %v, past HandoverTimeout (%v)", r.unreleased,
			now.Sub(r.unreleasedSince).Round(time.Millisecond), r.o.HandoverTimeout)
		return r.lose(r.stuck)
	}
	var s state = member{}
	if r.leaving {
		s = leaving{}
	}
	ctx, cancel := r.requestContext(s)
	defer cancel()

	listed, own := r.read(ctx)
	if listed && (own == nil || own.Annotations[IncarnationAnnotation] != r.inc) {
		return r.lose("the Lease was deleted, or taken over by another process")
	}
	peers := r.view.peers(r.readAt)
	r.updateTarget(peers)
	r.noteDuplicate()
	now = r.o.Clock.Now()

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
	r.measureLoad(now)
	if !now.Before(r.renewAt) || !want.Equal(r.published) || !r.target.Equal(r.pubTarget) {
		out, err := r.own.Write(ctx, r.renewal(want))
		switch {
		case out == lease.Written:
			r.wrote(want)
			r.again = r.again || claims
		case errors.Is(err, errForeign):
			r.err = err
			r.leaving = true
			return r.lose(err.Error())
		case out == lease.Refused || out == lease.Gone:
			return r.lose("the Lease was deleted, or taken over by another process")
		default:
			// The write may have been applied all the same (a timeout says nothing): the
			// server lists the old claims or the new, so only what both hold is surely
			// published.
			r.m.log.Debug("renewing the Lease", "err", err)
			r.published = r.published.Intersect(want)
			r.renewAt = r.o.Clock.Now().Add(r.o.RetryPeriod)
			return s
		}
	}
	if r.leaving {
		if r.published.IsEmpty() && r.cb == nil && r.holdsNothing() && r.leave(ctx) {
			return nil
		}
		return s
	}
	if listed {
		r.replan(ctx, peers, now)
		r.collect(ctx)
	}
	return s
}

// renewal is the write of a round: the Lease renewed, with the claims want, the target
// and the load, as long as it is still this incarnation's.
func (r *runner) renewal(want shard.Set) func(cur *object.Lease) (*object.Lease, error) {
	return func(cur *object.Lease) (*object.Lease, error) {
		if cur == nil {
			return nil, nil // deleted: Gone
		}
		if err := r.checkOwner(cur); err != nil {
			return nil, err
		}
		if cur.Annotations[IncarnationAnnotation] != r.inc {
			return nil, fmt.Errorf("%w: incarnation %s wrote it", lease.ErrRefused, cur.Annotations[IncarnationAnnotation])
		}
		cur.Spec = lease.Stamp(cur.Spec, r.o.ID, r.o.timing(), r.o.Clock.Now())
		setAnnotation(cur, ActingAnnotation, want.String())
		setAnnotation(cur, TargetAnnotation, r.target.String())
		if r.load != nil {
			setAnnotation(cur, LoadAnnotation, formatLoad(r.load))
		} else {
			delete(cur.Annotations, LoadAnnotation)
		}
		if r.view.duplicate(r.o.LeaseDuration) == "" {
			delete(cur.Annotations, ContenderAnnotation) // its writer has gone
		}
		return cur, nil
	}
}

// wrote records a successful write of the claims want.
func (r *runner) wrote(want shard.Set) {
	r.published, r.pubTarget = want, r.target
	r.renewAt = r.own.Renewed().Add(r.o.RetryPeriod)
}

// noteDuplicate reports, once, another process of this ID that marked the Lease.
func (r *runner) noteDuplicate() {
	d := r.view.duplicate(r.o.LeaseDuration)
	if d != "" && d != r.duplicate {
		r.m.log.Error("another live process runs with this member's ID and waits for its Lease; this one goes on acting",
			"lease", r.m.name, "other incarnation", d, "incarnation", r.inc)
	}
	r.duplicate = d
}

// updateTarget deals the plan out to the live members, this one included.
func (r *runner) updateTarget(peers []peer) {
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
	plan := r.view.currentPlan().plan
	if plan.IsZero() {
		plan = shard.EqualPlan(r.o.Slots)
	}
	assign := plan.Assign(ids)
	target := assign[r.o.ID]
	if r.leaving {
		target = shard.Set{}
	}
	if r.assign != nil && !r.leaving && !target.Equal(r.target) {
		if r.m.metrics != nil {
			r.m.metrics.rebalances.Inc()
		}
		r.m.log.Info("target changed", "members", len(assign), "slots", plan.Len(), "share", fmt.Sprintf("%.3f", target.Fraction()),
			"moved", fmt.Sprintf("%.3f", shard.Moved(r.assign, assign)))
	}
	r.plan, r.assign, r.target = plan, assign, target
	r.members = sortedKeys(assign)
}

// startRelease calls Release for what is acted on and no longer targeted, and retries a
// Release that failed, unless a callback runs.
func (r *runner) startRelease() {
	if r.cb != nil {
		return
	}
	part := r.acting.Minus(r.target).Union(r.unreleased)
	if part.IsEmpty() {
		return
	}
	r.acting, r.unreleased, r.releasing = r.acting.Minus(part), shard.Set{}, part
	// Acts turns false, and the Guard refuses writes there, before Release is called.
	if r.leaving {
		r.publish(leaving{})
	} else {
		r.publish(member{})
	}
	ctx, cancel := withClockDeadline(r.reqs, r.o, r.o.Clock.Now().Add(r.o.HandoverTimeout))
	r.call(releaseCall, part, ctx, cancel, false)
}

// startAcquire calls Acquire for the claims published by an earlier write that are still
// targeted and that no other live Lease lists in the read just made, unless a callback
// runs. A claim another Lease also lists waits, published, while that member releases or
// retracts it; when that member targets it too (their views of the membership or the
// plan differ, for a round or two), this one retracts it and waits a jittered
// RetryPeriod before claiming it again.
func (r *runner) startAcquire(peers []peer, now time.Time) {
	if r.cb != nil || r.leaving {
		return
	}
	part := r.published.Intersect(r.target).Minus(r.acting).Minus(r.unreleased).Minus(r.heldOff(now))
	for _, p := range peers {
		both := part.Intersect(p.acting)
		if both.IsEmpty() {
			continue
		}
		part = part.Minus(both)
		if contested := both.Intersect(p.target); !contested.IsEmpty() {
			r.holdOff(contested, now)
			r.m.log.Debug("retracting a claim another member also targets", "part", contested, "other", p.holder)
		}
	}
	if part.IsEmpty() {
		return
	}
	r.acquiring = part
	ctx, cancel := withClockDeadline(r.ctx, r.o, now.Add(r.o.HandoverTimeout))
	r.call(acquireCall, part, ctx, cancel, false)
}

// want is the claim set to publish: everything this member may act on, its pending
// claims still targeted, and, after a successful read, new claims on targeted hashes
// that no other Lease lists. claims reports whether there are new ones.
func (r *runner) want(peers []peer, listed bool, now time.Time) (shard.Set, bool) {
	held := r.acting.Union(r.acquiring).Union(r.releasing).Union(r.unreleased) // never dropped
	open := r.target.Minus(r.heldOff(now)).Minus(held)
	want := held.Union(open.Intersect(r.published))
	if !listed || r.leaving {
		return want, false
	}
	fresh := open.Minus(r.published)
	for _, p := range peers {
		fresh = fresh.Minus(p.acting)
	}
	return want.Union(fresh), !fresh.IsEmpty()
}

// holdOff keeps part unclaimed for a jittered RetryPeriod.
func (r *runner) holdOff(part shard.Set, now time.Time) {
	r.holdoff = append(r.holdoff, held{part: part, until: now.Add(r.o.RetryPeriod + jitter(r.o.RetryPeriod))})
}

// heldOff is what is held off at now; expired hold-offs are dropped.
func (r *runner) heldOff(now time.Time) shard.Set {
	var out shard.Set
	kept := r.holdoff[:0]
	for _, h := range r.holdoff {
		if now.Before(h.until) {
			out = out.Union(h.part)
			kept = append(kept, h)
		}
	}
	r.holdoff = kept
	return out
}

// holdsNothing reports whether nothing is acted on, in a callback, or unreleased.
func (r *runner) holdsNothing() bool {
	return r.acting.IsEmpty() && r.acquiring.IsEmpty() && r.releasing.IsEmpty() && r.unreleased.IsEmpty()
}

// loadPeriod is how often a settled member counts its load again.
func (r *runner) loadPeriod() time.Duration { return 5 * r.o.RetryPeriod }

// measureLoad counts the load of what the member acts on, once it has settled (it acts
// on exactly its target, no callback runs), every loadPeriod; an unsettled member
// publishes none, so the plan is never cut from a load that no longer matches a member's
// part.
func (r *runner) measureLoad(now time.Time) {
	if r.leaving || r.cb != nil || !r.acting.Equal(r.target) || !r.unreleased.IsEmpty() {
		r.load = nil
		return
	}
	if r.load != nil && now.Sub(r.loadAt) < r.loadPeriod() {
		return
	}
	var counts map[string]int64
	if r.o.Load != nil {
		counts = r.o.Load()
	}
	points := make([]shard.Point, 0, len(counts))
	for _, p := range shard.PointsOf(counts) {
		if r.acting.Contains(p.Hash) {
			points = append(points, p)
		}
	}
	r.load, r.loadAt = points, now
}
