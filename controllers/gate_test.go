package controllers

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kinformer/kinformer/internal/leakcheck"
	"github.com/kinformer/kinformer/workqueue"
)

func only(namespaces ...string) func(string) bool {
	return func(ns string) bool { return slices.Contains(namespaces, ns) }
}

func TestGateLetsThroughWhatItOwns(t *testing.T) {
	var nilGate *Gate
	var zero Gate
	owning := &Gate{}
	owning.Widen(only("a", ""))
	for _, tc := range []struct {
		name string
		gate *Gate
		key  string
		want bool
	}{
		{"no gate: no sharding", nilGate, "a/x", true},
		{"the zero gate owns nothing", &zero, "a/x", false},
		{"an owned namespace", owning, "a/x", true},
		{"another namespace", owning, "b/x", false},
		{"a cluster-scoped object is in namespace \"\"", owning, "node-1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, done, got := tc.gate.Enter(context.Background(), tc.key)
			if got {
				done()
			}
			if got != tc.want {
				t.Errorf("Enter(%q) = %v, want %v", tc.key, got, tc.want)
			}
		})
	}
}

// enter enters key or fails the test, and returns the sync's context and done.
func enter(t *testing.T, g *Gate, key string) (context.Context, func()) {
	t.Helper()
	ctx, done, ok := g.Enter(context.Background(), key)
	if !ok {
		t.Fatalf("%s refused", key)
	}
	return ctx, done
}

// Narrow refuses new syncs in what it gives away at once, and returns only when the
// syncs running there have ended; syncs in namespaces it keeps do not hold it up.
func TestNarrowWaitsForTheSyncsItGivesAway(t *testing.T) {
	leakcheck.Check(t)
	g := &Gate{}
	g.Widen(only("a", "b"))
	_, doneA := enter(t, g, "a/1")
	_, doneB := enter(t, g, "b/1")
	narrowed := make(chan error)
	go func() { narrowed <- g.Narrow(context.Background(), only("b")) }()
	// Narrow holds the lock while it looks, so once a/2 is refused the new test holds.
	for {
		_, done, ok := g.Enter(context.Background(), "a/2")
		if !ok {
			break
		}
		done()
	}
	select {
	case err := <-narrowed:
		t.Fatalf("Narrow returned (%v) while a sync in a was running", err)
	default:
	}
	_, doneB2 := enter(t, g, "b/2")
	doneB2()
	doneA()
	doneA() // done is idempotent
	if err := <-narrowed; err != nil {
		t.Fatal(err)
	}
	doneB()
}

// A Narrow whose wait is cut short gives the namespaces away all the same, and cancels
// the syncs still running there.
func TestNarrowCutShortCancelsTheSyncsLeft(t *testing.T) {
	g := &Gate{}
	g.Widen(only("a", "b"))
	syncA, doneA := enter(t, g, "a/1")
	syncB, doneB := enter(t, g, "b/1")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.Narrow(ctx, only("b")); err != context.Canceled {
		t.Fatalf("Narrow: %v, want context.Canceled", err)
	}
	if syncA.Err() == nil {
		t.Error("the sync left in a given-away namespace still runs uncancelled")
	}
	if syncB.Err() != nil {
		t.Error("a sync in a kept namespace was cancelled")
	}
	if _, _, ok := g.Enter(context.Background(), "a/2"); ok {
		t.Error("a sync entered a namespace given away")
	}
	doneA()
	doneB()
	if err := g.Narrow(context.Background(), only()); err != nil {
		t.Fatalf("Narrow once idle: %v", err)
	}
}

// A worker pool forgets the keys its gate does not own, unsynced, and counts them.
func TestWorkerPoolSkipsKeysItDoesNotOwn(t *testing.T) {
	leakcheck.Check(t)
	q := workqueue.New(workqueue.Options[string]{Name: "test"})
	gate := &Gate{}
	gate.Widen(only("mine"))
	var mu sync.Mutex
	var synced []string
	done := make(chan struct{}, 1)
	metrics := newTestMetrics(t)
	pool := &WorkerPool{Name: "test", Queue: q, Gate: gate, Metrics: metrics,
		Sync: func(_ context.Context, key string) error {
			mu.Lock()
			defer mu.Unlock()
			synced = append(synced, key)
			done <- struct{}{}
			return nil
		}}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { pool.Run(ctx, ctx, 1); close(stopped) }()
	q.Add("theirs/x")
	q.Add("mine/y")
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("no sync")
	}
	cancel()
	<-stopped
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(synced, []string{"mine/y"}) {
		t.Errorf("synced %v, want only mine/y", synced)
	}
	if got := counterValue(t, metrics.notOwn.WithLabelValues("test")); got != 1 {
		t.Errorf("kinformer_controller_not_owned_keys_total = %v, want 1", got)
	}
	if q.Len() != 0 || q.NumRequeues("theirs/x") != 0 {
		t.Errorf("the key not owned stayed in the queue (len %d, requeues %d)", q.Len(), q.NumRequeues("theirs/x"))
	}
}
