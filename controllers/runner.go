package controllers

import (
	"context"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/workqueue"
)

// Runner is the part of a controller that a controller manager runs: its work queue of
// keys, the pool of workers that syncs them, and what must have synced before the
// workers start. A controller embeds one, through Base, which gives it the methods the
// manager calls to run it: Syncers, Run and Queue.
type Runner struct {
	pool    WorkerPool
	syncers []informer.Syncer
}

// NewRunner returns the Runner of the controller called name, whose workers call sync
// for each key of a new work queue with workqueue's default controller rate limiter.
// The name labels the queue's and the syncs' metrics (opts.QueueMetrics, opts.Metrics)
// and the workers' log lines (opts.Logger, nil: silent).
func NewRunner(name string, sync func(ctx context.Context, key string) error, opts Options) Runner {
	log := opts.Logger
	if log != nil {
		log = log.With("controller", name)
	}
	queue := workqueue.New(workqueue.Options[string]{Name: name, Metrics: opts.QueueMetrics,
		RateLimiter: workqueue.DefaultControllerRateLimiter[string]()})
	return Runner{pool: WorkerPool{Name: name, Queue: queue, Sync: sync, Metrics: opts.Metrics, Logger: log,
		CrashOnPanic: opts.CrashOnPanic, Gate: opts.Gate,
		OnDrop: func(key string, err error) {
			// Only failures get here: a skipped sync is retried until it syncs.
			if log != nil {
				log.Error("dropping "+name+" out of the queue after repeated failures", "key", key, "err", err)
			}
		}}}
}

// AddSyncers adds to what must have synced before the workers may start: the
// controller's informers and its handler registrations.
func (r *Runner) AddSyncers(s ...informer.Syncer) { r.syncers = append(r.syncers, s...) }

// Syncers are what must have synced before the workers may start (informer.WaitForSync
// waits for them): informers that have not listed yet, or handlers that have not yet
// been told of every cached object, would make a sync decide from part of the world.
func (r *Runner) Syncers() []informer.Syncer { return r.syncers }

// Run runs workers until ctx ends (see WorkerPool.Run for ctx and syncCtx), then shuts
// the queue down.
func (r *Runner) Run(ctx, syncCtx context.Context, workers int) {
	defer r.pool.Queue.ShutDown()
	r.pool.Run(ctx, syncCtx, workers)
}

// Queue is the controller's work queue: its event handlers add keys to it, and a sync
// may add its own key again (AddAfter) to be looked at later.
func (r *Runner) Queue() *workqueue.Queue[string] { return r.pool.Queue }
