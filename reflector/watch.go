package reflector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/trace"
)

func (r *Reflector[T]) watchOptions() listwatch.WatchOptions {
	span := r.opts.WatchTimeoutMax - r.opts.WatchTimeoutMin
	timeout := r.opts.WatchTimeoutMin + time.Duration(rand.Int64N(int64(span)+1))
	return listwatch.WatchOptions{
		LabelSelector: r.opts.LabelSelector, FieldSelector: r.opts.FieldSelector, Shard: r.opts.Shard,
		AllowBookmarks: true, TimeoutSeconds: int64(timeout.Seconds()),
		IdleTimeout: timeout + r.opts.IdleMargin, WebSocket: r.opts.WebSocket, Tracer: r.opts.Tracer,
		MaxFrameSize: r.opts.MaxFrameSize, Clock: r.clock, Decode: r.opts.Decode,
	}
}

// errShortWatch is a watch that ended within healthyStream without a single event: a
// server or proxy refusing watches quickly must not make the reflector hot-loop.
var errShortWatch = fmt.Errorf("watch closed within %v without any event", healthyStream)

// watchResult is how a watch ended: its error (nil for a clean end after doing work),
// how long the stream was open and how many events it delivered.
type watchResult struct {
	err    error
	lasted time.Duration
	events int
}

// watch streams events into the store until the stream ends. w is a stream already open
// (a streaming list's), or nil to open one from the last resourceVersion.
func (r *Reflector[T]) watch(ctx context.Context, w listwatch.Stream[T]) watchResult {
	if w == nil {
		opts := r.watchOptions()
		opts.ResourceVersion = r.LastSyncResourceVersion()
		r.opts.Metrics.Watch()
		var err error
		w, err = r.lw.Watch(ctx, opts)
		if err != nil {
			return watchResult{err: err}
		}
	}
	defer w.Close()
	// A stream need not watch ctx itself (an embedder's may not): closing it on ctx's
	// end is what unblocks Next, as the Stream contract promises.
	defer context.AfterFunc(ctx, w.Close)()
	r.setState(StateWatching)
	start, events := r.clock.Now(), 0
	for {
		ev, err := w.Next()
		if err != nil {
			res := watchResult{err: err, lasted: r.clock.Now().Sub(start), events: events}
			if errors.Is(err, io.EOF) {
				res.err = nil
				if events == 0 && res.lasted < healthyStream {
					res.err = errShortWatch
				}
			}
			return res
		}
		events++
		r.apply(ev)
	}
}

func (r *Reflector[T]) apply(ev listwatch.Event[T]) {
	if ev.Type != listwatch.Bookmark && !r.inShard(ev.Object) {
		r.dropEvent(ev)
		return
	}
	if r.opts.Tracer != nil && ev.Type != listwatch.Bookmark {
		// Before the store call, not after: once queued, the event may be popped and
		// marked by the informer before this goroutine runs again.
		r.opts.Tracer.Mark(trace.Queued, ev.Object)
	}
	switch ev.Type {
	case listwatch.Added:
		r.store.Add(ev.Object)
	case listwatch.Modified:
		r.store.Update(ev.Object)
	case listwatch.Deleted:
		r.store.Delete(ev.Object)
	case listwatch.Bookmark:
		if b, ok := r.store.(Bookmarker); ok {
			b.Bookmark(ev.Object.Meta().ResourceVersion)
		}
	}
	r.opts.Metrics.Event(ev.Type)
	r.recordRV(ev.Object.Meta().ResourceVersion)
}

func (r *Reflector[T]) recordRV(rv string) {
	if rv == "" {
		return
	}
	r.update(func(st *Status) { st.LastSyncResourceVersion, st.LastError = rv, nil })
	r.opts.Metrics.ResourceVersion(rv)
}
