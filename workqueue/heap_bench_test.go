package workqueue

import (
	"container/heap"
	"testing"
	"time"
)

// BenchmarkHeaps pushes and pops through the two indexed heaps directly: the ready set's
// priority heap (non-default priorities) and the delay heap, each holding 10k elements.
func BenchmarkHeaps(b *testing.B) {
	const size = 10_000
	b.Run("priority", func(b *testing.B) {
		var r readySet[int]
		var seq uint64
		push := func(i int) {
			seq++
			r.push(&entry[int]{item: i, priority: 1 + i%7, seq: seq})
		}
		for i := range size {
			push(i)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			e := r.pop()
			push(e.item + i)
		}
	})
	b.Run("delay", func(b *testing.B) {
		var h delayHeap[int]
		base := time.Unix(0, 0)
		var seq uint64
		push := func(i int) {
			seq++
			heap.Push(&h, &delayed[int]{item: i, readyAt: base.Add(time.Duration(i%977) * time.Millisecond), seq: seq})
		}
		for i := range size {
			push(i)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			d := heap.Pop(&h).(*delayed[int])
			push(d.item + i)
		}
	})
}
