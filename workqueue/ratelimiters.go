package workqueue

import (
	"math"
	"sync"
	"time"

	"github.com/kinformer/kinformer/clock"
)

// RateLimiter decides how long a failed item waits before it is retried.
type RateLimiter[T comparable] interface {
	// When returns the delay for the item's next retry, and counts the retry.
	When(item T) time.Duration
	// Forget clears the item's history (it succeeded).
	Forget(item T)
	// NumRequeues returns the retries counted since the last Forget.
	NumRequeues(item T) int
}

// DefaultControllerRateLimiter is the limiter of controllers: per-item exponential
// backoff from 5 ms to 1000 s, and an overall bucket of 10 retries a second with a
// burst of 100, whichever asks for the longer wait.
func DefaultControllerRateLimiter[T comparable]() RateLimiter[T] {
	return MaxOf[T](
		NewItemExponential[T](5*time.Millisecond, 1000*time.Second),
		NewBucket[T](10, 100, nil),
	)
}

// failures counts each item's failures since its last Forget, for the per-item limiters.
type failures[T comparable] struct {
	mu sync.Mutex
	n  map[T]int
}

// inc counts a failure and returns how many there were before it.
func (f *failures[T]) inc(item T) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == nil {
		f.n = map[T]int{}
	}
	n := f.n[item]
	f.n[item] = n + 1
	return n
}

// Forget clears the item's failures.
func (f *failures[T]) Forget(item T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.n, item)
}

// NumRequeues returns the item's failures.
func (f *failures[T]) NumRequeues(item T) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n[item]
}

// ItemExponential delays an item base·2^n after its n-th failure, up to maxDelay.
type ItemExponential[T comparable] struct {
	failures[T]
	base, maxDelay time.Duration
}

// NewItemExponential returns a per-item exponential backoff.
func NewItemExponential[T comparable](base, maxDelay time.Duration) *ItemExponential[T] {
	return &ItemExponential[T]{base: base, maxDelay: maxDelay}
}

// When counts a failure and returns base·2^(failures-1), capped.
func (r *ItemExponential[T]) When(item T) time.Duration {
	n := r.inc(item)
	d := float64(r.base) * math.Pow(2, float64(n)) // float: 2^n overflows int64 at n=63
	if d > float64(r.maxDelay) {
		return r.maxDelay
	}
	return time.Duration(d)
}

// Bucket is a token bucket over all items: burst retries at once, then qps a second.
//
// It differs from client-go's BucketRateLimiter on purpose. That one takes a fresh token
// on every When and never gives one back, so tokens pile up: an item re-added while it
// already waits, a handler that calls AddRateLimited on every event, an item that
// succeeds before its turn, each pushes every later retry further out, without bound
// (kubernetes issue 104554: 10k requeues put the tail ~16 minutes out). Here:
//
//   - an item holds at most one reservation: When for an item whose reservation is still
//     in the future returns the time left on it and takes no new token;
//   - Forget gives an unused reservation's token back.
//
// So the backlog never exceeds one token per distinct waiting item, and the tail of a
// burst of N failing items is N/qps, which is what a rate of qps means. A hard cap on the
// wait is a different limiter, not a bucket: wrap it in MaxWait for that.
type Bucket[T comparable] struct {
	qps   float64
	burst float64
	clock clock.Clock

	mu       sync.Mutex
	tokens   float64 // may go negative: reserved future tokens
	last     time.Time
	reserved map[T]time.Time // item → when its token is due
	sweepAt  int             // len(reserved) that triggers dropping past reservations
}

// NewBucket returns a bucket of qps tokens a second holding at most burst; a nil clock is
// the wall clock.
func NewBucket[T comparable](qps float64, burst int, c clock.Clock) *Bucket[T] {
	if c == nil {
		c = clock.Real{}
	}
	return &Bucket[T]{qps: qps, burst: float64(burst), tokens: float64(burst), clock: c,
		reserved: map[T]time.Time{}, sweepAt: 1024}
}

// When returns the delay of the item's token, reserving one unless it already holds one.
func (b *Bucket[T]) When(item T) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	if at, ok := b.reserved[item]; ok {
		if at.After(now) {
			return at.Sub(now)
		}
		delete(b.reserved, item)
	}
	b.refill(now)
	b.tokens--
	if b.tokens >= 0 {
		return 0
	}
	wait := time.Duration(-b.tokens / b.qps * float64(time.Second))
	b.reserved[item] = now.Add(wait)
	if len(b.reserved) >= b.sweepAt {
		b.sweep(now)
	}
	return wait
}

func (b *Bucket[T]) refill(now time.Time) {
	if !b.last.IsZero() {
		b.tokens = math.Min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.qps)
	}
	b.last = now
}

// sweep drops reservations already used, keeping the map proportional to the backlog.
func (b *Bucket[T]) sweep(now time.Time) {
	for item, at := range b.reserved {
		if !at.After(now) {
			delete(b.reserved, item)
		}
	}
	b.sweepAt = max(1024, 2*len(b.reserved))
}

// Forget returns the item's token if its reservation has not come due yet.
func (b *Bucket[T]) Forget(item T) {
	b.mu.Lock()
	defer b.mu.Unlock()
	at, ok := b.reserved[item]
	if !ok {
		return
	}
	delete(b.reserved, item)
	if now := b.clock.Now(); at.After(now) {
		b.refill(now)
		b.tokens++
	}
}

// NumRequeues is always 0: the bucket does not count per item.
func (b *Bucket[T]) NumRequeues(T) int { return 0 }

// Backlog returns how many tokens are reserved ahead (0 when the bucket is not in debt).
func (b *Bucket[T]) Backlog() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(b.clock.Now())
	if b.tokens >= 0 {
		return 0
	}
	return int(math.Ceil(-b.tokens))
}

// maxOf asks every limiter and waits for the longest.
type maxOf[T comparable] []RateLimiter[T]

// MaxOf combines limiters: the delay is the longest any of them gives.
func MaxOf[T comparable](limiters ...RateLimiter[T]) RateLimiter[T] { return maxOf[T](limiters) }

func (m maxOf[T]) When(item T) time.Duration {
	var d time.Duration
	for _, l := range m {
		d = max(d, l.When(item))
	}
	return d
}

func (m maxOf[T]) Forget(item T) {
	for _, l := range m {
		l.Forget(item)
	}
}

func (m maxOf[T]) NumRequeues(item T) int {
	n := 0
	for _, l := range m {
		n = max(n, l.NumRequeues(item))
	}
	return n
}

// FastSlow retries an item after fast for its first maxFast failures, then after slow.
type FastSlow[T comparable] struct {
	failures[T]
	fast, slow time.Duration
	maxFast    int
}

// NewFastSlow returns a two-speed limiter.
func NewFastSlow[T comparable](fast, slow time.Duration, maxFast int) *FastSlow[T] {
	return &FastSlow[T]{fast: fast, slow: slow, maxFast: maxFast}
}

// When counts a failure and picks the speed.
func (r *FastSlow[T]) When(item T) time.Duration {
	if r.inc(item) < r.maxFast {
		return r.fast
	}
	return r.slow
}

// maxWait caps another limiter's delay.
type maxWait[T comparable] struct {
	RateLimiter[T]
	limit time.Duration
}

// MaxWait caps the delays of limiter at limit: a bounded tail, at the price of the
// underlying limiter's guarantee (a capped bucket can exceed its rate).
func MaxWait[T comparable](limiter RateLimiter[T], limit time.Duration) RateLimiter[T] {
	return maxWait[T]{RateLimiter: limiter, limit: limit}
}

func (m maxWait[T]) When(item T) time.Duration { return min(m.RateLimiter.When(item), m.limit) }
