package controllers

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/kinformer/kinformer/workqueue"
)

// DefaultMaxRetries is how often a failing key is retried before it is dropped.
const DefaultMaxRetries = 15

// Loop runs a controller's workers over its queue.
type Loop struct {
	// Name labels the metrics ("replicaset").
	Name  string
	Queue *workqueue.Queue[string]
	// Sync makes the world match the object of key. An error retries the key later.
	Sync func(ctx context.Context, key string) error
	// MaxRetries bounds the retries of one key [DefaultMaxRetries].
	MaxRetries int
	// Metrics records syncs; nil records nothing.
	Metrics *Metrics
	// OnDrop is told of a key dropped after MaxRetries, with its last error (may be nil).
	OnDrop func(key string, err error)
	// Logger reports each failed sync; nil is silent.
	Logger *slog.Logger
}

// Run starts workers goroutines and blocks until ctx ends and every worker has finished
// the sync it was doing. Syncs run under syncCtx, not ctx: a shutdown (ctx) lets the syncs
// in flight complete, so a leader handing over leaves nothing half-done, while ending
// syncCtx aborts them, as a leader that lost its lease must.
func (l *Loop) Run(ctx, syncCtx context.Context, workers int) {
	if workers < 1 {
		workers = 1
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for l.processNext(ctx, syncCtx) {
			}
		}()
	}
	wg.Wait()
}

// processNext syncs one key; false means the worker should stop.
func (l *Loop) processNext(ctx, syncCtx context.Context) bool {
	key, err := l.Queue.GetContext(ctx)
	if err != nil {
		return false
	}
	defer l.Queue.Done(key)
	start := time.Now()
	err = l.Sync(syncCtx, key)
	l.Metrics.observe(l.Name, time.Since(start), err)
	switch {
	case err == nil:
		l.Queue.Forget(key)
	case l.Queue.NumRequeues(key) < l.maxRetries():
		if l.Logger != nil {
			l.Logger.Warn("sync failed, will retry", "key", key, "retries", l.Queue.NumRequeues(key), "err", err)
		}
		l.Queue.AddRateLimited(key)
	default:
		l.Queue.Forget(key)
		l.Metrics.dropped(l.Name)
		if l.OnDrop != nil {
			l.OnDrop(key, err)
		}
	}
	return true
}

func (l *Loop) maxRetries() int {
	if l.MaxRetries > 0 {
		return l.MaxRetries
	}
	return DefaultMaxRetries
}
