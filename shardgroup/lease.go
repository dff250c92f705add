package shardgroup

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"time"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
)

// outcome is what a write of the member's Lease came to.
type outcome int

const (
	written outcome = iota // the Lease says what was written: renewed
	failed                 // the server refused or did not answer: try again next round
	gone                   // the Lease this member joined with was deleted or replaced
	foreign                // the Lease belongs to another group or member
)

// write renews the member's Lease with the claims want and the current target. Every
// update carries the resourceVersion read, so a Lease changed by another hand is read
// again first, never overwritten blind.
func (r *runner) write(ctx context.Context, want BucketSet) outcome {
	for range 3 {
		if r.own == nil {
			l, err := r.m.leases.Get(ctx, r.m.name)
			switch {
			case object.IsNotFound(err) && r.joined:
				return gone
			case object.IsNotFound(err):
				start := r.o.Clock.Now()
				created, err := r.m.leases.Create(ctx, r.leaseFor(&object.Lease{
					TypeMeta:   object.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
					ObjectMeta: object.ObjectMeta{Namespace: r.o.Namespace, Name: r.m.name},
				}, want, start))
				if object.IsAlreadyExists(err) {
					continue
				}
				if err != nil {
					r.m.log.Debug("creating the Lease", "err", err)
					return failed
				}
				r.wrote(created, start, want)
				return written
			case err != nil:
				r.m.log.Debug("reading the Lease", "err", err)
				return failed
			}
			if err := r.checkOwner(l); err != nil {
				r.err = err
				return foreign
			}
			// The Lease this member has been renewing was deleted, and another made in
			// its place: its claims lapsed meanwhile, and someone may have taken them.
			if r.joined && l.UID != r.ownUID {
				return gone
			}
			r.own = l
		}
		start := r.o.Clock.Now()
		updated, err := r.m.leases.Update(ctx, r.leaseFor(r.own, want, start))
		switch {
		case err == nil:
			r.wrote(updated, start, want)
			return written
		case object.IsConflict(err):
			r.own = nil
		case object.IsNotFound(err) && r.joined:
			return gone
		case object.IsNotFound(err):
			r.own = nil
		default:
			r.m.log.Debug("renewing the Lease", "err", err)
			return failed
		}
	}
	return failed
}

// checkOwner refuses a Lease of this member's name that another group or member holds:
// group names that prefix one another can make the same <group>-<id>.
func (r *runner) checkOwner(l *object.Lease) error {
	if g := l.Labels[GroupLabel]; g != r.o.Group {
		return fmt.Errorf("shardgroup: Lease %s/%s is labelled %s=%q, not group %q", r.o.Namespace, r.m.name, GroupLabel, g, r.o.Group)
	}
	if h := deref(l.Spec.HolderIdentity); h != "" && h != r.o.ID {
		return fmt.Errorf("shardgroup: Lease %s/%s is held by %q, not %q", r.o.Namespace, r.m.name, h, r.o.ID)
	}
	return nil
}

// leaseFor returns base with this member's record: holder, duration, renewal at now,
// claims and target. Fields it does not own stay as they are.
func (r *runner) leaseFor(base *object.Lease, want BucketSet, now time.Time) *object.Lease {
	l := object.DeepCopy(base)
	if l.Labels == nil {
		l.Labels = map[string]string{}
	}
	l.Labels[GroupLabel] = r.o.Group
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[ActingAnnotation] = want.String()
	l.Annotations[TargetAnnotation] = r.target.String()
	at := object.NewMicroTime(now)
	l.Spec.HolderIdentity = ptr(r.o.ID)
	l.Spec.LeaseDurationSeconds = ptr(leaseSeconds(r.o.LeaseDuration))
	l.Spec.RenewTime = ptr(at)
	if !r.joined || l.Spec.AcquireTime == nil {
		l.Spec.AcquireTime = ptr(at)
	}
	return l
}

// wrote records a successful write that started at start: the server applied it after
// that, so every other member starts counting the Lease's duration later than this one
// starts counting its deadline.
func (r *runner) wrote(l *object.Lease, start time.Time, want BucketSet) {
	r.own = l
	r.lastRenew, r.renewAt = start, start.Add(r.o.RetryPeriod)
	r.published, r.pubTarget = want, r.target
	if !r.joined {
		r.joined, r.lost, r.ownUID = true, false, l.UID
		r.m.log.Info("joined the group", "lease", r.m.name, "claims", want.String())
	}
}

// callKind says which callback a callback is.
type callKind int

const (
	acquireCall callKind = iota
	releaseCall
)

// callback is an Acquire or Release running on its own goroutine, so that the Lease is
// renewed while it works.
type callback struct {
	kind     callKind
	set      BucketSet
	cancel   context.CancelFunc
	finished chan struct{} // closed when it returned; err is then set
	err      error
	start    time.Time
	// final marks the Release after a loss; cancelDeadline releases the timer of its
	// context, bounded on the clock.
	final          bool
	cancelDeadline context.CancelFunc
}

// call starts the callback kind for set; its context ends with parent, or on a loss.
func (r *runner) call(kind callKind, set BucketSet, parent context.Context) {
	ctx, cancel := context.WithCancel(parent)
	cb := &callback{kind: kind, set: set, cancel: cancel, finished: make(chan struct{}), start: r.o.Clock.Now()}
	r.cb = cb
	fn, verb := r.o.Acquire, "acquiring"
	if kind == releaseCall {
		fn, verb = r.o.Release, "releasing"
	}
	r.m.log.Info(verb, "buckets", set.String())
	ranges := set.Ranges()
	go func() {
		defer close(cb.finished)
		cb.err = invoke(ctx, fn, ranges)
	}()
}

// reap takes in a callback that has returned.
func (r *runner) reap() {
	cb := r.cb
	if cb == nil {
		return
	}
	select {
	case <-cb.finished:
	default:
		return
	}
	r.cb = nil
	cb.cancel()
	if cb.cancelDeadline != nil {
		cb.cancelDeadline()
	}
	now := r.o.Clock.Now()
	took := now.Sub(cb.start)
	idx := cb.set.Indexes()
	switch {
	case cb.kind == acquireCall && cb.err == nil:
		r.set(idx, acting)
		r.m.log.Info("acting", "buckets", cb.set.String(), "took", took)
	case cb.kind == acquireCall:
		// Nothing was started: give the claims up, and try again later.
		r.set(idx, free)
		for _, b := range idx {
			r.holdoff[b] = now.Add(r.o.RetryPeriod + jitter(r.o.RetryPeriod))
		}
		r.m.log.Error("Acquire failed; claims given up for a while", "buckets", cb.set.String(), "err", cb.err)
	case cb.err == nil:
		r.set(idx, free)
		r.m.log.Info("released", "buckets", cb.set.String(), "took", took)
	case cb.final:
		// After a loss there is no second chance: the others take over when its
		// context ends, and the work must have stopped by then.
		r.set(idx, free)
		r.m.log.Error("Release after losing the Lease failed", "buckets", cb.set.String(), "err", cb.err)
	default:
		r.set(idx, releaseFailed)
		r.m.log.Error("Release failed; the buckets stay claimed and Release is called again", "buckets", cb.set.String(), "err", cb.err)
	}
	r.again = true
}

func (r *runner) set(idx []int, s bucketState) {
	for _, b := range idx {
		r.states[b] = s
	}
}

// invoke calls a callback, and turns its panic into an error: a bug in one hand-over
// must not take down the process with its claims unreleased.
func invoke(ctx context.Context, fn func(context.Context, []shard.Range) error, ranges []shard.Range) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return fn(ctx, ranges)
}

// watch follows the group's Leases and wakes the loop when a Lease appears, goes, or
// changes its claims, target or holder; renewals alone only restart their duration. It is
// a shortcut to hand-overs, not a source of truth: the rounds read the group with
// consistent lists, and a watch that fails or falls silent costs only speed.
func (r *runner) watch(ctx context.Context) {
	sel := GroupLabel + "=" + r.o.Group
	rv := ""
	for ctx.Err() == nil {
		w, err := r.m.leases.Watch(ctx, listwatch.WatchOptions{LabelSelector: sel, ResourceVersion: rv, AllowBookmarks: true, TimeoutSeconds: 300})
		if err != nil {
			if object.IsGone(err) {
				rv = ""
			}
			r.m.log.Debug("watching the group's Leases", "err", err)
			if !sleep(ctx, r.o.Clock, r.o.RetryPeriod) {
				return
			}
			continue
		}
		stop := context.AfterFunc(ctx, w.Close)
		events := 0
		for {
			ev, err := w.Next()
			if err != nil {
				if object.IsGone(err) {
					rv = "" // a list follows every round anyway
				}
				break
			}
			events++
			if ev.Object == nil {
				continue
			}
			if ev.Object.ResourceVersion != "" {
				rv = ev.Object.ResourceVersion
			}
			now := r.o.Clock.Now()
			changed := false
			switch ev.Type {
			case listwatch.Added, listwatch.Modified:
				changed = r.view.observe(ev.Object, now, r.o.LeaseDuration)
			case listwatch.Deleted:
				changed = r.view.deleted(ev.Object, now, r.o.LeaseDuration)
			}
			if changed {
				r.poke()
			}
		}
		stop()
		w.Close()
		// A stream that ended with nothing in it waits before the next: never a hot loop.
		if events == 0 && !sleep(ctx, r.o.Clock, r.o.RetryPeriod) {
			return
		}
	}
}

// withClockDeadline returns a context that ends at deadline on clk, or with parent.
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
