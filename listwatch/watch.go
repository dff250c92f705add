package listwatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/internal/codec"
	"github.com/kinformer/kinformer/internal/jsonscan"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/trace"
)

// EventType is the type of a watch event.
type EventType string

// The event types of the watch protocol.
const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
	Bookmark EventType = "BOOKMARK"
	Error    EventType = "ERROR"
)

// InitialEventsEndAnnotation marks the bookmark that ends a streaming list's initial events.
const InitialEventsEndAnnotation = "k8s.io/initial-events-end"

// Event is one decoded watch event. For a Bookmark, Object carries only the resourceVersion
// (and, at the end of a streaming list's initial events, InitialEventsEndAnnotation).
type Event[T any] struct {
	Type   EventType
	Object T
}

// UnknownEventError reports an event type outside the protocol. The stream ends with it.
type UnknownEventError struct{ Type string }

func (e *UnknownEventError) Error() string {
	return fmt.Sprintf("watch stream: unknown event type %q", e.Type)
}

// ErrIdleTimeout ends a watch that received nothing (not even a bookmark) for longer than
// WatchOptions.IdleTimeout: the connection is presumed dead.
var ErrIdleTimeout = errors.New("watch stream: idle timeout, no event received")

// frameSource yields raw event frames, each with the byte offset in the stream where it
// starts (so a frame that fails to decode can be found in a capture): a chunked HTTP body
// or websocket messages. With stamp set, next also says when (on it) the frame's first byte was
// there, for tracing (trace.Started).
type frameSource interface {
	next(stamp clock.Clock) (frame []byte, at int64, started time.Time, err error)
	// pending reports whether a complete frame may already be buffered: next would not
	// wait for the connection (false when in doubt).
	pending() bool
	// validated reports whether the frame next returned last is known to be valid JSON
	// (false when not checked).
	validated() bool
	close() error
}

// Watch is an open watch stream of objects of type T. Next returns its events one by one;
// it is not safe for concurrent Next calls, but Close may be called from any goroutine.
type Watch[T any] struct {
	ctx      context.Context
	src      frameSource
	pre      *prefetcher // reads src on a goroutine of its own; nil: Next reads it
	idle     time.Duration
	maxFrame int

	clock     clock.Clock
	timer     clock.Timer
	timedOut  atomic.Bool
	closeOnce sync.Once
	err       error

	tracer trace.Tracer // nil: tracing off
	// sampling: the next frame is followed. It stays set across a bookmark, which has
	// nothing to follow, so the turn passes to the next object event.
	sampling bool
	// initialEvents: a streaming list's initial events are still to come. They are the
	// list, which the reflector hands over whole, not events: none is followed.
	initialEvents bool
	decode        object.DecodeOptions // for each event's object
	// proto: the frames are protobuf WatchEvents (the server answered in protobuf).
	proto bool
}

// newWatchReading is the watch of src, read as ra says: on a goroutine of its own, or in
// Next.
func newWatchReading[T any](ctx context.Context, src frameSource, opts WatchOptions, ra readAhead) *Watch[T] {
	w := &Watch[T]{ctx: ctx, src: src, idle: opts.IdleTimeout, maxFrame: opts.MaxFrameSize, tracer: opts.Tracer, initialEvents: opts.SendInitialEvents,
		decode: opts.Decode}
	_, w.proto = src.(*protoWatchSource)
	if w.maxFrame <= 0 {
		w.maxFrame = DefaultMaxFrameSize
	}
	if w.clock = opts.Clock; w.clock == nil {
		w.clock = clock.Real{}
	}
	var stamp clock.Clock
	if w.tracer != nil {
		stamp = w.clock
	}
	w.pre = ra.start(ctx, src, stamp)
	if idle := opts.IdleTimeout; idle > 0 {
		w.timer = w.clock.AfterFunc(idle, func() {
			w.timedOut.Store(true)
			_ = w.src.close() // unblocks the pending read
		})
	}
	return w
}

// Next blocks for the next event. It returns io.EOF when the server ended the stream
// cleanly (timeoutSeconds passed), the server's *object.StatusError for an ERROR event
// (object.IsGone tells a 410), *FrameError or *UnknownEventError for a bad stream,
// ErrIdleTimeout, or the context's error. After any error the stream is closed and every
// later call returns the same error.
func (w *Watch[T]) Next() (Event[T], error) {
	if w.err != nil {
		return Event[T]{}, w.err
	}
	ev, err := w.next()
	if err != nil {
		w.err = err
		w.Close()
	}
	return ev, err
}

func (w *Watch[T]) next() (Event[T], error) {
	if w.tracer != nil && !w.initialEvents && !w.sampling {
		w.sampling = w.tracer.Sample()
	}
	var stamp clock.Clock // the clock, when this frame is followed
	if w.sampling {
		stamp = w.clock
	}
	fr, err := w.frame(stamp)
	switch {
	case w.timedOut.Load():
		return Event[T]{}, ErrIdleTimeout
	case err != nil && w.ctx.Err() != nil:
		return Event[T]{}, w.ctx.Err()
	case errors.Is(err, websocket.ErrReadLimit):
		// A websocket enforces MaxFrameSize as its read limit (see openWebSocket); its
		// oversized message is reported as the chunked stream reports an oversized frame.
		return Event[T]{}, &FrameError{Offset: fr.at, Reason: tooLargeReason(w.maxFrame), Err: ErrFrameTooLarge}
	case err != nil:
		return Event[T]{}, err
	}
	read := fr.read
	if w.sampling && read.IsZero() {
		read = w.clock.Now() // trace.Read: the frame's last byte is in
	}
	if w.timer != nil {
		w.timer.Reset(w.idle)
	}
	var ev Event[T]
	if w.proto {
		ev, err = decodeProtoEvent[T](fr.data, w.decode, !w.initialEvents)
	} else if fr.valid {
		ev, err = decodeValidEvent[T](fr.data, w.decode)
	} else {
		ev, err = decodeEvent[T](fr.data, w.decode)
	}
	if fe, ok := err.(*FrameError); ok {
		fe.Offset = fr.at
	}
	started := fr.started
	if w.tracer != nil && err == nil {
		w.traced(ev, started, read)
	}
	return ev, err
}

// frame is the next frame, from the prefetcher or read here.
func (w *Watch[T]) frame(stamp clock.Clock) (rawFrame, error) {
	return nextFrame(w.pre, w.src, stamp)
}

// Buffered reports whether Next has an event ready that it would return without waiting
// for the connection: the reflector hands the events it gets in one go to the store as
// one batch (see reflector.Batcher).
func (w *Watch[T]) Buffered() bool { return w.pre != nil && w.pre.buffered() }

// traced hands a sampled object event to the tracer, once decoded (trace.Decoded), and
// notes the end of a streaming list's initial events, after which events are sampled.
func (w *Watch[T]) traced(ev Event[T], started, read time.Time) {
	switch ev.Type {
	case Added, Modified, Deleted:
		if !w.sampling {
			return
		}
		decoded := w.clock.Now()
		if obj, ok := any(ev.Object).(object.Object); ok {
			w.tracer.Begin(string(ev.Type), obj, started, read, decoded)
		}
		w.sampling = false
	case Bookmark:
		if w.initialEvents {
			obj, ok := any(ev.Object).(object.Object)
			w.initialEvents = !ok || obj.Meta().Annotations[InitialEventsEndAnnotation] != "true"
		}
	}
}

// Close stops the stream and releases its connection.
func (w *Watch[T]) Close() {
	w.closeOnce.Do(func() {
		if w.timer != nil {
			w.timer.Stop()
		}
		if w.pre != nil {
			_ = w.pre.close()
			return
		}
		_ = w.src.close()
	})
}

// decodeEvent decodes one frame `{"type":...,"object":{...}}`. It validates the frame
// once, then walks the envelope's members. An object that follows its type (as the
// apiserver writes them) is decoded where it lies, by codec.DecodeUnvalidatedAt, whose
// pass over the object also finds where it ends: one validation pass and one decoding
// pass over the object's bytes, where json.Unmarshal of an envelope with a
// json.RawMessage makes three (validate, skip the object, copy it) before decoding. The
// decoder copies what it keeps: no part of the frame is retained.
func decodeEvent[T any](frame []byte, decode object.DecodeOptions) (Event[T], error) {
	if !jsonscan.Valid(frame) {
		var v any
		err := json.Unmarshal(frame, &v) // the slow path, only for its precise message
		return Event[T]{}, &FrameError{Reason: "invalid JSON", Err: err, Frame: head(frame)}
	}
	return decodeValidEvent[T](frame, decode)
}

// decodeValidEvent is decodeEvent of a frame known to be valid JSON (the prefetcher
// checked it).
func decodeValidEvent[T any](frame []byte, decode object.DecodeOptions) (Event[T], error) {
	var (
		ev      Event[T]
		typ     string
		typSeen bool
		obj     []byte // the object's bytes, when it came before its type or is not a T
		decoded bool   // ev.Object holds the object
	)
	i := jsonscan.SkipSpace(frame, 0)
	if i >= len(frame) || frame[i] != '{' {
		return Event[T]{}, &FrameError{Reason: "invalid event", Err: errors.New("an event is a JSON object"), Frame: head(frame)}
	}
	j, more := jsonscan.FirstMember(frame, i)
	for more {
		nameEnd, _, v := jsonscan.Member(frame, j)
		var end int
		switch string(frame[j+1 : nameEnd-1]) {
		case "type":
			end = jsonscan.ValueEnd(frame, v)
			if end < 0 {
				break
			}
			var err error
			if typ, err = eventType(frame[v:end]); err != nil {
				return Event[T]{}, &FrameError{Reason: "invalid event", Err: fmt.Errorf("type: %w", err), Frame: head(frame)}
			}
			typSeen = true
		case "object":
			if typSeen && objectEvent(typ) && !isNull(frame, v) {
				o, e, err := codec.DecodeUnvalidatedAt[T](frame, v, decode)
				if err != nil {
					return Event[T]{}, &FrameError{Reason: fmt.Sprintf("%s object does not decode", typ), Err: err, Frame: head(frame)}
				}
				ev.Object, decoded, end, obj = o, true, e, frame[v:e]
			} else {
				end = jsonscan.ValueEnd(frame, v)
				if end >= 0 {
					ev.Object, decoded, obj = *new(T), false, frame[v:end]
				}
			}
		default:
			end = jsonscan.ValueEnd(frame, v)
		}
		if end < 0 { // frame is valid JSON: cannot happen
			return Event[T]{}, &FrameError{Reason: "invalid event", Err: errors.New("malformed event"), Frame: head(frame)}
		}
		j, more = jsonscan.NextMember(frame, end)
	}
	if len(obj) == 0 || string(obj) == "null" {
		return Event[T]{}, &FrameError{Reason: fmt.Sprintf("%s event without an object", typ), Frame: head(frame)}
	}
	switch t := EventType(typ); t {
	case Added, Modified, Deleted, Bookmark:
		if !decoded { // the type came after the object
			o, err := codec.DecodeUnvalidated[T](obj, decode)
			if err != nil {
				return Event[T]{}, &FrameError{Reason: fmt.Sprintf("%s object does not decode", t), Err: err, Frame: head(frame)}
			}
			ev.Object = o
		}
		ev.Type = t
		return ev, nil
	case Error:
		var s object.Status
		if err := json.Unmarshal(obj, &s); err != nil {
			return Event[T]{}, &FrameError{Reason: "ERROR event without a Status", Err: err, Frame: head(frame)}
		}
		return Event[T]{}, &object.StatusError{Status: s}
	default:
		return Event[T]{}, &UnknownEventError{Type: typ}
	}
}

// objectEvent reports whether an event of type typ carries a T (not a Status).
func objectEvent(typ string) bool {
	switch EventType(typ) {
	case Added, Modified, Deleted, Bookmark:
		return true
	}
	return false
}

// eventType unquotes the type member's value.
func eventType(quoted []byte) (string, error) {
	if quoted[0] == '"' && !bytes.ContainsRune(quoted, '\\') {
		name := quoted[1 : len(quoted)-1]
		for _, known := range [...]EventType{Added, Modified, Deleted, Bookmark, Error} {
			if string(name) == string(known) {
				return string(known), nil // no copy of a name every event carries
			}
		}
		return string(name), nil
	}
	var typ string
	err := json.Unmarshal(quoted, &typ)
	return typ, err
}

func isNull(b []byte, i int) bool { return len(b)-i >= 4 && string(b[i:i+4]) == "null" }

func head(b []byte) []byte {
	if len(b) > 256 {
		b = b[:256]
	}
	return append([]byte(nil), b...)
}

// bodySource reads frames from a chunked HTTP response body. Closing cancels the request's
// own context first: that tears down the stream even while a Read is blocked in it.
type bodySource struct {
	body   io.ReadCloser
	frames *frameReader
	cancel context.CancelFunc
}

func (s *bodySource) next(stamp clock.Clock) ([]byte, int64, time.Time, error) {
	return s.frames.next(stamp)
}

func (s *bodySource) pending() bool   { return s.frames.pending() }
func (s *bodySource) validated() bool { return s.frames.validated() }

func (s *bodySource) close() error {
	s.cancel()
	return s.body.Close()
}

// NewWatchFromReader decodes a watch stream from r: a recorded stream, a test fixture or
// a benchmark's input. Close closes r, and so does the end of ctx, as it aborts the read
// of an HTTP body: a reader that blocks (a pipe, a generator) cannot keep a reflector
// from stopping.
func NewWatchFromReader[T any](ctx context.Context, r io.ReadCloser, opts WatchOptions) *Watch[T] {
	return newWatchFromReader[T](ctx, r, opts, defaultReadAhead(nil))
}

func newWatchFromReader[T any](ctx context.Context, r io.ReadCloser, opts WatchOptions, ra readAhead) *Watch[T] {
	ctx, cancel := context.WithCancel(ctx)
	body := &closeOnce{ReadCloser: r}
	context.AfterFunc(ctx, func() { _ = body.Close() }) // Close cancels ctx too: r closes once
	frames := newFrameReader(body, opts.MaxFrameSize)
	frames.watchReads()
	src := &bodySource{body: body, frames: frames, cancel: cancel}
	return newWatchReading[T](ctx, src, opts, ra)
}

// closeOnce lets a reader be closed from two places, the first of which closes it.
type closeOnce struct {
	io.ReadCloser
	once sync.Once
	err  error
}

func (c *closeOnce) Close() error {
	c.once.Do(func() { c.err = c.ReadCloser.Close() })
	return c.err
}
