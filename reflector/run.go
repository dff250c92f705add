package reflector

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// A state is where the reflector's loop is, with what it needs there. step runs one and
// returns the next; the package doc's table lists every transition, and TestTransitions
// runs each of its rows against step.
type state interface {
	// name is the State that Status reports while the loop is here.
	name() State
}

// listing fetches the whole state with a paginated list: at resourceVersion "0" (any
// state, from the watch cache), or "" (the newest) under Options.ConsistentLists, unless
// one of these says otherwise.
type listing struct {
	// relist: the watch could not go on (410, an event lost); ask for at least the newest
	// resourceVersion the store holds, or the newest state when that one is gone.
	relist bool
	// resharded: SetShard changed the shard under a fetch of the whole state, or under a
	// watch when the part gained cannot be listed alone; ask for the newest state, as the
	// list of a part gained does (see listAdded).
	resharded bool
}

// streamingList fetches the whole state as a watch that starts with it (sendInitialEvents).
type streamingList struct{}

// listingAdded lists the part of the shard that SetShard added while the loop watched,
// fresh (the newest state), and merges it into the store (see listAdded).
type listingAdded struct{}

// watching streams events into the store, from the last resourceVersion.
type watching[T object.Object] struct {
	// open is the stream a streaming list left open (the watch goes on in it); nil opens
	// a new watch.
	open listwatch.Stream[T]
}

// backingOff waits after a failure, then goes back to where it failed.
type backingOff struct {
	err  error // the failure (and its Retry-After, if it has one)
	then state // where the loop goes once the wait is over
}

func (listing) name() State       { return StateListing }
func (streamingList) name() State { return StateStreamingList }
func (listingAdded) name() State  { return StateListingAdded }
func (watching[T]) name() State   { return StateWatching }
func (backingOff) name() State    { return StateBackingOff }

// Run lists and watches until ctx ends.
func (r *Reflector[T]) Run(ctx context.Context) {
	defer r.stop()
	bo := backoffState{cfg: r.opts.Backoff}
	for s := r.fetchWhole(listing{}); s != nil; s = r.step(ctx, s, &bo) {
	}
}

// fetchWhole is the state that fetches the whole state: a streaming list while the
// server does them (it reads the newest state), else the list l.
func (r *Reflector[T]) fetchWhole(l listing) state {
	if r.opts.StreamingList && !r.Status().StreamingFallback {
		return streamingList{}
	}
	return l
}

// step runs s and returns the next state, or nil once ctx has ended.
func (r *Reflector[T]) step(ctx context.Context, s state, bo *backoffState) state {
	if ctx.Err() != nil {
		if w, ok := s.(watching[T]); ok && w.open != nil {
			w.open.Close() // a streaming list's stream, left open for the watch that will not come
		}
		return nil
	}
	var next state
	switch s := s.(type) {
	case listing:
		if err := r.list(ctx, s); errors.Is(err, errShardChanged) {
			next = r.refetch()
		} else {
			next = r.failed(err, s)
		}
	case streamingList:
		next = r.streamList(ctx)
	case listingAdded:
		next = r.listAdded(ctx)
	case watching[T]:
		// A watch follows the whole state in the store, and only with its shard: after a
		// SetShard (while a backoff was waited out, say), the store is brought to the new
		// shard first.
		if sh, stale := r.current(); stale {
			if s.open != nil {
				s.open.Close()
				r.untrack()
			}
			next = r.settle()
		} else if w := r.watch(ctx, s.open, sh); ctx.Err() == nil {
			next = r.afterWatch(w, bo)
		} // else the watch ended because Run is stopping: nothing to log or record
	case backingOff:
		if r.backOff(ctx, bo, s.err) {
			next = s.then
		}
	default:
		panic(fmt.Sprintf("reflector: no step for %T", s))
	}
	if ctx.Err() != nil {
		return nil
	}
	return next
}

// failed is the state after a fetch of the whole state: a watch when it worked, else a
// wait before trying again.
func (r *Reflector[T]) failed(err error, retry state) state {
	if err != nil {
		r.fail(err)
		return backingOff{err: err, then: retry}
	}
	return watching[T]{}
}

// watchEnd is how a watch ended, as far as the loop is concerned.
type watchEnd int

const (
	// endedOnTime: the server ended the stream as asked (timeoutSeconds). Resume at once
	// from the last resourceVersion.
	endedOnTime watchEnd = iota
	// mustRelist: the resourceVersion is compacted away, or an event over MaxFrameSize was
	// lost (resuming from before it would meet it again). The list fails and backs off
	// while the object stays too large.
	mustRelist
	// brokeAfterWorking: a stream that worked (for healthyStream, or delivered events) and
	// broke (a reset connection, a dead peer noticed by a ping) is most likely a passing
	// fault. Resume at once and start any backoff over; a server that is really down fails
	// the next attempt quickly, and that one backs off.
	brokeAfterWorking
	// failedEarly: anything else. Back off, then resume.
	failedEarly
)

// classifyWatchEnd says how a watch ended: err is nil for a clean end, lasted is how long
// the stream was open and events how many it delivered.
func classifyWatchEnd(err error, lasted time.Duration, events int) watchEnd {
	switch {
	case err == nil:
		return endedOnTime
	case object.IsGone(err) || isTooLargeRV(err) || errors.Is(err, listwatch.ErrFrameTooLarge):
		return mustRelist
	case lasted >= healthyStream || events > 0:
		return brokeAfterWorking
	}
	return failedEarly
}

// healthyStream is how long a watch that delivered no event must have lasted for its
// failure to be retried at once rather than after a backoff, and for a clean end not to
// be suspicious (errShortWatch): client-go's rule too.
const healthyStream = time.Second

// afterWatch is the state after a watch ended as w says.
func (r *Reflector[T]) afterWatch(w watchResult, bo *backoffState) state {
	if w.resharded {
		// However it ended (SetShard closed it, most likely), the store must hold the
		// new shard's whole state before any watch goes on.
		return r.settle()
	}
	switch classifyWatchEnd(w.err, w.lasted, w.events) {
	case endedOnTime:
		r.log.Debug("watch ended cleanly, resuming", "lasted", w.lasted, "events", w.events)
		return watching[T]{}
	case mustRelist:
		r.fail(w.err)
		r.opts.Metrics.Relist()
		r.update(func(st *Status) { st.Relists++ })
		r.log.Info("relisting", "reason", w.err, "resourceVersion", r.relistRV())
		return r.fetchWhole(listing{relist: true})
	case brokeAfterWorking:
		r.fail(w.err)
		bo.reset()
		r.log.Info("watch broke, resuming at once", "err", w.err, "lasted", w.lasted, "events", w.events)
		return watching[T]{}
	}
	r.fail(w.err)
	return backingOff{err: w.err, then: watching[T]{}}
}

// backOff waits out the backoff after err (or longer, when the server asked for longer:
// a 429 or 5xx whose Retry-After outlasted the client's own retries). It returns false
// if ctx ended first.
func (r *Reflector[T]) backOff(ctx context.Context, bo *backoffState, err error) bool {
	d := bo.delay(r.clock.Now())
	if hint, ok := object.RetryAfter(err); ok && hint > d {
		d = hint
	}
	r.log.Warn("backing off", "err", err, "wait", d)
	r.update(func(st *Status) { st.State, st.Backoff = StateBackingOff, d })
	defer r.update(func(st *Status) { st.Backoff = 0 })
	done := make(chan struct{})
	t := r.clock.AfterFunc(d, func() { close(done) })
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}
