package workqueue

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/kinformer/kinformer/clock"
)

// ErrShutDown is returned by GetContext once the queue is shut down and empty.
var ErrShutDown = errors.New("workqueue: shut down")

// Options configure a Queue. The zero value is a queue with the default controller rate
// limiter, no metrics and the real clock.
type Options[T comparable] struct {
	// Name labels the queue's metrics.
	Name string
	// Metrics records the queue in a Prometheus registry (see NewMetrics).
	Metrics *Metrics
	// RateLimiter decides AddRateLimited's delays (default: DefaultControllerRateLimiter).
	RateLimiter RateLimiter[T]
	// Clock replaces the wall clock, for tests.
	Clock clock.Clock
}

// Queue is a work queue of keys for controller workers. The rules:
//
//   - An item waits at most once: adding an item that is already waiting does nothing
//     (except raise its priority).
//   - An item is never on two workers at once: adding an item that a worker holds marks it
//     dirty, and Done puts it back in the queue.
//   - Higher priority comes out first; within a priority, first in first out.
//   - AddAfter holds an item back on one timer for the whole queue (no goroutine per item);
//     a duplicate keeps the earliest time and the highest priority.
//   - AddRateLimited asks the rate limiter how long the item should wait; Forget resets
//     its history when it finally succeeds.
//
// All methods are safe for concurrent use.
type Queue[T comparable] struct {
	clock   clock.Clock
	limiter RateLimiter[T]
	metrics *queueMetrics

	mu       sync.Mutex
	cond     *sync.Cond
	ready    readySet[T]
	waiting  map[T]*entry[T]   // items added and not yet handed out (in ready, or dirty while processing)
	working  map[T]time.Time   // items handed out by Get, with the time they were
	later    delayHeap[T]      // items held back by AddAfter
	laterBy  map[T]*delayed[T] // the same, by item
	timer    clock.Timer       // fires when the earliest delayed item is due
	seq      uint64
	free     []*entry[T] // handed-out entries kept for reuse: an add then allocates nothing
	closing  bool        // ShutDown called: no more adds
	draining int         // ShutDownWithDrain calls waiting for in-flight items
}

// New returns an empty queue.
func New[T comparable](opts Options[T]) *Queue[T] {
	q := &Queue[T]{
		clock:   opts.Clock,
		limiter: opts.RateLimiter,
		waiting: map[T]*entry[T]{},
		working: map[T]time.Time{},
		laterBy: map[T]*delayed[T]{},
	}
	if q.clock == nil {
		q.clock = clock.Real{}
	}
	if q.limiter == nil {
		q.limiter = DefaultControllerRateLimiter[T]()
	}
	q.cond = sync.NewCond(&q.mu)
	if opts.Metrics != nil {
		q.metrics = opts.Metrics.forQueue(opts.Name, q)
	}
	return q
}

// Add queues item at priority 0.
func (q *Queue[T]) Add(item T) { q.AddWithPriority(item, 0) }

// AddWithPriority queues item; if it is already waiting, its priority is raised to
// priority when that is higher.
func (q *Queue[T]) AddWithPriority(item T, priority int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.addLocked(item, priority)
}

func (q *Queue[T]) addLocked(item T, priority int) {
	if q.closing {
		return
	}
	if e, ok := q.waiting[item]; ok {
		if priority > e.priority {
			if e.where == nowhere {
				e.priority = priority // not queued yet: Done pushes it at this priority
			} else {
				q.ready.raise(e, priority)
			}
		}
		return
	}
	q.seq++
	e := q.newEntry()
	e.item, e.priority, e.seq = item, priority, q.seq
	if q.metrics != nil {
		e.addedAt = q.clock.Now()
	}
	q.waiting[item] = e
	q.metrics.added()
	if _, busy := q.working[item]; busy {
		return // Done queues it
	}
	q.ready.push(e)
	q.cond.Signal()
}

// Get blocks until an item is ready and hands it to the caller, who must call Done with
// it. shutdown is true once the queue is shut down and empty.
func (q *Queue[T]) Get() (item T, shutdown bool) {
	item, err := q.GetContext(context.Background())
	return item, err != nil
}

// GetContext is Get that also returns when ctx ends (with ctx's error), and returns
// ErrShutDown once the queue is shut down and empty.
func (q *Queue[T]) GetContext(ctx context.Context) (T, error) {
	if ctx.Done() != nil { // a context that can end must wake the wait
		defer q.wakeOn(ctx)()
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.ready.len() == 0 && !q.closing && ctx.Err() == nil {
		q.cond.Wait()
	}
	var zero T
	if q.ready.len() == 0 {
		if err := ctx.Err(); err != nil {
			return zero, err
		}
		return zero, ErrShutDown
	}
	e := q.ready.pop()
	delete(q.waiting, e.item)
	var now time.Time
	if q.metrics != nil {
		now = q.clock.Now()
		q.metrics.got(now.Sub(e.addedAt))
	}
	q.working[e.item] = now
	item := e.item
	q.recycle(e)
	return item, nil
}

func (q *Queue[T]) newEntry() *entry[T] {
	if n := len(q.free); n > 0 {
		e := q.free[n-1]
		q.free = q.free[:n-1]
		return e
	}
	return &entry[T]{}
}

// recycle keeps a handed-out entry for reuse (a bounded number of them).
func (q *Queue[T]) recycle(e *entry[T]) {
	if len(q.free) >= 1024 {
		return
	}
	*e = entry[T]{}
	q.free = append(q.free, e)
}

// wakeOn broadcasts to waiters when ctx ends; the returned func unregisters it.
func (q *Queue[T]) wakeOn(ctx context.Context) func() bool {
	return context.AfterFunc(ctx, func() {
		q.mu.Lock()
		q.cond.Broadcast()
		q.mu.Unlock()
	})
}

// Done marks item as finished. If it was added again while being worked on, it goes back
// in the queue now.
func (q *Queue[T]) Done(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	start, ok := q.working[item]
	if !ok {
		return
	}
	delete(q.working, item)
	if q.metrics != nil {
		q.metrics.done(q.clock.Now().Sub(start))
	}
	if e, dirty := q.waiting[item]; dirty {
		q.ready.push(e)
		q.cond.Signal()
	}
	if q.draining > 0 && len(q.working) == 0 {
		q.cond.Broadcast() // wake ShutDownWithDrain (only then: idle workers need not wake)
	}
}

// Len returns how many items are ready to be handed out.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.ready.len()
}

// ShutDown stops accepting items and wakes every Get. Items already queued are still
// handed out; delayed items are dropped.
func (q *Queue[T]) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shutDownLocked()
}

func (q *Queue[T]) shutDownLocked() {
	if q.closing {
		return
	}
	q.closing = true
	if q.timer != nil {
		q.timer.Stop()
	}
	q.later, q.laterBy = nil, map[T]*delayed[T]{}
	q.cond.Broadcast()
}

// ShutDownWithDrain shuts the queue down and waits until every queued item has been
// handed out and every handed-out item is Done, or until ctx ends. Workers must keep
// running while it waits.
func (q *Queue[T]) ShutDownWithDrain(ctx context.Context) error {
	defer q.wakeOn(ctx)()
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shutDownLocked()
	q.draining++
	defer func() { q.draining-- }()
	for (q.ready.len() > 0 || len(q.working) > 0) && ctx.Err() == nil {
		q.cond.Wait()
	}
	return ctx.Err()
}

// ShuttingDown reports whether ShutDown has been called.
func (q *Queue[T]) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closing
}

// stats is what the metrics collector reads at scrape time.
func (q *Queue[T]) stats() (depth int, unfinished, longest time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	for _, start := range q.working {
		d := now.Sub(start)
		unfinished += d
		longest = max(longest, d)
	}
	return q.ready.len(), unfinished, longest
}
