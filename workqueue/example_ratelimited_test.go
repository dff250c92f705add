package workqueue_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/kinformer/kinformer/workqueue"
)

// The canonical worker loop: Get a key, sync it, then Forget it on success (its backoff
// starts over) or AddRateLimited on error (it comes back after its backoff) until a
// retry cap drops it; Done in every case, so the key can be handed out again. The next
// change to the object enqueues a dropped key again.
func ExampleQueue_AddRateLimited() {
	const maxRetries = 3
	q := workqueue.New(workqueue.Options[string]{
		Name: "example",
		// Short delays for the example. The default limiter backs off from 5 ms to
		// 1000 s per key, under an overall bucket of 10 retries a second.
		RateLimiter: workqueue.NewItemExponential[string](time.Millisecond, 10*time.Millisecond),
	})

	attempts := map[string]int{} // used by the single worker only
	syncKey := func(key string) error {
		attempts[key]++
		switch {
		case key == "default/broken":
			return errors.New("always fails")
		case key == "default/flaky" && attempts[key] < 3:
			return errors.New("transient")
		}
		return nil
	}

	outcome := map[string]string{}
	var settled sync.WaitGroup // one per key: synced or dropped
	processNext := func() bool {
		key, shutdown := q.Get()
		if shutdown {
			return false
		}
		defer q.Done(key)
		err := syncKey(key)
		switch {
		case err == nil:
			q.Forget(key)
			outcome[key] = fmt.Sprintf("synced, attempts: %d", attempts[key])
			settled.Done()
		case q.NumRequeues(key) < maxRetries:
			q.AddRateLimited(key) // retried after 1 ms, 2 ms, 4 ms, ...
		default:
			q.Forget(key)
			outcome[key] = fmt.Sprintf("dropped, attempts: %d, last error: %v", attempts[key], err)
			settled.Done()
		}
		return true
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for processNext() {
		}
	}()

	keys := []string{"default/ok", "default/flaky", "default/broken"}
	settled.Add(len(keys))
	for _, key := range keys {
		q.Add(key)
	}
	settled.Wait()
	q.ShutDown() // wakes the worker, whose Get then reports shutdown
	<-stopped

	slices.Sort(keys)
	for _, key := range keys {
		fmt.Printf("%s: %s\n", key, outcome[key])
	}
	// Output:
	// default/broken: dropped, attempts: 4, last error: always fails
	// default/flaky: synced, attempts: 3
	// default/ok: synced, attempts: 1
}
