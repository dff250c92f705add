package shardgroup

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
)

// callKind says which callback a callback is.
type callKind int

const (
	acquireCall callKind = iota
	releaseCall
)

func (k callKind) String() string {
	if k == acquireCall {
		return "Acquire"
	}
	return "Release"
}

// callback is an Acquire or Release running on its own goroutine, so that the Lease is
// renewed while it works.
type callback struct {
	kind     callKind
	part     shard.Set
	cancel   context.CancelFunc // ends its context: at a loss, or once reaped
	finished chan struct{}      // closed when it returned; err is then set
	err      error
	start    time.Time
	// final marks the Release after a loss: it has no second chance.
	final bool
}

// call starts the callback kind for part under ctx, which cancel ends; final marks the
// Release after a loss. A Release first
// waits until no write the Guard let through is in flight in part (after a loss: none at
// all), so that nothing this member sent can land once the others take over.
func (r *runner) call(kind callKind, part shard.Set, ctx context.Context, cancel context.CancelFunc, final bool) {
	cb := &callback{kind: kind, part: part, cancel: cancel, finished: make(chan struct{}), start: r.o.Clock.Now(), final: final}
	r.cb = cb
	verb := "acquiring"
	if kind == releaseCall {
		verb = "releasing"
	}
	r.m.log.Info(verb, "part", part.String(), "share", fmt.Sprintf("%.3f", part.Fraction()))
	go func() {
		defer close(cb.finished)
		if kind == acquireCall {
			cb.err = invoke(ctx, r.o.Acquire, part)
			return
		}
		err := r.m.drain(ctx, part, cb.final)
		if err != nil && !final {
			cb.err = err // called again at the next round
			return
		}
		// After a loss Release is called whatever: it is the one chance to stop the
		// work, and what is still in flight is reported with its error.
		cb.err = errors.Join(err, invoke(ctx, r.o.Release, part))
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
	r.stuck = ""
	now := r.o.Clock.Now()
	took := now.Sub(cb.start)
	switch {
	case cb.kind == acquireCall && cb.err == nil:
		r.acquiring, r.acting = shard.Set{}, r.acting.Union(cb.part)
		r.fresh = r.fresh.Union(cb.part)
		r.m.log.Info("acting", "part", cb.part.String(), "took", took)
	case cb.kind == acquireCall:
		// Nothing was started: give the claims up, and try again later.
		r.acquiring = shard.Set{}
		r.holdOff(cb.part, now)
		r.m.log.Error("Acquire failed; claims given up for a while", "part", cb.part.String(), "err", cb.err)
	case cb.err == nil:
		r.releasing = shard.Set{}
		if r.unreleased.IsEmpty() {
			r.unreleasedSince = time.Time{}
		}
		r.m.log.Info("released", "part", cb.part.String(), "took", took)
	case cb.final:
		// After a loss there is no second chance: the others take over when its
		// context ends, and the work must have stopped by then.
		r.releasing = shard.Set{}
		r.m.log.Error("Release after a loss failed", "part", cb.part.String(), "err", cb.err)
	default:
		r.releasing, r.unreleased = shard.Set{}, r.unreleased.Union(cb.part)
		if r.unreleasedSince.IsZero() {
			r.unreleasedSince = cb.start
		}
		r.m.log.Error("Release failed; the part stays claimed and Release is called again", "part", cb.part.String(), "err", cb.err)
	}
	r.again = true
}

// invoke calls a callback, and turns its panic into an error: a bug in one hand-over
// must not take down the process with its claims unreleased.
func invoke(ctx context.Context, fn func(context.Context, shard.Set) error, part shard.Set) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return fn(ctx, part)
}

// watch follows the group's Leases and wakes the loop when a Lease appears, goes, or
// changes its claims, target, holder or incarnation; renewals alone only restart their
// duration. It is a shortcut to hand-overs, not a source of truth: the rounds read the
// group with consistent lists, and a watch that fails or falls silent costs only speed.
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
			changed := false
			switch ev.Type {
			case listwatch.Added, listwatch.Modified:
				changed = r.view.observe(ev.Object)
			case listwatch.Deleted:
				changed = r.view.deleted(ev.Object)
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
