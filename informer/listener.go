package informer

import (
	"sync"
	"time"

	"github.com/kinformer/kinformer/object"
)

type noteKind uint8

const (
	noteAdd noteKind = iota
	noteUpdate
	noteDelete
)

// note is one notification waiting for a handler.
type note[T object.Object] struct {
	kind    noteKind
	old     T // update: the state the handler saw before
	obj     T // add, update: the new state; delete: the final (or last known) state
	initial bool
	fsu     bool // delete: final state unknown
	at      time.Time
}

// coalesced is one key's net change while a handler's buffer is full: the state the
// handler last saw (before) and the newest state (after).
type coalesced[T object.Object] struct {
	hadBefore, hasAfter bool
	before, after       T
	initial, fsu        bool
	at                  time.Time
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

	mu        sync.Mutex
	cond      *sync.Cond
	buf       []note[T]
	head      int
	overflow  map[string]*coalesced[T]
	order     []string // overflow keys, oldest first
	orderHead int
	stopped   bool

	// Sync tracking: the handler has synced when it has taken every notification that
	// was queued before its sync point (the informer's initial list, or its own replay).
	queued, taken uint64 // notifications (and overflow keys) queued and taken
	syncAt        uint64 // synced once taken >= syncAt (valid when syncSet)
	syncSet       bool
	synced        chan struct{}

	nextResync time.Time
	coalescedN uint64
}

func newListener[T object.Object](h Handler[T], name string, capacity int, resync time.Duration) *listener[T] {
	l := &listener[T]{h: h, name: name, capacity: capacity, resync: resync,
		overflow: map[string]*coalesced[T]{}, synced: make(chan struct{})}
	l.cond = sync.NewCond(&l.mu)
	return l
}

func (l *listener[T]) add(n note[T]) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	if len(l.order) == l.orderHead && len(l.buf)-l.head < l.capacity {
		l.buf = append(l.buf, n)
		l.queued++
		l.cond.Signal()
		return
	}
	l.coalesce(n)
	l.cond.Signal()
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
		c.hasAfter, c.after, c.fsu = false, n.obj, n.fsu
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

// next blocks for the next notification; ok is false once stopped.
func (l *listener[T]) next() (n note[T], ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		if l.stopped {
			return n, false
		}
		if l.head < len(l.buf) {
			n = l.buf[l.head]
			l.buf[l.head] = note[T]{}
			l.head++
			if l.head == len(l.buf) {
				l.buf, l.head = l.buf[:0], 0
			}
			l.taken++
			return n, true
		}
		for l.orderHead < len(l.order) {
			key := l.order[l.orderHead]
			l.orderHead++
			c := l.overflow[key]
			delete(l.overflow, key)
			l.taken++
			if l.orderHead == len(l.order) {
				l.order, l.orderHead = l.order[:0], 0
			}
			switch {
			case c.hadBefore && c.hasAfter:
				return note[T]{kind: noteUpdate, old: c.before, obj: c.after, at: c.at}, true
			case c.hasAfter:
				return note[T]{kind: noteAdd, obj: c.after, initial: c.initial, at: c.at}, true
			case c.hadBefore:
				return note[T]{kind: noteDelete, obj: c.after, fsu: c.fsu, at: c.at}, true
			}
			l.checkSynced() // an add then a delete the handler never saw: nothing to deliver
		}
		l.checkSynced()
		l.cond.Wait()
	}
}

// run delivers notifications until stop.
func (l *listener[T]) run() {
	for {
		n, ok := l.next()
		if !ok {
			return
		}
		switch n.kind {
		case noteAdd:
			l.h.OnAdd(n.obj, n.initial)
		case noteUpdate:
			l.h.OnUpdate(n.old, n.obj)
		case noteDelete:
			l.h.OnDelete(n.obj, n.fsu)
		}
		l.mu.Lock()
		l.checkSynced()
		l.mu.Unlock()
	}
}

func (l *listener[T]) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	l.buf, l.overflow, l.order = nil, nil, nil
	l.cond.Broadcast()
}

// depth returns the pending notifications and the age of the oldest.
func (l *listener[T]) depth(now time.Time) (int, time.Duration, uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.buf) - l.head + len(l.order) - l.orderHead
	var lag time.Duration
	if l.head < len(l.buf) {
		lag = now.Sub(l.buf[l.head].at)
	} else if l.orderHead < len(l.order) {
		lag = now.Sub(l.overflow[l.order[l.orderHead]].at)
	}
	return n, lag, l.coalescedN
}
