package controllers

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/kinformer/kinformer/internal/leakcheck"
	"github.com/kinformer/kinformer/internal/testwait"
	"github.com/kinformer/kinformer/workqueue"
)

// A key that keeps failing is retried with backoff MaxRetries times, then dropped with
// its last error; a key that succeeds is forgotten (its failures reset).
func TestLoopRetriesThenDrops(t *testing.T) {
	leakcheck.Check(t)
	q := workqueue.New(workqueue.Options[string]{Name: "test",
		RateLimiter: workqueue.NewItemExponential[string](time.Millisecond, 10*time.Millisecond)})
	var mu sync.Mutex
	attempts := map[string]int{}
	dropped := make(chan string, 1)
	l := &Loop{Name: "test", Queue: q, MaxRetries: 3,
		Sync: func(_ context.Context, key string) error {
			mu.Lock()
			defer mu.Unlock()
			attempts[key]++
			if key == "bad" || attempts[key] < 3 {
				return errors.New("boom")
			}
			return nil
		},
		OnDrop: func(key string, err error) {
			if err == nil || err.Error() != "boom" {
				t.Errorf("dropped %s with %v", key, err)
			}
			dropped <- key
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx, ctx, 2); close(done) }()
	q.Add("bad")
	q.Add("flaky")
	if key := <-dropped; key != "bad" {
		t.Fatalf("dropped %s", key)
	}
	testwait.Eventually(t, 5*time.Second, func() bool {
		if q.NumRequeues("flaky") != 0 {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		return attempts["flaky"] >= 3
	}, "flaky never succeeded")
	cancel()
	<-done
	q.ShutDown()
	mu.Lock()
	defer mu.Unlock()
	if attempts["bad"] != 4 || attempts["flaky"] != 3 {
		t.Errorf("attempts %v, want bad: 1 + 3 retries, flaky: 3", attempts)
	}
	if q.NumRequeues("bad") != 0 {
		t.Error("a dropped key keeps its failure count")
	}
}
