package controllers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/kinformer/kinformer/workqueue"
)

// DefaultMaxRetries is how often a failing key is retried before it is dropped.
const DefaultMaxRetries = 15

// The default backoff of skipped syncs (see WorkerPool.SkipBackoff). It starts as short
// as the controllers' rate limiter, since a cache is usually milliseconds behind the write
// it has not shown yet, and stops far below the rate limiter's 1000 s, since a skip costs
// no request, only a look at the cache: the event that brings the write in enqueues the
// key anyway, and the backoff only bounds how long a key waits when no event does.
const (
	DefaultSkipBackoffBase = 5 * time.Millisecond
	DefaultSkipBackoffMax  = 2 * time.Second
)

// DefaultSkipBackoff returns the default per-key backoff of skipped syncs: from
// DefaultSkipBackoffBase, doubling with each skip, up to DefaultSkipBackoffMax.
func DefaultSkipBackoff() workqueue.RateLimiter[string] {
	return workqueue.NewItemExponential[string](DefaultSkipBackoffBase, DefaultSkipBackoffMax)
}

// Skipped is the error of a sync that did not run and should be asked again later, for a
// reason that is no failure: the cache it would decide from has not yet shown the
// controller's own last write (package consistency's *StaleError is one). A WorkerPool
// retries such a key with a backoff of its own (SkipBackoff) and counts it in
// kinformer_controller_stale_syncs_total, never in the failures, never toward MaxRetries:
// a cache that catches up late must not cost a key the retries its real failures need,
// nor get it dropped.
type Skipped interface {
	error
	// SkippedFor names the resource whose cache the sync waits for ("pods"): the resource
	// label of kinformer_controller_stale_syncs_total.
	SkippedFor() string
}

// skippedFor reports whether err is (or wraps) a Skipped, and the resource it waits for.
func skippedFor(err error) (resource string, ok bool) {
	var s Skipped
	if errors.As(err, &s) {
		return s.SkippedFor(), true
	}
	return "", false
}

// WorkerPool is a controller's workers: each takes a key from the queue, syncs it, and
// then forgets it (success), puts it back with the key's rate limit (failure), or puts it
// back with the key's skip backoff (a Skipped sync).
type WorkerPool struct {
	// Name labels the metrics ("replicaset").
	Name  string
	Queue *workqueue.Queue[string]
	// Sync makes the world match the object of key. An error retries the key later with
	// the queue's rate limit; a Skipped error (the cache has not seen the controller's
	// last write yet) retries it with SkipBackoff and counts as a skipped (stale) sync,
	// not a failure.
	Sync func(ctx context.Context, key string) error
	// MaxRetries bounds the retries of one key after failed syncs [DefaultMaxRetries];
	// skipped syncs do not count.
	MaxRetries int
	// SkipBackoff spaces the retries of a key whose syncs are skipped, apart from the
	// queue's rate limiter, so that skips neither lengthen a later failure's backoff nor
	// count toward MaxRetries. The key's history is forgotten when it syncs (or is
	// dropped, or not owned). Run sets DefaultSkipBackoff() when it is nil.
	SkipBackoff workqueue.RateLimiter[string]
	// Metrics records syncs; nil records nothing.
	Metrics *Metrics
	// OnDrop is told of a key dropped after MaxRetries, with its last error (may be nil).
	OnDrop func(key string, err error)
	// Logger reports each failed sync, and each skipped one at debug level; nil is
	// silent, except for panics, which go to slog.Default() then: a swallowed panic is a
	// bug nobody would see.
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
// syncCtx aborts them, as a leader that lost its lease must. (A Gate cancels the syncs
// in namespaces its owner gave away: a shard group's member hands them over at once.)
func (p *WorkerPool) Run(ctx, syncCtx context.Context, workers int) {
	if workers < 1 {
		workers = 1
	}
	if p.SkipBackoff == nil {
		p.SkipBackoff = DefaultSkipBackoff()
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
		p.forget(key)
		p.Metrics.notOwned(p.Name)
		return true
	}
	defer done()
	start := time.Now()
	err = p.sync(syncCtx, key)
	if resource, skipped := skippedFor(err); skipped {
		// Skipped, not synced: it counts apart, and not in the sync durations. The event
		// that brings the write into the cache enqueues the key anyway; the backoff is for
		// a cache that shows it without an event for this key.
		p.Metrics.staleSync(p.Name, resource)
		if p.Logger != nil {
			p.Logger.Debug("sync skipped, will retry", "key", key, "waitingFor", resource,
				"skips", p.SkipBackoff.NumRequeues(key), "reason", err)
		}
		p.Queue.AddAfter(key, p.SkipBackoff.When(key))
		return true
	}
	p.Metrics.observe(p.Name, time.Since(start), err)
	switch {
	case err == nil:
		p.forget(key)
		if p.Logger != nil {
			p.Logger.Debug("synced", "key", key, "took", time.Since(start))
		}
	case p.Queue.NumRequeues(key) < p.maxRetries():
		if p.Logger != nil {
			p.Logger.Warn("sync failed, will retry", "key", key, "retries", p.Queue.NumRequeues(key), "err", err)
		}
		p.Queue.AddRateLimited(key)
	default:
		p.forget(key)
		p.Metrics.dropped(p.Name)
		if p.OnDrop != nil {
			p.OnDrop(key, err)
		}
	}
	return true
}

// forget clears the key's failures and skips: it synced, was dropped, or is another
// process's.
func (p *WorkerPool) forget(key string) {
	p.Queue.Forget(key)
	if p.SkipBackoff != nil {
		p.SkipBackoff.Forget(key)
	}
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
