package workqueue

import (
	"context"
	"sync"
	"sync/atomic"
)

// ParallelizeUntil calls fn(ctx, i) for every i in [0, pieces) on at most workers
// goroutines, and returns when all calls have returned. Once ctx ends no new piece
// starts (pieces already running see ctx and should return early).
func ParallelizeUntil(ctx context.Context, workers, pieces int, fn func(ctx context.Context, piece int)) {
	if pieces <= 0 {
		return
	}
	workers = max(1, min(workers, pieces))
	var next atomic.Int64
	var wg sync.WaitGroup
	wg.Add(workers)
	for range workers {
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= pieces {
					return
				}
				fn(ctx, i)
			}
		}()
	}
	wg.Wait()
}
