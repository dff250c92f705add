package listwatch

import (
	"context"
	"testing"
	"time"
)

func TestTokenBucket(t *testing.T) {
	now := time.Unix(0, 0)
	b := newTokenBucket(10, 3)
	b.now = func() time.Time { return now }
	steps := []struct {
		advance time.Duration
		want    time.Duration
	}{
		{0, 0}, {0, 0}, {0, 0}, // the burst
		{0, 100 * time.Millisecond},                 // in debt by one token at 10 qps
		{0, 200 * time.Millisecond},                 // two
		{300 * time.Millisecond, 0},                 // three tokens refilled, debt paid
		{time.Hour, 0},                              // refill is capped at the burst...
		{0, 0}, {0, 0}, {0, 100 * time.Millisecond}, // ...so the fourth waits again
	}
	for i, s := range steps {
		now = now.Add(s.advance)
		if got := b.reserve(); got != s.want {
			t.Errorf("step %d: wait %v, want %v", i, got, s.want)
		}
	}
}

func TestTokenBucketWaitHonoursContext(t *testing.T) {
	b := newTokenBucket(0.001, 1)
	if err := b.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := b.Wait(ctx); err == nil {
		t.Fatal("the second token is 1000 s away; Wait must give up with the context")
	}
	// The abandoned reservation was given back: the debt is one token, not two.
	if b.tokens < -0.01 || b.tokens > 0.01 {
		t.Errorf("tokens = %v after cancel, want about 0", b.tokens)
	}
}
