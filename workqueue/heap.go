package workqueue

import (
	"container/heap"
	"time"
)

// delayed is one item waiting for its time in AddAfter.
type delayed[T comparable] struct {
	item     T
	readyAt  time.Time
	priority int
	seq      uint64
	index    int
}

// delayHeap orders delayed items by ready time.
type delayHeap[T comparable] []*delayed[T]

func (h delayHeap[T]) Len() int { return len(h) }
func (h delayHeap[T]) Less(i, j int) bool {
	if !h[i].readyAt.Equal(h[j].readyAt) {
		return h[i].readyAt.Before(h[j].readyAt)
	}
	return h[i].seq < h[j].seq
}
func (h delayHeap[T]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *delayHeap[T]) Push(x any) {
	d := x.(*delayed[T])
	d.index = len(*h)
	*h = append(*h, d)
}
func (h *delayHeap[T]) Pop() any {
	old := *h
	d := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	d.index = -1
	return d
}

var _ heap.Interface = (*delayHeap[int])(nil)
