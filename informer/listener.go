package informer

import (
	"context"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/trace"
)

type noteKind uint8

const (
	noteAdd noteKind = iota
	noteUpdate
	noteDelete
)

// note is one notification waiting for a handler: 32 bytes, and a first list queues
// one per object.
type note[T object.Object] struct {
	kind              noteKind
	initial           bool
	finalStateUnknown bool // delete: final state unknown
	old               T    // update: the state the handler saw before
	obj               T    // add, update: the new state; delete: the final (or last known) state
	at                stamp
}

// stamp is when a notification was queued, as the time since its informer's epoch: 8
// bytes where a time.Time takes 24, and still on the monotonic clock (the lag metric
// subtracts two of them).
type stamp time.Duration

// coalesced is one key's net change while a handler's buffer is full: the state the
// handler last saw (before), the newest state (after), and the final state of the object
// the handler knew if it was deleted in between (gone).
type coalesced[T object.Object] struct {
	hadBefore, hasAfter            bool
	before, after                  T
	initial                        bool
	goneSet, goneFinalStateUnknown bool
	gone                           T
	at                             stamp
}

// sameObject reports whether a and b are states of one object, not a deleted object and
// another created under the same name (objects without a UID are taken to be the same).
func sameObject[T object.Object](a, b T) bool {
	ua, ub := a.Meta().UID, b.Meta().UID
	return ua == "" || ub == "" || ua == ub
}

// listener feeds one handler from its own buffer so that a slow handler never holds up
// the informer or the other handlers.
//
// The buffer holds up to capacity notifications. When it is full, further
// notifications are coalesced per key into the net change the handler has not seen yet
// (Add, Update from the state it last saw, or Delete of the last state), in the order the
// keys first overflowed. Memory stays bounded by capacity plus one entry per distinct
// object, and the handler always ends with every object's final state.
type listener[T object.Object] struct {
	h        Handler[T]
	name     string
	capacity int
	resync   time.Duration
	tracer   trace.Tracer

	mu        sync.Mutex
	cond      *sync.Cond
	buf       []note[T]
	head      int
	overflow  map[string]*coalesced[T]
	order     []string // overflow keys, oldest first
	orderHead int
	pending   *note[T] // the second half of a coalesced delete-and-recreate
	stopped   bool

	// Sync tracking: the handler has synced when it has taken every notification that
	// was queued before its sync point (the informer's initial list, or its own replay).
	queued, taken uint64 // notifications (and overflow keys) queued and taken
	syncAt        uint64 // synced once taken >= syncAt (valid when syncSet)
	syncSet       bool
	synced        chan struct{}

	nextResync time.Time
	coalescedN uint64

	// log hears when the buffer starts to coalesce and when the handler has caught up:
	// a slow handler, told once per episode rather than per notification. An episode
	// during the initial list (or a late handler's replay) is not a slow handler but a
	// burst larger than the buffer: it is logged at debug level only.
	log           *slog.Logger
	episodeStartN uint64 // coalescedN when the current episode began
	episodeLevel  slog.Level

	// A handler that panics is stopped (see deliver): err says why, stopped is closed,
	// and onFail tells the informer, on the handler's goroutine.
	err    *HandlerPanic
	failed chan struct{}
	onFail func(*listener[T], *HandlerPanic)
}

func newListener[T object.Object](h Handler[T], opts HandlerOptions, log *slog.Logger, onFail func(*listener[T], *HandlerPanic)) *listener[T] {
	l := &listener[T]{h: h, name: opts.Name, capacity: opts.BufferSize, resync: opts.ResyncPeriod, tracer: opts.Tracer,
		overflow: map[string]*coalesced[T]{}, synced: make(chan struct{}), log: log, failed: make(chan struct{}), onFail: onFail}
	l.cond = sync.NewCond(&l.mu)
	return l
}

func (l *listener[T]) add(n note[T]) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	l.addLocked(n)
	l.cond.Signal()
}

// addAll queues notes in order, with one lock and one wake-up for all of them.
func (l *listener[T]) addAll(notes []note[T]) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	if room := l.capacity - (len(l.buf) - l.head); len(l.order) == l.orderHead && room > 0 && len(notes) > 1 {
		// A relist's notifications arrive together: the array grows once, to hold those
		// that fit, instead of doubling its way there (an initial list of a million
		// objects into a large buffer left about as much garbage again as it held).
		l.buf = slices.Grow(l.buf, min(len(notes), room))
	}
	for _, n := range notes {
		l.addLocked(n)
	}
	l.cond.Signal()
}

// adoptAll is addAll for notes no one else holds: the listener takes the slice itself
// when its buffer is empty and the notes fit, instead of copying them (a relist's, one
// per object, for the last of an informer's handlers).
func (l *listener[T]) adoptAll(notes []note[T]) {
	l.mu.Lock()
	if l.stopped || len(l.buf) != l.head || len(l.order) != l.orderHead || len(notes) > l.capacity {
		l.mu.Unlock()
		l.addAll(notes)
		return
	}
	defer l.mu.Unlock()
	l.buf, l.head = notes, 0
	l.queued += uint64(len(notes))
	l.cond.Signal()
}

func (l *listener[T]) addLocked(n note[T]) {
	if len(l.order) == l.orderHead && len(l.buf)-l.head >= l.capacity {
		l.episodeStartN, l.episodeLevel = l.coalescedN, slog.LevelWarn
		msg := "handler buffer full: coalescing notifications per object until it catches up"
		if !l.hasSyncedLocked() {
			l.episodeLevel = slog.LevelDebug
			msg = "initial list larger than the handler buffer: coalescing it per object"
		}
		l.log.Log(context.Background(), l.episodeLevel, msg, "handler", l.name, "buffer", l.capacity)
	}
	if len(l.order) == l.orderHead && len(l.buf)-l.head < l.capacity {
		if l.head > 0 && l.head >= len(l.buf)/2 {
			// A handler that keeps up but never quite drains would otherwise grow the
			// array with every notification ever queued: move the live part down.
			live := copy(l.buf, l.buf[l.head:])
			clear(l.buf[live:])
			l.buf, l.head = l.buf[:live], 0
		}
		l.buf = append(l.buf, n)
		l.queued++
		return
	}
	l.coalesce(n)
}

func (l *listener[T]) coalesce(n note[T]) {
	l.coalescedN++
	key := object.Key(n.obj)
	c, ok := l.overflow[key]
	if !ok {
		c = &coalesced[T]{at: n.at}
		switch n.kind {
		case noteAdd:
			c.initial = n.initial
		case noteUpdate:
			c.hadBefore, c.before = true, n.old
		case noteDelete:
			c.hadBefore, c.before = true, n.obj
		}
		l.overflow[key] = c
		l.order = append(l.order, key)
		l.queued++
	}
	switch n.kind {
	case noteAdd, noteUpdate:
		c.hasAfter, c.after = true, n.obj
	case noteDelete:
		c.hasAfter = false
		if !c.goneSet { // the first delete is of the object the handler knew
			c.goneSet, c.gone, c.goneFinalStateUnknown = true, n.obj, n.finalStateUnknown
		}
	}
}

// markSynced sets the handler's sync point at everything queued so far.
func (l *listener[T]) markSynced() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.syncSet {
		return
	}
	l.syncAt, l.syncSet = l.queued, true
	l.checkSynced()
}

func (l *listener[T]) checkSynced() {
	if l.syncSet && l.taken >= l.syncAt {
		select {
		case <-l.synced:
		default:
			close(l.synced)
		}
	}
}

func (l *listener[T]) hasSynced() bool {
	select {
	case <-l.synced:
		return true
	default:
		return false
	}
}

// hasSyncedLocked: the handler has been handed everything before its sync point (it may
// still be running the last of it). Called with l.mu held.
func (l *listener[T]) hasSyncedLocked() bool { return l.syncSet && l.taken >= l.syncAt }

// next blocks for the next notification; ok is false once stopped.
func (l *listener[T]) next() (n note[T], ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		if l.stopped {
			return n, false
		}
		if l.pending != nil {
			n, l.pending = *l.pending, nil
			l.taken++ // the key counts as taken once both halves are out
			return n, true
		}
		if l.head < len(l.buf) {
			n = l.buf[l.head]
			l.buf[l.head] = note[T]{}
			l.head++
			if l.head == len(l.buf) {
				l.buf, l.head = l.buf[:0], 0
				if cap(l.buf) > 2*l.capacity || cap(l.buf) > 4096 {
					// A burst (the initial list) grew the array: let it go once drained,
					// rather than keep its peak for the informer's life.
					l.buf = nil
				}
			}
			l.taken++
			return n, true
		}
		for l.orderHead < len(l.order) {
			key := l.order[l.orderHead]
			l.orderHead++
			c := l.overflow[key]
			delete(l.overflow, key)
			if l.orderHead == len(l.order) {
				l.order, l.orderHead = l.order[:0], 0
				level := slog.LevelInfo
				if l.episodeLevel < slog.LevelWarn {
					level = slog.LevelDebug
				}
				l.log.Log(context.Background(), level, "handler caught up with its coalesced notifications", "handler", l.name,
					"coalesced", l.coalescedN-l.episodeStartN)
			}
			if n, ok := l.resolve(c); ok {
				if l.pending == nil {
					l.taken++ // else once the pending half is out
				}
				return n, true
			}
			l.taken++
			l.checkSynced() // an add then a delete the handler never saw: nothing to deliver
		}
		l.checkSynced()
		l.cond.Wait()
	}
}

// resolve turns a coalesced key into what the handler is told: an update, an add, a
// delete, nothing (created and deleted unseen), or, for an object deleted and recreated
// under the same name, the delete now and the add as l.pending.
func (l *listener[T]) resolve(c *coalesced[T]) (note[T], bool) {
	switch {
	case c.hadBefore && c.hasAfter && sameObject(c.before, c.after):
		return note[T]{kind: noteUpdate, old: c.before, obj: c.after, at: c.at}, true
	case c.hadBefore && c.hasAfter:
		gone, finalStateUnknown := c.before, true
		if c.goneSet {
			gone, finalStateUnknown = c.gone, c.goneFinalStateUnknown
		}
		l.pending = &note[T]{kind: noteAdd, obj: c.after, at: c.at}
		return note[T]{kind: noteDelete, obj: gone, finalStateUnknown: finalStateUnknown, at: c.at}, true
	case c.hasAfter:
		return note[T]{kind: noteAdd, obj: c.after, initial: c.initial, at: c.at}, true
	case c.hadBefore:
		return note[T]{kind: noteDelete, obj: c.gone, finalStateUnknown: c.goneFinalStateUnknown, at: c.at}, true
	}
	return note[T]{}, false
}

// run delivers notifications until stop, or until the handler panics.
func (l *listener[T]) run() {
	for {
		n, ok := l.next()
		if !ok {
			return
		}
		if l.tracer != nil {
			l.tracer.Mark(trace.Delivered, n.obj) // out of the buffer, into the handler
		}
		if p := l.deliver(n); p != nil {
			l.fail(p)
			return
		}
		l.mu.Lock()
		l.checkSynced()
		l.mu.Unlock()
	}
}

// deliver calls the handler with n, and returns the panic it raised, if any. A handler
// that panicked may have left its own state half-changed, so it is not called again:
// stopping it is the one outcome its author can reason about, and the other handlers,
// the cache and the process go on.
func (l *listener[T]) deliver(n note[T]) (p *HandlerPanic) {
	defer func() {
		if v := recover(); v != nil {
			p = &HandlerPanic{Handler: l.name, Value: v, Stack: debug.Stack()}
		}
	}()
	switch n.kind {
	case noteAdd:
		l.h.OnAdd(n.obj, n.initial)
	case noteUpdate:
		l.h.OnUpdate(n.old, n.obj)
	case noteDelete:
		l.h.OnDelete(n.obj, n.finalStateUnknown)
	}
	return nil
}

// fail stops the listener for good after a panic, and tells the informer.
func (l *listener[T]) fail(p *HandlerPanic) {
	l.log.Error("handler panicked: it receives no more notifications", "handler", l.name,
		"panic", p.Value, "stack", string(p.Stack))
	l.mu.Lock()
	l.err = p
	l.mu.Unlock()
	l.stop()
	close(l.failed)
	if l.onFail != nil {
		l.onFail(l, p)
	}
}

func (l *listener[T]) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	l.buf, l.overflow, l.order, l.pending = nil, nil, nil, nil
	l.cond.Broadcast()
}

// depth returns the pending notifications and the age of the oldest.
func (l *listener[T]) depth(now stamp) (int, time.Duration, uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.buf) - l.head + len(l.order) - l.orderHead
	if l.pending != nil {
		n++
	}
	var lag time.Duration
	if l.head < len(l.buf) {
		lag = time.Duration(now - l.buf[l.head].at)
	} else if l.orderHead < len(l.order) {
		lag = time.Duration(now - l.overflow[l.order[l.orderHead]].at)
	}
	return n, lag, l.coalescedN
}
