package controllers_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/kinformer/kinformer/controllers"
	"github.com/kinformer/kinformer/workqueue"
)

// A pool of workers syncs the keys of a queue: a failed sync is retried with the key's
// rate limit, a successful one forgets the key's failures.
func ExampleWorkerPool() {
	queue := workqueue.New(workqueue.Options[string]{Name: "example"})
	attempts := 0
	synced := make(chan string, 1)
	pool := controllers.WorkerPool{Name: "example", Queue: queue,
		Sync: func(_ context.Context, key string) error {
			if attempts++; attempts == 1 {
				return errors.New("the apiserver is unreachable") // retried soon
			}
			synced <- fmt.Sprintf("%s synced on attempt %d", key, attempts)
			return nil
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); pool.Run(ctx, ctx, 1) }()

	queue.Add("default/web")
	fmt.Println(<-synced)
	cancel() // the workers finish the sync they are doing, then return
	<-done
	queue.ShutDown()
	// Output: default/web synced on attempt 2
}
