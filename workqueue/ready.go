package workqueue

import (
	"container/heap"
	"time"
)

// entry is one item waiting in the queue.
type entry[T comparable] struct {
	item     T
	priority int
	seq      uint64    // arrival order: FIFO within a priority
	addedAt  time.Time // for the queue-duration metric (zero without metrics)
	where    place
	index    int // position in the priority heap
	slot     int // absolute position in the FIFO
}

type place uint8

const (
	nowhere place = iota // dirty while a worker holds the item, or handed out
	inFIFO               // in the default-priority FIFO
	inHeap               // in the priority heap
)

// readySet holds the entries ready to be handed out: higher priority first, then earlier
// arrival. Almost every item has the default priority 0, so those go in a plain FIFO
// (O(1) both ways, like client-go's slice); only other priorities pay for a heap.
type readySet[T comparable] struct {
	fifo  []*entry[T]
	head  int // fifo[head:] is waiting
	base  int // absolute position of fifo[0]
	stale int // nil slots in fifo[head:], left by entries raised to the heap
	heap  priorityHeap[T]
}

func (r *readySet[T]) len() int { return len(r.fifo) - r.head - r.stale + len(r.heap) }

func (r *readySet[T]) push(e *entry[T]) {
	if e.priority == 0 {
		e.where, e.slot = inFIFO, r.base+len(r.fifo)
		r.fifo = append(r.fifo, e)
		return
	}
	e.where = inHeap
	heap.Push(&r.heap, e)
}

// raise moves a waiting entry to a higher priority, keeping its arrival order.
func (r *readySet[T]) raise(e *entry[T], priority int) {
	e.priority = priority
	switch e.where {
	case inHeap:
		heap.Fix(&r.heap, e.index)
	case inFIFO:
		r.fifo[e.slot-r.base] = nil // its FIFO slot is skipped from now on
		r.stale++
		e.where = inHeap
		heap.Push(&r.heap, e)
	}
}

// pop removes the next entry; the set must not be empty.
func (r *readySet[T]) pop() *entry[T] {
	r.skipStale()
	fifoLive := r.head < len(r.fifo)
	if len(r.heap) > 0 && (!fifoLive || r.heap[0].priority > 0) {
		e := heap.Pop(&r.heap).(*entry[T])
		e.where = nowhere
		return e
	}
	e := r.fifo[r.head]
	r.fifo[r.head] = nil
	r.head++
	if r.head > 1024 && r.head*2 > len(r.fifo) { // reclaim the consumed front
		n := copy(r.fifo, r.fifo[r.head:])
		clear(r.fifo[n:])
		r.base += r.head
		r.fifo, r.head = r.fifo[:n], 0
	}
	e.where = nowhere
	return e
}

func (r *readySet[T]) skipStale() {
	for r.head < len(r.fifo) && r.fifo[r.head] == nil {
		r.head++
		r.stale--
	}
}

// priorityHeap orders entries of non-default priority: higher priority first, then arrival.
type priorityHeap[T comparable] = indexedHeap[*entry[T]]

func (e *entry[T]) before(o *entry[T]) bool {
	if e.priority != o.priority {
		return e.priority > o.priority
	}
	return e.seq < o.seq
}

func (e *entry[T]) setIndex(i int) { e.index = i }
