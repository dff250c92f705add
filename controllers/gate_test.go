package controllers

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/workqueue"
)

// owner is an Owner of a fixed set of namespaces until a deadline on a clock, as a shard
// group's member is until it fails to renew.
type owner struct {
	clk      clock.Clock
	mu       sync.Mutex
	acts     []string
	deadline time.Time
}

func (o *owner) Acts(ns string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Contains(o.acts, ns) && o.clk.Now().Before(o.deadline)
}

func (o *owner) Deadline() time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.acts) == 0 {
		return time.Time{}
	}
	return o.deadline
}

func (o *owner) set(namespaces ...string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.acts = namespaces
}

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// newOwned is a Gate whose owner acts in namespaces for an hour of fake time.
func newOwned(namespaces ...string) (*Gate, *owner, *clock.Fake) {
	clk := clock.NewFake(epoch)
	o := &owner{clk: clk, acts: namespaces, deadline: epoch.Add(time.Hour)}
	return &Gate{Owner: o, Clock: clk}, o, clk
}

func TestGateLetsThroughWhatItsOwnerActsIn(t *testing.T) {
	var nilGate *Gate
	owning, _, _ := newOwned("a", "")
	for _, tc := range []struct {
		name string
		gate *Gate
		key  string
		want bool
	}{
		{"no gate: no sharding", nilGate, "a/x", true},
		{"a gate without an owner lets nothing through", &Gate{}, "a/x", false},
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

// Drain cancels the syncs in what the owner gave away, and returns only when they have
// ended; syncs in namespaces it keeps are neither cancelled nor waited for.
func TestDrainWaitsForTheSyncsGivenAway(t *testing.T) {
	leakcheck.Check(t)
	g, o, _ := newOwned("a", "b")
	syncA, doneA := enter(t, g, "a/1")
	syncB, doneB := enter(t, g, "b/1")
	o.set("b")
	drained := make(chan error)
	go func() { drained <- g.Drain(context.Background()) }()
	<-syncA.Done() // cancelled by Drain
	if _, _, ok := g.Enter(context.Background(), "a/2"); ok {
		t.Error("a sync entered a namespace given away")
	}
	select {
	case err := <-drained:
		t.Fatalf("Drain returned (%v) while a sync in a was running", err)
	default:
	}
	_, doneB2 := enter(t, g, "b/2")
	doneB2()
	doneA()
	doneA() // done is idempotent
	if err := <-drained; err != nil {
		t.Fatal(err)
	}
	if syncB.Err() != nil {
		t.Error("a sync in a kept namespace was cancelled")
	}
	doneB()
}

// A Drain whose wait is cut short says which syncs ignored their cancellation.
func TestDrainCutShortNamesTheSyncsLeft(t *testing.T) {
	g, o, _ := newOwned("a", "b")
	_, doneA := enter(t, g, "a/1")
	_, doneB := enter(t, g, "b/1")
	o.set("b")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := g.Drain(ctx)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "1 sync(s) ignored their cancellation, in a") {
		t.Fatalf("Drain: %v, want the sync left in a named", err)
	}
	doneA()
	doneB()
	o.set()
	if err := g.Drain(context.Background()); err != nil {
		t.Fatalf("Drain once idle: %v", err)
	}
}

// At the owner's deadline the gate cancels the syncs running where the owner no longer
// acts, by its own timer: nothing else has to notice (a process that wakes from a
// freeze has its workers mid-sync, and its shard group's loop has not run yet).
func TestDeadlineCancelsRunningSyncs(t *testing.T) {
	g, o, clk := newOwned("a")
	o.deadline = epoch.Add(10 * time.Second)
	sync1, done := enter(t, g, "a/1")
	defer done()
	clk.Step(9 * time.Second)
	if sync1.Err() != nil {
		t.Fatal("cancelled before the deadline")
	}
	// The owner renews: the deadline moves, and the gate's timer with it.
	o.mu.Lock()
	o.deadline = epoch.Add(20 * time.Second)
	o.mu.Unlock()
	clk.Step(time.Second)
	if sync1.Err() != nil {
		t.Fatal("cancelled at a deadline the owner had renewed past")
	}
	clk.Step(10 * time.Second)
	if sync1.Err() == nil {
		t.Fatal("a sync runs on past its process's deadline")
	}
	if _, _, ok := g.Enter(context.Background(), "a/2"); ok {
		t.Error("a sync entered past the deadline")
	}
}

// A worker pool forgets the keys its gate does not own, unsynced, and counts them.
func TestWorkerPoolSkipsKeysItDoesNotOwn(t *testing.T) {
	leakcheck.Check(t)
	q := workqueue.New(workqueue.Options[string]{Name: "test"})
	gate, _, _ := newOwned("mine")
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
