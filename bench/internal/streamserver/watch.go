package streamserver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Event types, as indexes into eventPrefix.
const (
	added = iota
	modified
	deleted
)

var eventPrefix = [...]string{
	added:    `{"type":"ADDED","object":`,
	modified: `{"type":"MODIFIED","object":`,
	deleted:  `{"type":"DELETED","object":`,
}

const eventSuffix = "}\n"

// EventAt is the k-th change (k from 0) after the list, which has resourceVersion
// R0+1+k, on n objects: a MODIFIED of object k%n, except that every 10th change deletes
// object k%n (k%10 == 9) and the next one adds it back, so the cache keeps n objects.
// It returns the type ("ADDED", "MODIFIED" or "DELETED") and the object's index in list
// order.
func EventAt(k int64, n int) (typ string, index int) {
	t, i := eventAt(k, n)
	return [...]string{"ADDED", "MODIFIED", "DELETED"}[t], i
}

func eventAt(k int64, n int) (typ, index int) {
	switch {
	case k%10 == 9:
		return deleted, int(k % int64(n))
	case k%10 == 0 && k > 0:
		return added, int((k - 1) % int64(n))
	}
	return modified, int(k % int64(n))
}

// counter counts the bytes the buffered writer hands to the response.
type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// watcher writes one watch stream. Its buffers are reused for every event, so the hot
// path (emit) allocates nothing and encodes nothing: it copies the pre-encoded pieces of
// the object around the resourceVersion digits and the send-time stamp.
type watcher struct {
	s        *Server
	bw       *bufio.Writer
	cw       counter
	flush    func() error // pushes the response's own buffers to the socket
	items    []item
	lazy     *lazyPods // the lazy mode's pods, instead of items
	rlazy    *realLazy // the realistic profile's lazy pods, instead of items
	n        int       // len(items), or the lazy pods followed (all or none)
	vals     podValues // the lazy mode's fill
	rfill    *rFill    // the realistic lazy mode's, made at the first event
	filter   *filter   // nil: every object's events
	metaOnly bool
	kind     string // for bookmarks
	// pb writes the events in protobuf (see protobuf.go), each frame's head built in
	// pbHead; err is why a protobuf watch cannot go on, returned at the next check.
	pb     bool
	pbHead [80]byte
	err    error

	rv     [20]byte
	stamp  [stampWidth]byte
	events int64 // written since the last flush
	total  int64
	sentN  int64 // bytes already added to the server's counter
}

// emit writes one event of object it at resourceVersion rv (its own when rv is nil).
func (w *watcher) emit(typ int, it *item, rv []byte) {
	if rv == nil {
		rv = it.rvs
	}
	if w.pb {
		w.emitProtobuf(typ, it, rv)
		return
	}
	putStamp(&w.stamp, time.Now().UnixNano())
	w.bw.WriteString(eventPrefix[typ])
	if w.metaOnly {
		it.meta.write(w.bw, rv, w.stamp[:])
	} else {
		it.full.write(w.bw, rv, w.stamp[:])
	}
	w.bw.WriteString(eventSuffix)
	w.events++
}

// change writes the k-th change after the list, unless the watch's filter leaves its
// object out.
func (w *watcher) change(k int64) {
	if w.rlazy != nil {
		typ, i := eventAt(k, w.n)
		w.rlazy.emit(w, typ, i, k, strconv.AppendInt(w.rv[:0], w.s.r0+1+k, 10))
		return
	}
	if w.lazy != nil {
		typ, p := eventAt(k, w.n)
		w.emitLazy(typ, p, strconv.AppendInt(w.rv[:0], w.s.r0+1+k, 10))
		return
	}
	typ, i := eventAt(k, len(w.items))
	it := &w.items[i]
	if w.filter != nil && !w.filter.keeps(it) {
		return
	}
	if it.kubelet != nil { // a realistic pod: the change is the kubelet's (realistic_patch.go)
		w.emitKubelet(typ, it, strconv.AppendInt(w.rv[:0], w.s.r0+1+k, 10), kubeletVariant(k, len(w.items)))
		return
	}
	w.emit(typ, it, strconv.AppendInt(w.rv[:0], w.s.r0+1+k, 10))
}

// emitLazy writes one event of the lazy pod at position p at resourceVersion rv (its
// own when rv is nil), unless the watch's filter leaves it out.
func (w *watcher) emitLazy(typ int, p int, rv []byte) {
	ns, i := w.lazy.at(p)
	if w.filter != nil && !w.lazy.keeps(w.filter, ns, i) {
		return
	}
	putStamp(&w.stamp, time.Now().UnixNano())
	w.lazy.fill(&w.vals, ns, i, rv, w.stamp[:])
	w.bw.WriteString(eventPrefix[typ])
	w.lazy.write(w.bw, &w.vals, i, w.metaOnly)
	w.bw.WriteString(eventSuffix)
	w.events++
}

func (w *watcher) bookmark(rv int64, initialEnd bool) {
	if w.pb {
		w.bookmarkProtobuf(rv, initialEnd)
		return
	}
	kind, apiVersion := w.kind, "v1"
	if w.metaOnly {
		kind, apiVersion = "PartialObjectMetadata", "meta.k8s.io/v1"
	}
	w.bw.WriteString(`{"type":"BOOKMARK","object":{"kind":"` + kind + `","apiVersion":"` + apiVersion + `","metadata":{"resourceVersion":"`)
	w.bw.Write(strconv.AppendInt(w.rv[:0], rv, 10))
	if initialEnd {
		w.bw.WriteString(`","annotations":{"k8s.io/initial-events-end":"true"}}}}` + "\n")
	} else {
		w.bw.WriteString(`"}}}` + "\n")
	}
	w.events++
}

// push flushes the buffer to the connection and adds to the server's counters.
func (w *watcher) push() error {
	err := w.bw.Flush()
	if err == nil && w.flush != nil {
		err = w.flush()
	}
	w.s.events.Add(w.events)
	w.total += w.events
	w.events = 0
	w.s.bytes.Add(w.cw.n - w.sentN)
	w.sentN = w.cw.n
	return err
}

// watchParams are the query parameters of a watch.
type watchParams struct {
	from        int64 // the first change sent is from+1
	initial     bool  // ADDED for every object first
	initialEnd  bool  // then the initial-events-end bookmark
	bookmarks   bool
	timeout     time.Duration
	description string
}

func (s *Server) watchParams(r *http.Request) (watchParams, bool) {
	q := r.URL.Query()
	p := watchParams{from: s.r0, bookmarks: q.Get("allowWatchBookmarks") == "true" || q.Get("allowWatchBookmarks") == "1"}
	rv := q.Get("resourceVersion")
	if rv != "" {
		n, err := strconv.ParseInt(rv, 10, 64)
		if err != nil || n < 0 {
			return p, false
		}
		// Nothing changed between the objects' creation and R0: a watch from an older
		// revision starts at R0 (loosely: it does not replay the creations).
		p.from = max(n, s.r0)
	}
	switch q.Get("sendInitialEvents") {
	case "true":
		p.initial, p.initialEnd = true, true
	case "false":
	default: // the legacy semantics: "" and "0" send the current state as ADDED first
		p.initial = rv == "" || rv == "0"
	}
	if t, err := strconv.Atoi(q.Get("timeoutSeconds")); err == nil && t > 0 {
		p.timeout = time.Duration(t) * time.Second
	}
	p.description = r.URL.RequestURI()
	if sel := q.Get("shardSelector"); sel != "" { // kilobytes of ranges: say how many
		rest := r.URL.Query()
		rest.Del("shardSelector")
		p.description = fmt.Sprintf("%s?%s with a shardSelector (%d shardRange terms)", r.URL.Path, rest.Encode(), strings.Count(sel, "shardRange"))
	}
	return p, true
}

// serveWatch streams w's changes, in JSON or with w.pb in protobuf: optionally every
// object as ADDED (and the initial-events-end bookmark), then the changes after p.from,
// at opts.Rate or full speed, until opts.WatchEvents, then a BOOKMARK a second until the
// client leaves or timeoutSeconds passes. With a filter (a namespace of several, a
// shard) only the selected objects' initial events and changes are sent, out of the
// same sequence of changes and at the same times: opts.WatchEvents and opts.Rate count
// every object's. w comes with what to follow (items or lazy pods, n, filter, metaOnly,
// kind, pb); serveWatch sets the rest.
func (s *Server) serveWatch(rw http.ResponseWriter, r *http.Request, w *watcher) {
	p, ok := s.watchParams(r)
	if !ok {
		writeStatus(rw, http.StatusBadRequest, "BadRequest", "invalid resourceVersion "+strconv.Quote(r.URL.Query().Get("resourceVersion")))
		return
	}
	s.watches.Add(1)
	ctx := r.Context()
	if p.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.timeout)
		defer cancel()
	}
	if w.pb {
		rw.Header().Set("Content-Type", protobufWatchType)
	} else {
		rw.Header().Set("Content-Type", "application/json")
	}
	rw.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(rw)
	w.s, w.cw, w.flush = s, counter{w: rw}, rc.Flush
	w.bw = writerPool.Get().(*bufio.Writer)
	w.bw.Reset(&w.cw)
	defer func() { w.bw.Reset(nil); writerPool.Put(w.bw) }()
	if err := w.push(); err != nil { // the headers, so the client's watch call returns
		return
	}
	start := time.Now()
	err := w.run(ctx, p)
	s.logf("watch %s: %d events, %d bytes in %v (%v)", p.description, w.total, w.cw.n, time.Since(start).Round(time.Millisecond), err)
}

func (w *watcher) run(ctx context.Context, p watchParams) error {
	s, n := w.s, w.n
	k0 := p.from - s.r0 // the first change to send
	if p.initial {
		gone := -1 // the object deleted at p.from, if the last change was a delete
		if k0 > 0 && n > 0 {
			if typ, i := eventAt(k0-1, n); typ == deleted {
				gone = i
			}
		}
		for i := range n {
			switch {
			case i == gone:
				continue
			case w.rlazy != nil:
				w.rlazy.emit(w, added, i, -1, nil)
			case w.lazy != nil:
				w.emitLazy(added, i, nil)
			case w.filter != nil && !w.filter.keeps(&w.items[i]):
				continue
			default:
				w.emit(added, &w.items[i], nil)
			}
			if w.events >= int64(s.opts.FlushEvery) {
				if err := w.check(ctx); err != nil {
					return err
				}
			}
		}
		if p.initialEnd {
			w.bookmark(p.from, true)
		}
		if err := w.check(ctx); err != nil {
			return err
		}
	}
	last := p.from
	if n > 0 && s.opts.WatchEvents >= 0 {
		limit := int64(s.opts.WatchEvents)
		if limit == 0 {
			limit = -1
		}
		var err error
		if s.opts.Rate > 0 {
			last, err = w.paced(ctx, k0, limit)
		} else {
			last, err = w.fullSpeed(ctx, k0, limit)
		}
		if err != nil {
			return err
		}
	}
	// Idle: a bookmark a second if allowed, until the client leaves or the timeout.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			if p.bookmarks {
				w.bookmark(last, false)
				if err := w.push(); err != nil {
					return err
				}
			}
		}
	}
}

// check flushes and reports whether the stream must stop: the connection failed, the
// client left, or timeoutSeconds passed (the handler then returns, which ends the body
// cleanly).
func (w *watcher) check(ctx context.Context) error {
	if err := w.push(); err != nil {
		return err
	}
	if w.err != nil {
		return w.err
	}
	return ctx.Err()
}

// fullSpeed writes changes k0, k0+1, ... as fast as the connection takes them, flushing
// every FlushEvery events (and whenever the buffer fills; with a filter, also every 4096
// changes, so that a watch that selects little still notices its client leave). It
// returns the last resourceVersion sent.
func (w *watcher) fullSpeed(ctx context.Context, k0, limit int64) (int64, error) {
	every := int64(w.s.opts.FlushEvery)
	k := k0
	for sent := int64(0); sent != limit; sent++ {
		w.change(k)
		k++
		if w.events >= every || w.filter != nil && k&4095 == 0 {
			if err := w.check(ctx); err != nil {
				return w.s.r0 + k, err
			}
		}
	}
	return w.s.r0 + k, w.check(ctx)
}

// paced writes changes at opts.Rate a second, one event per flush, each at its own
// time: the n-th after start/rate seconds (sleepUntil keeps to it within about 80µs
// where the runtime's timers would be a millisecond late). Events fall due together
// only when a wake is later than the gap between two events, as at 20k events/s.
func (w *watcher) paced(ctx context.Context, k0, limit int64) (int64, error) {
	rate := w.s.opts.Rate
	start := time.Now()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	k := k0
	for sent := int64(0); sent != limit; {
		due := int64(time.Since(start).Seconds()*rate) + 1
		for ; sent < due && sent != limit; sent++ {
			w.change(k)
			k++
			if w.events == 0 && w.err == nil { // filtered out
				continue
			}
			if err := w.check(ctx); err != nil {
				return w.s.r0 + k, err
			}
		}
		if sent == limit {
			break
		}
		next := start.Add(time.Duration(float64(sent) / rate * float64(time.Second)))
		if err := sleepUntil(ctx, timer, next); err != nil {
			return w.s.r0 + k, err
		}
	}
	return w.s.r0 + k, nil
}
