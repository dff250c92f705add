package workqueue_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/kinformer/kinformer/workqueue"
)

// A controller's shape: workers take keys, sync them, retry failures with backoff, and
// stop when the queue is drained at shutdown.
func Example() {
	q := workqueue.New(workqueue.Options[string]{Name: "example"})
	attempts := map[string]int{}
	var mu sync.Mutex
	syncKey := func(key string) error {
		mu.Lock()
		defer mu.Unlock()
		attempts[key]++
		if key == "default/flaky" && attempts[key] < 3 {
			return errors.New("transient")
		}
		return nil
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				key, err := q.GetContext(context.Background())
				if err != nil {
					return // shut down
				}
				if err := syncKey(key); err != nil {
					q.AddRateLimited(key) // back off, then retry
				} else {
					q.Forget(key)
					if key == "default/flaky" {
						close(done)
					}
				}
				q.Done(key)
			}
		}()
	}
	q.Add("default/web")
	q.Add("default/flaky")
	<-done
	_ = q.ShutDownWithDrain(context.Background())
	wg.Wait()
	fmt.Println("flaky synced after", attempts["default/flaky"], "attempts")
	// Output: flaky synced after 3 attempts
}
