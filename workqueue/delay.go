package workqueue

import (
	"container/heap"
	"time"
)

// AddAfter queues item after d (at once when d <= 0) at priority 0.
func (q *Queue[T]) AddAfter(item T, d time.Duration) { q.AddAfterWithPriority(item, d, 0) }

// AddAfterWithPriority queues item after d with a priority. If the item is already held
// back, it keeps the earlier of the two times and the higher of the two priorities.
func (q *Queue[T]) AddAfterWithPriority(item T, d time.Duration, priority int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closing {
		return
	}
	if d <= 0 {
		q.addLocked(item, priority)
		return
	}
	at := q.clock.Now().Add(d)
	if p, ok := q.laterBy[item]; ok {
		changed := false
		if at.Before(p.readyAt) {
			p.readyAt, changed = at, true
		}
		if priority > p.priority {
			p.priority = priority
		}
		if changed {
			heap.Fix(&q.later, p.index)
			q.armLocked()
		}
		return
	}
	q.seq++
	p := &delayed[T]{item: item, readyAt: at, priority: priority, seq: q.seq}
	heap.Push(&q.later, p)
	q.laterBy[item] = p
	q.armLocked()
}

// armLocked points the single timer at the earliest delayed item.
func (q *Queue[T]) armLocked() {
	if len(q.later) == 0 {
		if q.timer != nil {
			q.timer.Stop()
		}
		return
	}
	wait := q.later[0].readyAt.Sub(q.clock.Now())
	if q.timer == nil {
		q.timer = q.clock.AfterFunc(wait, q.releaseDue)
		return
	}
	q.timer.Reset(wait)
}

// releaseDue moves every delayed item whose time has come into the queue and re-arms the
// timer for the next one. It runs on the timer's goroutine.
func (q *Queue[T]) releaseDue() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closing {
		return
	}
	now := q.clock.Now()
	for len(q.later) > 0 && !q.later[0].readyAt.After(now) {
		p := heap.Pop(&q.later).(*delayed[T])
		delete(q.laterBy, p.item)
		q.addLocked(p.item, p.priority)
	}
	q.armLocked()
}

// Delayed returns how many items are held back by AddAfter.
func (q *Queue[T]) Delayed() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.later)
}

// AddRateLimited queues item after the delay its rate limiter gives: exponential per
// item and a bucket overall by default. Call it when processing the item failed.
func (q *Queue[T]) AddRateLimited(item T) {
	q.metrics.retried()
	q.AddAfter(item, q.limiter.When(item))
}

// Forget clears the item's failure history in the rate limiter; call it when processing
// succeeded. It does not remove the item from the queue.
func (q *Queue[T]) Forget(item T) { q.limiter.Forget(item) }

// NumRequeues returns how many times the item has been rate-limited since its last Forget.
func (q *Queue[T]) NumRequeues(item T) int { return q.limiter.NumRequeues(item) }
