package controllers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/kinformer/kinformer/controllers/consistency"
	"github.com/kinformer/kinformer/workqueue"
)

// DefaultMaxRetries is how often a failing key is retried before it is dropped.
const DefaultMaxRetries = 15

// Loop runs a controller's workers over its queue.
type Loop struct {
	// Name labels the metrics ("replicaset").
	Name  string
	Queue *workqueue.Queue[string]
	// Sync makes the world match the object of key. An error retries the key later; a
	// *consistency.StaleError (the cache has not seen the controller's last write yet)
	// retries it the same way but counts as a stale sync, not a failure.
	Sync func(ctx context.Context, key string) error
	// MaxRetries bounds the retries of one key [DefaultMaxRetries].
	MaxRetries int
	// Metrics records syncs; nil records nothing.
	Metrics *Metrics
	// OnDrop is told of a key dropped after MaxRetries, with its last error (may be nil).
	OnDrop func(key string, err error)
	// Logger reports each failed sync; nil is silent, except for panics, which go to
	// slog.Default() then: a swallowed panic is a bug nobody would see.
	Logger *slog.Logger
	// CrashOnPanic lets a panic in Sync kill the process, after it is logged with its
	// stack and counted, for those who would rather restart than carry on. By default a
	// panic costs one sync: it is recovered, logged with its stack, counted in
	// kinformer_controller_panics_total, and the key is retried with its rate limit like
	// a failed sync (controller-runtime's default).
	CrashOnPanic bool
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
	defer l.Queue.Done(key) // also when CrashOnPanic lets a panic through
	start := time.Now()
	err = l.sync(syncCtx, key)
	var stale *consistency.StaleError
	isStale := errors.As(err, &stale)
	if isStale {
		// Skipped, not synced: it counts apart, and not in the sync durations.
		l.Metrics.staleSync(l.Name, stale.Resource)
	} else {
		l.Metrics.observe(l.Name, time.Since(start), err)
	}
	switch {
	case err == nil:
		l.Queue.Forget(key)
	case l.Queue.NumRequeues(key) < l.maxRetries():
		// A stale cache retries like a failure, with the key's rate limit, as
		// kube-controller-manager's ReplicaSet controller does: the first retries come
		// within milliseconds, while a cache that stays behind is asked less and less
		// often. The event that brings the write into the cache enqueues the key anyway.
		switch {
		case isStale && l.Logger != nil:
			l.Logger.Debug("cache has not seen this controller's last write, will retry", "key", key,
				"resource", stale.Resource, "wrote", stale.Wrote, "read", stale.Read)
		case l.Logger != nil:
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

// sync runs Sync and turns a panic into an error, unless CrashOnPanic.
func (l *Loop) sync(ctx context.Context, key string) (err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		l.Metrics.panicked(l.Name)
		log := l.Logger
		if log == nil {
			log = slog.Default().With("controller", l.Name)
		}
		log.Error("sync panicked", "key", key, "panic", r, "stack", string(debug.Stack()))
		if l.CrashOnPanic {
			panic(r)
		}
		err = fmt.Errorf("sync of %s panicked: %v", key, r)
	}()
	return l.Sync(ctx, key)
}

func (l *Loop) maxRetries() int {
	if l.MaxRetries > 0 {
		return l.MaxRetries
	}
	return DefaultMaxRetries
}
