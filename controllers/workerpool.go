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

// WorkerPool is a controller's workers: each takes a key from the queue, syncs it, and
// then forgets it (success) or puts it back with the key's rate limit (failure).
type WorkerPool struct {
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
	// Gate, when set, is asked before each sync whether this process owns the key's
	// namespace (see Gate); a key it does not own is forgotten unsynced: its owner syncs
	// it, and a process that takes a namespace over enqueues what it finds there.
	Gate *Gate
}

// Run starts workers goroutines and blocks until ctx ends and every worker has finished
// the sync it was doing. Syncs run under syncCtx, not ctx: a shutdown (ctx) lets the syncs
// in flight complete, so a leader handing over leaves nothing half-done, while ending
// syncCtx aborts them, as a leader that lost its lease must.
func (p *WorkerPool) Run(ctx, syncCtx context.Context, workers int) {
	if workers < 1 {
		workers = 1
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p.processNext(ctx, syncCtx) {
			}
		}()
	}
	wg.Wait()
}

// processNext syncs one key; false means the worker should stop.
func (p *WorkerPool) processNext(ctx, syncCtx context.Context) bool {
	key, err := p.Queue.GetContext(ctx)
	if err != nil {
		return false
	}
	defer p.Queue.Done(key) // also when CrashOnPanic lets a panic through
	syncCtx, done, owned := p.Gate.Enter(syncCtx, key)
	if !owned {
		p.Queue.Forget(key)
		p.Metrics.notOwned(p.Name)
		return true
	}
	defer done()
	start := time.Now()
	err = p.sync(syncCtx, key)
	var stale *consistency.StaleError
	isStale := errors.As(err, &stale)
	if isStale {
		// Skipped, not synced: it counts apart, and not in the sync durations.
		p.Metrics.staleSync(p.Name, stale.Resource)
	} else {
		p.Metrics.observe(p.Name, time.Since(start), err)
	}
	switch {
	case err == nil:
		p.Queue.Forget(key)
	case p.Queue.NumRequeues(key) < p.maxRetries():
		// A stale cache retries like a failure, with the key's rate limit, as
		// kube-controller-manager's ReplicaSet controller does: the first retries come
		// soon, while a cache that stays behind is asked less and less often. The event
		// that brings the write into the cache enqueues the key anyway.
		switch {
		case isStale && p.Logger != nil:
			p.Logger.Debug("cache has not seen this controller's last write, will retry", "key", key,
				"resource", stale.Resource, "wrote", stale.Wrote, "read", stale.Read)
		case p.Logger != nil:
			p.Logger.Warn("sync failed, will retry", "key", key, "retries", p.Queue.NumRequeues(key), "err", err)
		}
		p.Queue.AddRateLimited(key)
	default:
		p.Queue.Forget(key)
		p.Metrics.dropped(p.Name)
		if p.OnDrop != nil {
			p.OnDrop(key, err)
		}
	}
	return true
}

// sync runs Sync and turns a panic into an error, unless CrashOnPanic.
func (p *WorkerPool) sync(ctx context.Context, key string) (err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		p.Metrics.panicked(p.Name)
		log := p.Logger
		if log == nil {
			log = slog.Default().With("controller", p.Name)
		}
		log.Error("sync panicked", "key", key, "panic", r, "stack", string(debug.Stack()))
		if p.CrashOnPanic {
			panic(r)
		}
		err = fmt.Errorf("sync of %s panicked: %v", key, r)
	}()
	return p.Sync(ctx, key)
}

func (p *WorkerPool) maxRetries() int {
	if p.MaxRetries > 0 {
		return p.MaxRetries
	}
	return DefaultMaxRetries
}
