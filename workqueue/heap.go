package workqueue

import (
	"container/heap"
	"time"
)

// heapElem is an element of an indexedHeap: it orders itself against another element and
// records its position in the heap, so that heap.Fix can find it again.
type heapElem[E any] interface {
	before(other E) bool
	setIndex(i int)
}

// indexedHeap is a container/heap of elements that know their position in it (-1 once
// popped). The delayed items and the ready entries of non-default priority use one each.
type indexedHeap[E heapElem[E]] []E

func (h indexedHeap[E]) Len() int           { return len(h) }
func (h indexedHeap[E]) Less(i, j int) bool { return h[i].before(h[j]) }
func (h indexedHeap[E]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].setIndex(i)
	h[j].setIndex(j)
}
func (h *indexedHeap[E]) Push(x any) {
	e := x.(E)
	e.setIndex(len(*h))
	*h = append(*h, e)
}
func (h *indexedHeap[E]) Pop() any {
	old := *h
	e := old[len(old)-1]
	var zero E
	old[len(old)-1] = zero
	*h = old[:len(old)-1]
	e.setIndex(-1)
	return e
}

var _ heap.Interface = (*indexedHeap[*delayed[int]])(nil)

// delayed is one item waiting for its time in AddAfter.
type delayed[T comparable] struct {
	item     T
	readyAt  time.Time
	priority int
	seq      uint64
	index    int
}

// delayHeap orders delayed items by ready time, then arrival.
type delayHeap[T comparable] = indexedHeap[*delayed[T]]

func (d *delayed[T]) before(o *delayed[T]) bool {
	if !d.readyAt.Equal(o.readyAt) {
		return d.readyAt.Before(o.readyAt)
	}
	return d.seq < o.seq
}

func (d *delayed[T]) setIndex(i int) { d.index = i }
