package manager

import (
	"fmt"
	"testing"
	"time"

	"github.com/kinformer/kinformer/clock"
)

// The cache never holds more than its bound, drops expired answers before live ones, and
// never returns an expired answer.
func TestReviewCacheIsBounded(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	c := newReviewCache[int](clk, 8)
	for i := range 100 {
		c.put(fmt.Sprint(i), i, 10*time.Second)
		if n := c.len(); n > 8 {
			t.Fatalf("%d entries after %d puts, bound 8", n, i+1)
		}
	}
	if v, ok := c.get("99"); !ok || v != 99 {
		t.Errorf("the last answer put: %d %v", v, ok)
	}
	c.put("99", 100, 10*time.Second) // a key already held is replaced, nothing dropped
	if n := c.len(); n != 8 {
		t.Errorf("%d entries after replacing one, want 8", n)
	}

	clk.Step(10 * time.Second)
	if _, ok := c.get("99"); ok {
		t.Error("an answer is returned at its expiry")
	}
	c.put("new", 1, time.Second)
	if n := c.len(); n != 1 {
		t.Errorf("%d entries, want the expired ones dropped and 1 left", n)
	}
}
