package reflector

import (
	"context"
	"errors"
	"time"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// Run lists and watches until ctx ends.
func (r *Reflector[T]) Run(ctx context.Context) {
	defer r.setState(StateStopped)
	bo := backoffState{cfg: r.opts.Backoff}
	needList, relist := true, false
	var stream listwatch.Stream[T] // a streaming list hands its open stream to the watch
	for ctx.Err() == nil {
		if needList {
			var err error
			stream, err = r.initialState(ctx, relist)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				r.fail(err)
				if !r.backOff(ctx, &bo, err) {
					return
				}
				continue
			}
			needList = false
		}
		lasted, events, err := r.watch(ctx, stream)
		stream = nil
		if ctx.Err() != nil {
			return
		}
		switch afterWatch(err, lasted, events) {
		case resume:
			r.log.Debug("watch ended cleanly, resuming", "lasted", lasted, "events", events)
		case relistNow:
			r.fail(err)
			r.opts.Metrics.Relist()
			r.update(func(st *Status) { st.Relists++ })
			r.log.Info("relisting", "reason", err, "resourceVersion", r.LastSyncResourceVersion())
			needList, relist = true, true
		case resumeNow:
			r.fail(err)
			bo.reset()
			r.log.Info("watch broke, resuming at once", "err", err, "lasted", lasted, "events", events)
		case backOff:
			r.fail(err)
			if !r.backOff(ctx, &bo, err) {
				return
			}
		}
	}
}

// initialState lists (or streams the list), and returns the open stream of a streaming
// list, which the watch continues.
func (r *Reflector[T]) initialState(ctx context.Context, relist bool) (listwatch.Stream[T], error) {
	if r.opts.StreamingList && !r.Status().StreamingFallback {
		return r.streamList(ctx)
	}
	return nil, r.list(ctx, relist)
}

// next is what the loop does once a watch has ended.
type next int

const (
	// resume opens the next watch at once from the last resourceVersion: the server
	// ended the stream on time.
	resume next = iota
	// relistNow lists again: the resourceVersion is compacted away, or an event over
	// MaxFrameSize was lost (resuming from before it would meet it again). The list
	// fails and backs off while the object stays too large.
	relistNow
	// resumeNow resumes at once and starts any backoff over: a stream that worked (for
	// a while, or delivered events) and broke (a reset connection, a dead peer noticed
	// by a ping) is most likely a passing fault. A server that is really down fails the
	// next attempt quickly, and that one backs off.
	resumeNow
	// backOff waits, then resumes.
	backOff
)

// afterWatch classifies how a watch ended: err is nil for a clean end, lasted is how
// long the stream was open and events how many it delivered.
func afterWatch(err error, lasted time.Duration, events int) next {
	switch {
	case err == nil:
		return resume
	case object.IsGone(err) || isTooLargeRV(err) || errors.Is(err, listwatch.ErrFrameTooLarge):
		return relistNow
	case lasted >= healthyStream || events > 0:
		return resumeNow
	}
	return backOff
}

// healthyStream is how long a watch that delivered no event must have lasted for its
// failure to be retried at once rather than after a backoff: the same second after which
// a clean end is not suspicious (errShortWatch), and client-go's rule too.
const healthyStream = time.Second

// backOff waits out the backoff after err (or longer, when the server asked for longer:
// a 429 or 5xx whose Retry-After outlasted the client's own retries). It returns false
// if ctx ended first.
func (r *Reflector[T]) backOff(ctx context.Context, bo *backoffState, err error) bool {
	d := bo.next(r.clock.Now())
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
