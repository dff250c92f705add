package apisim

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/websocket"

	"github.com/kinformer/kinformer/object"
)

// eventSink is where a watch writes its frames: a chunked HTTP body or a websocket.
type eventSink interface {
	write(frame []byte) error
	// end finishes the stream cleanly (abrupt=false) or cuts the connection (abrupt=true).
	end(abrupt bool)
}

type chunkedSink struct {
	w http.ResponseWriter
	f http.Flusher
}

func (c *chunkedSink) write(frame []byte) error {
	if _, err := c.w.Write(frame); err != nil {
		return err
	}
	c.f.Flush()
	return nil
}

func (c *chunkedSink) end(abrupt bool) {
	if abrupt {
		// net/http aborts the connection without the terminating chunk.
		panic(http.ErrAbortHandler)
	}
}

type wsSink struct{ conn *websocket.Conn }

func (s *wsSink) write(frame []byte) error {
	_ = s.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return s.conn.WriteMessage(websocket.TextMessage, frame)
}

func (s *wsSink) end(abrupt bool) {
	if !abrupt {
		_ = s.conn.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	}
	_ = s.conn.Close()
}

// watchStart is where a watch begins: the initial objects to send as ADDED (a streaming
// list, or resourceVersion "0"), and the revision after which changes are streamed.
type watchStart struct {
	initial    []keyed
	from       int64
	initialEnd bool // send the initial-events-end bookmark after the initial objects
	expired    bool // the requested revision is compacted: answer with a 410 ERROR event
}

func (s *Server) planWatch(r *http.Request, tk string) (watchStart, error) {
	q := r.URL.Query()
	rv := q.Get("resourceVersion")
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	if q.Get("sendInitialEvents") == "true" {
		refuse, ignore, _ := s.faults.streamingList()
		if refuse {
			return watchStart{}, invalid("sendInitialEvents: Forbidden: sendInitialEvents is not supported by this server")
		}
		if ignore {
			return watchStart{initial: s.store.snapshot(tk, s.store.rev), from: s.store.rev}, nil
		}
		if q.Get("allowWatchBookmarks") != "true" || q.Get("resourceVersionMatch") != "NotOlderThan" {
			return watchStart{}, invalid("sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled, allowWatchBookmarks=true and resourceVersionMatch=NotOlderThan")
		}
		return watchStart{initial: s.store.snapshot(tk, s.store.rev), from: s.store.rev, initialEnd: true}, nil
	}
	switch rv {
	case "":
		return watchStart{from: s.store.rev}, nil
	case "0":
		return watchStart{initial: s.store.snapshot(tk, s.store.rev), from: s.store.rev}, nil
	}
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return watchStart{}, badRequest("invalid resourceVersion %q", rv)
	}
	// A resourceVersion the store has not reached is not an error for a watch (the real
	// apiserver does the same): it waits, and sends the changes after it.
	return watchStart{from: n, expired: n < s.store.compacted}, nil
}

// serveWatch streams changes: initial objects if asked, then every change after the start
// revision that passes the filter, with bookmarks and faults, until timeoutSeconds, the
// client leaves, or the server closes.
func (s *Server) serveWatch(w http.ResponseWriter, r *http.Request, req apiRequest) error {
	f, err := s.parseFilter(r, req)
	if err != nil {
		return err
	}
	tk := typeKey(req.typ.Group, req.typ.Resource)
	start, err := s.planWatch(r, tk)
	if err != nil {
		return err
	}
	if !s.enter() {
		return object.NewStatusError(http.StatusServiceUnavailable, object.ReasonInternalError, "the server is shutting down")
	}
	defer s.wg.Done()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stopOnClose := context.AfterFunc(s.ctx, cancel)
	defer stopOnClose()
	var sink eventSink
	if websocket.IsWebSocketUpgrade(r) {
		up := websocket.Upgrader{CheckOrigin: func(r *http.Request) bool { return r.Header.Get("Origin") != "" }}
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return nil // the upgrader has answered
		}
		go func() { // a websocket is closed by the client's read side; watch for it
			for {
				if _, _, err := conn.ReadMessage(); err != nil {
					cancel()
					return
				}
			}
		}()
		sink = &wsSink{conn: conn}
		defer conn.Close()
	} else {
		fl, ok := w.(http.Flusher)
		if !ok {
			return badRequest("streaming is not supported by this connection")
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		fl.Flush()
		sink = &chunkedSink{w: w, f: fl}
	}
	ws := &watchStream{s: s, sink: sink, typ: req.typ, tk: tk, filter: f, conn: ctx,
		bookmarks: r.URL.Query().Get("allowWatchBookmarks") == "true", metaOnly: wantsMetadata(r.Header.Get("Accept"))}
	if secs, _ := strconv.ParseInt(r.URL.Query().Get("timeoutSeconds"), 10, 64); secs > 0 {
		var c2 context.CancelFunc
		ctx, c2 = context.WithTimeout(ctx, time.Duration(secs)*time.Second)
		defer c2()
	}
	ws.run(ctx, start)
	return nil
}

type watchStream struct {
	s         *Server
	sink      eventSink
	typ       ResourceType
	tk        string
	filter    filter
	bookmarks bool
	metaOnly  bool // PartialObjectMetadata instead of whole objects
	// conn ends with the connection; run's ctx also ends at timeoutSeconds, which a
	// stalled stream, like a dead connection, does not honour.
	conn context.Context
	sent int
	// seen is when the stream first saw each change it holds back (Faults.DelayWatchEvents).
	seen map[int64]time.Time
}

// heldFor returns how much longer the change at rev is held back under delay (0: send
// it now), noting when the stream first saw it.
func (ws *watchStream) heldFor(rev int64, delay time.Duration) time.Duration {
	if delay <= 0 {
		clear(ws.seen)
		return 0
	}
	if ws.seen == nil {
		ws.seen = map[int64]time.Time{}
	}
	now := time.Now()
	at, ok := ws.seen[rev]
	if !ok {
		at, ws.seen[rev] = now, now
	}
	return max(0, at.Add(delay).Sub(now))
}

// run streams the watch from start until it ends: the client leaves, the server closes,
// ctx ends (timeoutSeconds), a fault cuts it, or it falls behind the history.
func (ws *watchStream) run(ctx context.Context, start watchStart) {
	if !ws.sendStart(start) {
		return
	}
	from := start.from
	ticker := time.NewTicker(ws.s.opts.BookmarkInterval)
	defer ticker.Stop()
	for goOn := true; goOn; {
		if ws.s.faults.stalled() {
			goOn = ws.waitStalled(ticker)
		} else {
			from, goOn = ws.advance(ctx, ticker, from)
		}
	}
}

// sendStart sends what comes before the changes: the 410 of a compacted start revision,
// or the initial objects and, for a streaming list, the initial-events-end bookmark. It
// reports whether the stream goes on.
func (ws *watchStream) sendStart(start watchStart) bool {
	if start.expired {
		ws.endExpired(start.from)
		return false
	}
	for _, it := range start.initial {
		if ws.filter.matches(it.rec.obj) && !ws.send("ADDED", it.rec) {
			return false
		}
	}
	if start.initialEnd {
		if _, _, drop := ws.s.faults.streamingList(); !drop && !ws.sendBookmark(start.from, true) {
			return false
		}
	}
	return true
}

// endExpired answers a watch from a revision the history no longer holds, as the
// apiserver does: a 410 ERROR event, then the end of the stream.
func (ws *watchStream) endExpired(rev int64) {
	ws.sendError(object.NewExpired("too old resource version: " + strconv.FormatInt(rev, 10)))
	ws.sink.end(false)
}

// advance sends the changes after from that are due, then waits for something to do: a
// new change, a held-back one coming due, a bookmark tick or the end of ctx. It returns
// the revision up to which every change has been sent, and whether the stream goes on.
func (ws *watchStream) advance(ctx context.Context, ticker *time.Ticker, from int64) (int64, bool) {
	ws.s.store.mu.Lock()
	changes, current, compacted, notify := ws.s.store.since(from), ws.s.store.rev, ws.s.store.compacted, ws.s.store.notify
	ws.s.store.mu.Unlock()
	if from < compacted {
		// The stream fell further behind than the history reaches.
		ws.endExpired(from)
		return from, false
	}
	delay, delayChanged := ws.s.faults.watchDelay(ws.typ.Resource)
	from, wait, goOn := ws.sendChanges(changes, from, delay)
	if !goOn {
		return from, false
	}
	reached := current >= from // a watch from a future RV hears nothing until then
	if wait == 0 {
		from = max(from, current)
	}
	tick, done := ws.await(ctx, ticker, notify, delayChanged, wait)
	if done {
		ws.sink.end(false)
		return from, false
	}
	// A bookmark carries from: every change up to it has been sent, so it is true even
	// while later ones are held back.
	if tick && ws.bookmarks && reached && !ws.sendBookmark(from, false) {
		return from, false
	}
	return from, true
}

// sendChanges sends, in order, the events this watch sees in changes, holding back those
// Faults.DelayWatchEvents delays. It returns the revision up to which every change has
// been sent, how long until the first held-back one is due (0: none is held back), and
// whether the stream goes on.
func (ws *watchStream) sendChanges(changes []change, from int64, delay time.Duration) (int64, time.Duration, bool) {
	var wait time.Duration
	for _, c := range changes {
		typ, rec := ws.eventFor(c)
		if typ == "" {
			if wait == 0 {
				from = c.rev
			}
			continue
		}
		// Once one change is held back, the ones after it wait too (events stay in
		// order), but the clock of each starts now.
		if left := ws.heldFor(c.rev, delay); left > 0 || wait > 0 {
			if wait == 0 {
				wait = left
			}
			continue
		}
		if !ws.send(typ, rec) {
			return from, wait, false
		}
		delete(ws.seen, c.rev)
		from = c.rev
	}
	return from, wait, true
}

// await blocks until the stream has something to do: a write to the store (notify), a
// held-back change coming due after wait (when > 0), a change of the delay, a bookmark
// tick (tick) or the end of ctx (done).
func (ws *watchStream) await(ctx context.Context, ticker *time.Ticker, notify, delayChanged <-chan struct{},
	wait time.Duration) (tick, done bool) {
	var due <-chan time.Time
	if wait > 0 {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		due = timer.C
	}
	select {
	case <-notify:
	case <-due:
	case <-delayChanged:
	case <-ticker.C:
		tick = true
	case <-ctx.Done():
		done = true
	}
	return tick, done
}

// waitStalled waits out one bookmark interval of a stalled stream (Faults.StallWatches),
// saying nothing. Only the connection's end stops it, not timeoutSeconds: a stalled
// stream does not end on time. It reports whether the stream goes on.
func (ws *watchStream) waitStalled(ticker *time.Ticker) bool {
	select {
	case <-ticker.C:
		return true
	case <-ws.conn.Done():
		ws.sink.end(false)
		return false
	}
}

// eventFor turns a change into the event this watch sees: label changes that move an
// object into or out of the selector become ADDED or DELETED, as in Kubernetes.
func (ws *watchStream) eventFor(c change) (string, *record) {
	if c.resource != ws.tk {
		return "", nil
	}
	was := c.prev != nil && ws.filter.matches(c.prev.obj)
	is := c.next != nil && ws.filter.matches(c.next.obj)
	switch {
	case c.next == nil && was:
		return "DELETED", c.tomb
	case was && is:
		return "MODIFIED", c.next
	case is:
		return "ADDED", c.next
	case was:
		return "DELETED", c.next
	}
	return "", nil
}

// send writes one event, applying frame faults and stream cuts. It reports whether the
// stream goes on.
func (ws *watchStream) send(typ string, rec *record) bool {
	data := rec.data
	if ws.metaOnly {
		data = metadataOf(rec)
	}
	var frame []byte
	switch ws.s.faults.nextFrame() {
	case frameMalformed:
		frame = []byte(`{"type":"` + typ + `","object":{this is not json}}` + "\n")
	case frameUnknown:
		frame = append(append([]byte(`{"type":"SURPRISE","object":`), data...), "}\n"...)
	default:
		frame = make([]byte, 0, len(data)+32)
		frame = append(append(append(frame, `{"type":"`+typ+`","object":`...), data...), "}\n"...)
	}
	if ws.sink.write(frame) != nil {
		return false
	}
	ws.sent++
	if n, abrupt := ws.s.faults.watchCut(); n > 0 && ws.sent >= n {
		ws.sink.end(abrupt)
		return false
	}
	return true
}

func (ws *watchStream) sendBookmark(rev int64, initialEnd bool) bool {
	m := map[string]any{"resourceVersion": strconv.FormatInt(rev, 10), "creationTimestamp": nil}
	if initialEnd {
		m["annotations"] = map[string]string{"k8s.io/initial-events-end": "true"}
	}
	b, _ := json.Marshal(map[string]any{"kind": ws.typ.Kind, "apiVersion": ws.typ.groupVersion(), "metadata": m})
	frame := append(append([]byte(`{"type":"BOOKMARK","object":`), b...), "}\n"...)
	return ws.sink.write(frame) == nil
}

func (ws *watchStream) sendError(e *object.StatusError) {
	b, _ := json.Marshal(e.Status)
	_ = ws.sink.write(append(append([]byte(`{"type":"ERROR","object":`), b...), "}\n"...))
}
