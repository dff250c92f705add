package listwatch

import (
	"context"
	"sync"
	"time"
)

// tokenBucket is the client-side limit on non-watch requests: Burst requests at once, then
// QPS a second. Wait reserves one token and sleeps until it is due, or returns the
// context's error without consuming it.
type tokenBucket struct {
	qps   float64
	burst float64
	now   func() time.Time

	mu     sync.Mutex
	tokens float64
	last   time.Time
}

func newTokenBucket(qps float64, burst int) *tokenBucket {
	if burst < 1 {
		burst = 1
	}
	return &tokenBucket{qps: qps, burst: float64(burst), tokens: float64(burst), now: time.Now}
}

// reserve takes a token (possibly going into debt) and says how long to wait for it.
func (b *tokenBucket) reserve() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if !b.last.IsZero() {
		b.tokens += now.Sub(b.last).Seconds() * b.qps
		if b.tokens > b.burst {
			b.tokens = b.burst
		}
	}
	b.last = now
	b.tokens--
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(-b.tokens / b.qps * float64(time.Second))
}

// cancel gives back a reserved token whose request was abandoned.
func (b *tokenBucket) cancel() {
	b.mu.Lock()
	b.tokens++
	b.mu.Unlock()
}

func (b *tokenBucket) Wait(ctx context.Context) error {
	d := b.reserve()
	if d == 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		b.cancel()
		return ctx.Err()
	}
}
