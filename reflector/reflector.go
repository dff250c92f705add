package reflector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/kinformer/kinformer/internal/clock"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/trace"
)

// ListerWatcher is the source of a reflector; *listwatch.Resource satisfies it.
type ListerWatcher[T object.Object] interface {
	List(ctx context.Context, opts listwatch.ListOptions) (*object.List[T], error)
	Watch(ctx context.Context, opts listwatch.WatchOptions) (*listwatch.Watch[T], error)
}

// Store receives what the reflector learns; *deltafifo.FIFO satisfies it.
type Store[T any] interface {
	Add(obj T)
	Update(obj T)
	Delete(obj T)
	Replace(objs []T, resourceVersion string)
}

// Reuser is an optional Store method. During a relist the reflector offers it each
// listed object; it returns the object it already holds in the same state (same key and
// resourceVersion), or obj. Unchanged objects are then not held twice while the rest
// of the list arrives, which keeps a relist's peak memory near the store's size.
type Reuser[T any] interface {
	Reuse(obj T) T
}

// Metrics receives the reflector's counts; nil records nothing.
type Metrics interface {
	List()
	Watch()
	Relist()
	Event(t listwatch.EventType)
	ResourceVersion(rv string)
}

// Options configure a reflector. Zero values pick the defaults in brackets.
type Options struct {
	// Name identifies the reflector in errors and metrics.
	Name string
	// LabelSelector and FieldSelector restrict what is listed and watched.
	LabelSelector, FieldSelector string
	// PageSize is the list page size [500].
	PageSize int64
	// WatchTimeoutMin/Max bound the random timeoutSeconds asked of each watch
	// [5 min, 10 min]; spreading them keeps many reflectors from re-watching together.
	WatchTimeoutMin, WatchTimeoutMax time.Duration
	// IdleMargin is added to the watch timeout to form the idle deadline after which a
	// silent stream is presumed dead [30 s]; bookmarks count as activity.
	IdleMargin time.Duration
	// Backoff is the wait after failures (see Backoff).
	Backoff Backoff
	// StreamingList fetches the initial state with a streaming list (sendInitialEvents),
	// falling back to list+watch for good when the server refuses it, sends anything but
	// ADDED before the initial-events-end bookmark (it ignored the parameter), or lets
	// InitialEventsTimeout [1 min] pass without that bookmark.
	StreamingList        bool
	InitialEventsTimeout time.Duration
	// WebSocket carries watches over websockets.
	WebSocket bool
	Metrics   Metrics
	Clock     clock.Clock
	// Tracer follows sampled watch events (see package trace): the reflector hands it to
	// its watches and marks trace.Queued as it hands an event to the store. nil is off.
	Tracer trace.Tracer
	// MaxFrameSize bounds one object, in bytes, as a watch event or in a list page
	// [listwatch.DefaultMaxFrameSize]: it is what a broken or hostile server can make the
	// client hold beyond the cache. A larger object fails with an error wrapping
	// listwatch.ErrFrameTooLarge in Status, and the reflector relists (the event is lost,
	// a resumed watch would meet it again) until the object fits.
	MaxFrameSize int
}

// State is where the reflector's loop is.
type State string

// The states. The loop moves Listing → Watching, back to Watching when a stream ends
// cleanly, to Listing (a relist) on 410, and to BackingOff on any other failure, after
// which it resumes where it failed.
const (
	StateStarting   State = "Starting"
	StateListing    State = "Listing"
	StateStreaming  State = "StreamingList"
	StateWatching   State = "Watching"
	StateBackingOff State = "BackingOff"
	StateStopped    State = "Stopped"
)

// Status is a snapshot of the reflector.
type Status struct {
	State State
	// Listed is true once a list (or streaming list) has been handed to the store.
	Listed bool
	// LastSyncResourceVersion is the newest resourceVersion seen (list, event or bookmark).
	LastSyncResourceVersion string
	// LastError is the most recent failure, cleared by the next successful list or event:
	// it says why a cache is not synced (403 on list, resource not found, ...).
	LastError error
	// StreamingFallback is set when the streaming list was given up for list+watch, for
	// the reason in StreamingFallbackReason (kept after LastError moves on).
	StreamingFallback       bool
	StreamingFallbackReason error
}

// Reflector keeps a Store in step with the apiserver by list and watch.
type Reflector[T object.Object] struct {
	lw    ListerWatcher[T]
	store Store[T]
	opts  Options
	clock clock.Clock

	mu     sync.Mutex
	status Status
	notify func(Status) // called on every status change, outside mu
}

// New returns a reflector from lw into store.
func New[T object.Object](lw ListerWatcher[T], store Store[T], opts Options) *Reflector[T] {
	if opts.PageSize == 0 {
		opts.PageSize = 500
	}
	if opts.WatchTimeoutMin == 0 {
		opts.WatchTimeoutMin = 5 * time.Minute
	}
	if opts.WatchTimeoutMax < opts.WatchTimeoutMin {
		opts.WatchTimeoutMax = 2 * opts.WatchTimeoutMin
	}
	if opts.IdleMargin == 0 {
		opts.IdleMargin = 30 * time.Second
	}
	if opts.InitialEventsTimeout == 0 {
		opts.InitialEventsTimeout = time.Minute
	}
	opts.Backoff = opts.Backoff.withDefaults()
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	return &Reflector[T]{lw: lw, store: store, opts: opts, clock: opts.Clock, status: Status{State: StateStarting}}
}

// OnStatus registers a callback for status changes (one; set it before Run).
func (r *Reflector[T]) OnStatus(f func(Status)) { r.notify = f }

// Status returns the current status.
func (r *Reflector[T]) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

// LastSyncResourceVersion returns the newest resourceVersion the reflector has seen.
func (r *Reflector[T]) LastSyncResourceVersion() string { return r.Status().LastSyncResourceVersion }

func (r *Reflector[T]) update(f func(*Status)) {
	r.mu.Lock()
	f(&r.status)
	s := r.status
	r.mu.Unlock()
	if r.notify != nil {
		r.notify(s)
	}
}

func (r *Reflector[T]) setState(s State) { r.update(func(st *Status) { st.State = s }) }

func (r *Reflector[T]) fail(err error) {
	r.update(func(st *Status) { st.LastError = fmt.Errorf("%s: %w", r.opts.Name, err) })
}

// Run lists and watches until ctx ends.
func (r *Reflector[T]) Run(ctx context.Context) {
	defer r.setState(StateStopped)
	bo := backoffState{cfg: r.opts.Backoff}
	needList, relist := true, false
	var stream *listwatch.Watch[T] // a streaming list hands its open stream to the watch
	for ctx.Err() == nil {
		if needList {
			var err error
			if r.opts.StreamingList && !r.Status().StreamingFallback {
				stream, err = r.streamList(ctx)
			} else {
				err = r.list(ctx, relist)
			}
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				r.fail(err)
				if !r.sleep(ctx, r.delay(&bo, err)) {
					return
				}
				continue
			}
			needList = false
		}
		lasted, events, err := r.watch(ctx, stream)
		stream = nil
		switch {
		case ctx.Err() != nil:
			return
		case err == nil: // the server ended the stream on time: resume from the last RV
			continue
		case object.IsGone(err) || isTooLargeRV(err) || errors.Is(err, listwatch.ErrFrameTooLarge):
			// The resourceVersion is compacted away, or an event over MaxFrameSize was
			// lost (resuming from before it would meet it again): only a fresh list can
			// catch up. The list fails and backs off while the object stays too large.
			r.fail(err)
			if r.opts.Metrics != nil {
				r.opts.Metrics.Relist()
			}
			needList, relist = true, true
			continue
		case lasted >= healthyStream || events > 0:
			// A stream that worked (for a while, or delivered events) and broke (a reset
			// connection, a dead peer noticed by a ping) is most likely a passing fault:
			// resume at once, and start any backoff over. A server that is really down
			// fails the next attempt quickly, and that one backs off.
			r.fail(err)
			bo.reset()
			continue
		}
		r.fail(err)
		if !r.sleep(ctx, r.delay(&bo, err)) {
			return
		}
	}
}

// healthyStream is how long a watch that delivered no event must have lasted for its
// failure to be retried at once rather than after a backoff: the same second after which
// a clean end is not suspicious (errShortWatch), and client-go's rule too.
const healthyStream = time.Second

// delay is the wait after err: the backoff, or longer when the server asked for longer
// (a 429 or 5xx whose Retry-After outlasted the client's own retries).
func (r *Reflector[T]) delay(bo *backoffState, err error) time.Duration {
	d := bo.next(r.clock.Now())
	if hint, ok := object.RetryAfter(err); ok && hint > d {
		d = hint
	}
	return d
}

func (r *Reflector[T]) sleep(ctx context.Context, d time.Duration) bool {
	r.setState(StateBackingOff)
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

// list fetches the full state in pages and hands it to the store. The first list asks
// for resourceVersion "0" (any state, served from the apiserver's watch cache); a relist
// asks for at least the last seen one, and for the newest ("", a consistent read) when
// that is no longer available.
func (r *Reflector[T]) list(ctx context.Context, relist bool) error {
	r.setState(StateListing)
	rv := "0"
	if relist {
		rv = r.LastSyncResourceVersion()
	}
	items, listRV, err := r.listPages(ctx, rv)
	if err != nil && (object.IsGone(err) || isTooLargeRV(err)) && rv != "" {
		items, listRV, err = r.listPages(ctx, "")
	}
	if err != nil {
		return err
	}
	r.store.Replace(items, listRV)
	r.recordRV(listRV)
	r.update(func(st *Status) { st.Listed, st.LastError = true, nil })
	return nil
}

// listPages follows continue tokens. A token that expires mid-way (410) restarts the
// list once, unpaginated, at the newest state.
func (r *Reflector[T]) listPages(ctx context.Context, rv string) ([]T, string, error) {
	if r.opts.Metrics != nil {
		r.opts.Metrics.List()
	}
	opts := listwatch.ListOptions{LabelSelector: r.opts.LabelSelector, FieldSelector: r.opts.FieldSelector,
		ResourceVersion: rv, Limit: r.opts.PageSize, MaxFrameSize: r.opts.MaxFrameSize}
	if rv != "" && rv != "0" {
		opts.ResourceVersionMatch = "NotOlderThan"
	}
	var items []T
	listRV := ""
	for {
		page, err := r.lw.List(ctx, opts)
		if err != nil {
			if opts.Continue != "" && object.IsGone(err) {
				full := listwatch.ListOptions{LabelSelector: r.opts.LabelSelector, FieldSelector: r.opts.FieldSelector,
					MaxFrameSize: r.opts.MaxFrameSize}
				page, err = r.lw.List(ctx, full)
				if err != nil {
					return nil, "", err
				}
				return page.Items, page.ResourceVersion, nil
			}
			return nil, "", err
		}
		if listRV == "" {
			listRV = page.ResourceVersion
		}
		if reuser, ok := r.store.(Reuser[T]); ok {
			for i, obj := range page.Items {
				page.Items[i] = reuser.Reuse(obj)
			}
		}
		items = append(items, page.Items...)
		if page.Continue == "" {
			return items, listRV, nil
		}
		opts.Continue, opts.ResourceVersion, opts.ResourceVersionMatch = page.Continue, "", ""
	}
}

func (r *Reflector[T]) watchOptions() listwatch.WatchOptions {
	span := r.opts.WatchTimeoutMax - r.opts.WatchTimeoutMin
	timeout := r.opts.WatchTimeoutMin + time.Duration(rand.Int64N(int64(span)+1))
	return listwatch.WatchOptions{
		LabelSelector: r.opts.LabelSelector, FieldSelector: r.opts.FieldSelector,
		AllowBookmarks: true, TimeoutSeconds: int64(timeout.Seconds()),
		IdleTimeout: timeout + r.opts.IdleMargin, WebSocket: r.opts.WebSocket, Tracer: r.opts.Tracer,
		MaxFrameSize: r.opts.MaxFrameSize,
	}
}

// errShortWatch is a watch that ended within a second without a single event: a server
// or proxy refusing watches quickly must not make the reflector hot-loop.
var errShortWatch = errors.New("watch closed within a second without any event")

// watch streams events into the store until the stream ends, and returns how long the
// stream was open and how many events it delivered. A nil error means the server ended
// it cleanly after doing work; anything else is a failure for Run to classify.
func (r *Reflector[T]) watch(ctx context.Context, w *listwatch.Watch[T]) (time.Duration, int, error) {
	if w == nil {
		opts := r.watchOptions()
		opts.ResourceVersion = r.LastSyncResourceVersion()
		if r.opts.Metrics != nil {
			r.opts.Metrics.Watch()
		}
		var err error
		w, err = r.lw.Watch(ctx, opts)
		if err != nil {
			return 0, 0, err
		}
	}
	defer w.Close()
	r.setState(StateWatching)
	start, events := r.clock.Now(), 0
	for {
		ev, err := w.Next()
		if err != nil {
			lasted := r.clock.Now().Sub(start)
			if errors.Is(err, io.EOF) {
				if events == 0 && lasted < time.Second {
					return lasted, events, errShortWatch
				}
				return lasted, events, nil
			}
			return lasted, events, err
		}
		events++
		r.apply(ev)
	}
}

func (r *Reflector[T]) apply(ev listwatch.Event[T]) {
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
	}
	if r.opts.Metrics != nil {
		r.opts.Metrics.Event(ev.Type)
	}
	r.recordRV(ev.Object.Meta().ResourceVersion)
}

func (r *Reflector[T]) recordRV(rv string) {
	if rv == "" {
		return
	}
	r.update(func(st *Status) { st.LastSyncResourceVersion, st.LastError = rv, nil })
	if r.opts.Metrics != nil {
		r.opts.Metrics.ResourceVersion(rv)
	}
}

// errNoInitialEventsEnd is a streaming list whose end bookmark did not come in time.
var errNoInitialEventsEnd = errors.New("streaming list: no initial-events-end bookmark in time")

// streamList fetches the initial state as a stream of ADDED events ending with the
// initial-events-end bookmark, hands it to the store in one Replace, and returns the
// still-open stream for the watch to continue. Any sign that the server is not doing a
// streaming list switches the reflector to list+watch for good: a refusal, an event other
// than ADDED before the bookmark, or no bookmark within InitialEventsTimeout.
func (r *Reflector[T]) streamList(ctx context.Context) (*listwatch.Watch[T], error) {
	r.setState(StateStreaming)
	opts := r.watchOptions()
	opts.SendInitialEvents, opts.ResourceVersionMatch = true, "NotOlderThan"
	if r.opts.Metrics != nil {
		r.opts.Metrics.Watch()
	}
	w, err := r.lw.Watch(ctx, opts)
	if err != nil {
		if object.IsInvalid(err) || object.CodeOf(err) == http.StatusBadRequest {
			r.fallBack(err)
			return nil, r.list(ctx, false)
		}
		return nil, err
	}
	var timedOut bool
	var mu sync.Mutex
	timer := r.clock.AfterFunc(r.opts.InitialEventsTimeout, func() {
		mu.Lock()
		timedOut = true
		mu.Unlock()
		w.Close()
	})
	var items []T
	for {
		ev, err := w.Next()
		if err != nil {
			timer.Stop()
			w.Close()
			mu.Lock()
			late := timedOut
			mu.Unlock()
			if late {
				r.fallBack(errNoInitialEventsEnd)
				return nil, r.list(ctx, false)
			}
			return nil, err
		}
		switch ev.Type {
		case listwatch.Added:
			items = append(items, ev.Object)
		case listwatch.Bookmark:
			if ev.Object.Meta().Annotations[listwatch.InitialEventsEndAnnotation] != "true" {
				continue
			}
			timer.Stop()
			rv := ev.Object.Meta().ResourceVersion
			r.store.Replace(items, rv)
			r.recordRV(rv)
			r.update(func(st *Status) { st.Listed, st.LastError = true, nil })
			return w, nil
		default:
			// A server that does not know sendInitialEvents answers with a plain watch:
			// its ADDED events are not a complete state and the end bookmark never
			// comes. Retrying would do the same forever.
			timer.Stop()
			w.Close()
			r.fallBack(fmt.Errorf("server sent %s before the initial-events-end bookmark: it does not support streaming lists", ev.Type))
			return nil, r.list(ctx, false)
		}
	}
}

func (r *Reflector[T]) fallBack(why error) {
	err := fmt.Errorf("%s: streaming list given up for list+watch: %w", r.opts.Name, why)
	r.update(func(st *Status) {
		st.StreamingFallback, st.StreamingFallbackReason, st.LastError = true, err, err
	})
}

// isTooLargeRV reports the apiserver's "Too large resource version" (the RV is newer than
// its watch cache), which like 410 asks for a fresh list.
func isTooLargeRV(err error) bool {
	se, ok := object.AsStatus(err)
	if !ok {
		return false
	}
	if d := se.Status.Details; d != nil {
		for _, c := range d.Causes {
			if c.Type == "ResourceVersionTooLarge" {
				return true
			}
		}
	}
	return strings.Contains(se.Status.Message, "Too large resource version")
}
