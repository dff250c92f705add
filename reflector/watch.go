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

// watchOptions are the options of a watch in the shard sh.
func (r *Reflector[T]) watchOptions(sh *shardState) listwatch.WatchOptions {
	span := r.opts.WatchTimeoutMax - r.opts.WatchTimeoutMin
	timeout := r.opts.WatchTimeoutMin + time.Duration(rand.Int64N(int64(span)+1))
	return listwatch.WatchOptions{
		LabelSelector: r.opts.LabelSelector, FieldSelector: r.opts.FieldSelector, Shard: sh.sel,
		AllowBookmarks: true, TimeoutSeconds: int64(timeout.Seconds()),
		IdleTimeout: timeout + r.opts.IdleMargin, WebSocket: r.opts.WebSocket, Tracer: r.opts.Tracer,
		MaxFrameSize: r.opts.MaxFrameSize, Clock: r.clock, Decode: r.opts.Decode,
	}
}

// errShortWatch is a watch that ended within healthyStream without a single event: a
// server or proxy refusing watches quickly must not make the reflector hot-loop.
var errShortWatch = fmt.Errorf("watch closed within %v without any event", healthyStream)

// watchResult is how a watch ended: its error (nil for a clean end after doing work),
// how long the stream was open and how many events it delivered, and whether the shard
// had changed by then (SetShard ends the stream for that).
type watchResult struct {
	err       error
	lasted    time.Duration
	events    int
	resharded bool
}

// watch streams events into the store until the stream ends. w is a stream already open
// (a streaming list's, tracked), or nil to open one from the last resourceVersion; sh is
// the shard it asks for, that of the whole state in the store.
func (r *Reflector[T]) watch(ctx context.Context, w listwatch.Stream[T], sh *shardState) watchResult {
	if w == nil {
		opts := r.watchOptions(sh)
		opts.ResourceVersion = r.LastSyncResourceVersion()
		r.opts.Metrics.Watch()
		var err error
		w, err = r.lw.Watch(ctx, opts)
		if err != nil {
			return watchResult{err: err, resharded: r.changed(sh)}
		}
		if !r.track(w, sh) {
			w.Close()
			return watchResult{resharded: true}
		}
	}
	defer r.untrack()
	defer w.Close()
	// A stream need not watch ctx itself (an embedder's may not): closing it on ctx's
	// end is what unblocks Next, as the Stream contract promises.
	defer context.AfterFunc(ctx, w.Close)()
	r.setState(StateWatching)
	batcher, _ := r.store.(Batcher)
	buffered, _ := w.(Buffered)
	if batcher == nil || buffered == nil {
		batcher, buffered = nil, nil
	}
	held := 0 // events handed to the store since it was held
	defer func() {
		if held > 0 {
			batcher.Release()
		}
	}()
	start, events := r.clock.Now(), 0
	for {
		ev, err := w.Next()
		if err != nil {
			res := watchResult{err: err, lasted: r.clock.Now().Sub(start), events: events, resharded: r.changed(sh)}
			if errors.Is(err, io.EOF) {
				res.err = nil
				if events == 0 && res.lasted < healthyStream {
					res.err = errShortWatch
				}
			}
			return res
		}
		events++
		more := buffered != nil && buffered.Buffered()
		if more && held == 0 {
			batcher.Hold()
		}
		r.apply(ev, sh)
		if more || held > 0 {
			held++
		}
		if held > 0 && (!more || held >= maxHeld) {
			batcher.Release()
			held = 0
		}
	}
}

// apply hands a watch event of a stream opened with sh to the store, unless its object
// is outside the current shard, which is sh unless SetShard has changed it since (the
// check and the store call are one step under storeMu), or in a part listed fresh that
// already reflects the event (see freshPart).
func (r *Reflector[T]) apply(ev listwatch.Event[T], sh *shardState) {
	rv := ev.Object.Meta().ResourceVersion
	defer r.passed(rv)
	if ev.Type == listwatch.Bookmark {
		if b, ok := r.store.(Bookmarker); ok {
			b.Bookmark(rv)
		}
	} else {
		r.storeMu.Lock()
		if !inShard(r.shard.Load(), ev.Object) || r.known(ev.Object) {
			r.storeMu.Unlock()
			r.dropEvent(ev, sh)
			return
		}
		if r.opts.Tracer != nil {
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
		}
		r.storeMu.Unlock()
	}
	r.opts.Metrics.Event(ev.Type)
	r.recordRV(rv)
}

func (r *Reflector[T]) recordRV(rv string) {
	if rv == "" {
		return
	}
	r.update(func(st *Status) { st.LastSyncResourceVersion, st.LastError = rv, nil })
	r.opts.Metrics.ResourceVersion(rv)
}
