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
			got := tc.gate.Enter(tc.key)
			if got {
				tc.gate.Exit(tc.key)
			}
			if got != tc.want {
				t.Errorf("Enter(%q) = %v, want %v", tc.key, got, tc.want)
			}
		})
	}
}

// Narrow refuses new syncs in what it gives away at once, and returns only when the
// syncs running there have ended; syncs in namespaces it keeps do not hold it up.
func TestNarrowWaitsForTheSyncsItGivesAway(t *testing.T) {
	leakcheck.Check(t)
	g := &Gate{}
	g.Widen(only("a", "b"))
	if !g.Enter("a/1") || !g.Enter("b/1") {
		t.Fatal("owned namespaces refused")
	}
	narrowed := make(chan error)
	go func() { narrowed <- g.Narrow(context.Background(), only("b")) }()
	// Narrow holds the lock while it looks, so once a/2 is refused the new test holds.
	for g.Enter("a/2") {
		g.Exit("a/2")
	}
	select {
	case err := <-narrowed:
		t.Fatalf("Narrow returned (%v) while a sync in a was running", err)
	default:
	}
	if !g.Enter("b/2") {
		t.Fatal("a kept namespace refused during the hand-over")
	}
	g.Exit("b/2")
	g.Exit("a/1")
	if err := <-narrowed; err != nil {
		t.Fatal(err)
	}
	g.Exit("b/1")
}

// A Narrow whose wait is cancelled still gives the namespaces away.
func TestNarrowCancelledStillRefusesNewSyncs(t *testing.T) {
	g := &Gate{}
	g.Widen(only("a"))
	if !g.Enter("a/1") {
		t.Fatal("refused")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.Narrow(ctx, only()); err != context.Canceled {
		t.Fatalf("Narrow: %v, want context.Canceled", err)
	}
	if g.Enter("a/2") {
		t.Error("a sync entered a namespace given away")
	}
	g.Exit("a/1")
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
