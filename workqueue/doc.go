// Package workqueue is the typed work queue between informer event handlers and
// controller workers: handlers Add keys, workers Get, sync, and Done them.
//
// One Queue type does what client-go splits into three layers:
//
//   - dedup while waiting, and never the same item on two workers (an item added while a
//     worker holds it is re-queued when that worker calls Done);
//   - priorities (higher first, FIFO within one; the default priority uses a plain FIFO,
//     so it costs what a FIFO costs);
//   - AddAfter on a heap with a single timer for the whole queue, no goroutine per item;
//   - AddRateLimited / Forget / NumRequeues with pluggable limiters: ItemExponential,
//     Bucket, MaxOf, FastSlow and MaxWait; DefaultControllerRateLimiter is the max of a
//     5 ms → 1000 s exponential and a 10 qps / burst 100 bucket. The bucket holds at most
//     one reservation per item and Forget returns unused tokens, so its backlog stays
//     bounded by the number of waiting items (see Bucket for client-go's unbounded one);
//   - ShutDown, ShutDownWithDrain(ctx), and GetContext for workers that stop on a context;
//   - Prometheus metrics under the usual workqueue_* names, on a registry the caller
//     supplies (NewMetrics).
//
// ParallelizeUntil runs a fixed number of pieces on a bounded number of goroutines.
package workqueue
