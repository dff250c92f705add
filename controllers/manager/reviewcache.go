package manager

import (
	"sync"
	"time"

	"github.com/kinformer/kinformer/clock"
)

// reviewCache keeps review answers for a while, so a scraper does not cost two API calls
// per scrape. It holds at most max entries: tokens are the callers' to choose, and a
// caller sending a new one with each request must not grow the process.
type reviewCache[V any] struct {
	clock clock.Clock
	max   int

	mu      sync.Mutex
	entries map[string]cached[V]
}

type cached[V any] struct {
	v       V
	expires time.Time
}

func newReviewCache[V any](c clock.Clock, max int) *reviewCache[V] {
	return &reviewCache[V]{clock: c, max: max, entries: map[string]cached[V]{}}
}

func (c *reviewCache[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || !c.clock.Now().Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.v, true
}

func (c *reviewCache[V]) put(key string, v V, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= c.max {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		// Still full of live answers: drop one at random (map order), which costs a
		// legitimate caller at worst one more review.
		for k := range c.entries {
			if len(c.entries) < c.max {
				break
			}
			delete(c.entries, k)
		}
	}
	c.entries[key] = cached[V]{v: v, expires: now.Add(ttl)}
}

func (c *reviewCache[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
