package queuebench

import (
	"sync"
	"time"
)

// B is the part of *testing.B the benchmarks use.
type B interface {
	ReportAllocs()
	ResetTimer()
	StopTimer()
	Fatalf(format string, args ...any)
}

// Queue is what the throughput benchmark needs of a work queue.
type Queue interface {
	Add(item int)
	Get() (item int, shutdown bool)
	Done(item int)
	ShutDown()
}

// DelayingQueue is what the AddAfter benchmark needs.
type DelayingQueue interface {
	AddAfter(item int, d time.Duration)
	ShutDown()
}

// Throughput measures one item's trip through Add, Get and Done: one producer adds n
// (b.N) distinct items while workers take and finish them. ns/op is per item.
func Throughput(b B, n, workers int, newQueue func() Queue) {
	q := newQueue()
	var wg sync.WaitGroup
	processed := make(chan int, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := 0
			for {
				item, shutdown := q.Get()
				if shutdown {
					processed <- got
					return
				}
				got++
				q.Done(item)
			}
		}()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range n {
		q.Add(i)
	}
	q.ShutDown() // queued items are still handed out before Get reports shutdown
	wg.Wait()
	b.StopTimer()
	total := 0
	for range workers {
		total += <-processed
	}
	if total != n {
		b.Fatalf("processed %d of %d items", total, n)
	}
}

// AddAfterPending measures AddAfter of new items while pending items already wait: n
// (b.N) distinct items with spread-out delays on top of a queue holding `pending` of them.
func AddAfterPending(b B, n, pending int, newQueue func() DelayingQueue) {
	q := newQueue()
	defer q.ShutDown()
	for i := range pending {
		q.AddAfter(-1-i, time.Hour+time.Duration(i)*time.Millisecond)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range n {
		q.AddAfter(i, time.Hour+time.Duration(i%pending)*time.Millisecond)
	}
}
