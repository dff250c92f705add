package workqueue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
)

// drain gets every ready item without blocking, marking each Done.
func drain[T comparable](q *Queue[T]) []T {
	var out []T
	for q.Len() > 0 {
		item, _ := q.Get()
		q.Done(item)
		out = append(out, item)
	}
	return out
}

func TestOrdering(t *testing.T) {
	type add struct {
		item     string
		priority int
	}
	tests := []struct {
		name string
		adds []add
		want []string
	}{
		{"fifo", []add{{"a", 0}, {"b", 0}, {"c", 0}}, []string{"a", "b", "c"}},
		{"dedup keeps the first place", []add{{"a", 0}, {"b", 0}, {"a", 0}}, []string{"a", "b"}},
		{"priority first, fifo within", []add{{"low1", 0}, {"high1", 5}, {"low2", 0}, {"high2", 5}, {"mid", 1}},
			[]string{"high1", "high2", "mid", "low1", "low2"}},
		{"dedup raises priority and keeps the earliest time", []add{{"a", 0}, {"b", 1}, {"c", 1}, {"a", 1}, {"a", 0}},
			[]string{"a", "b", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := New(Options[string]{})
			for _, a := range tt.adds {
				q.AddWithPriority(a.item, a.priority)
			}
			if d := cmp.Diff(tt.want, drain(q)); d != "" {
				t.Errorf("order (-want +got):\n%s", d)
			}
		})
	}
}

func TestNeverOnTwoWorkers(t *testing.T) {
	q := New(Options[string]{})
	q.Add("a")
	item, _ := q.Get()
	q.Add("a") // while a worker holds it
	if q.Len() != 0 {
		t.Fatalf("a held item was handed out again: len %d", q.Len())
	}
	q.Add("a") // still one pending re-run
	q.Done(item)
	if q.Len() != 1 {
		t.Fatalf("Done must requeue the dirty item once: len %d", q.Len())
	}
	again, _ := q.Get()
	q.Done(again)
	if again != "a" || q.Len() != 0 {
		t.Errorf("got %q, len %d", again, q.Len())
	}
	q.Done("never-got") // harmless
}

// TestShutDown runs in a synctest bubble: synctest.Wait returns once the second Get is
// parked on the queue's condition variable, so ShutDown is known to wake a blocked Get,
// not to beat it to the lock. A ShutDown that did not wake it would leave the bubble
// deadlocked, which fails the test.
func TestShutDown(t *testing.T) {
	leakcheck.Check(t)
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[int]{})
		q.Add(1)
		got := make(chan bool, 1)
		go func() {
			q.Get() // 1
			_, shutdown := q.Get()
			got <- shutdown
		}()
		synctest.Wait()
		select {
		case shutdown := <-got:
			t.Fatalf("the second Get returned (shutdown %v) from an empty queue before ShutDown", shutdown)
		default:
		}
		q.ShutDown()
		if !<-got {
			t.Error("a blocked Get must return shutdown")
		}
		q.Add(2)
		if q.Len() != 0 {
			t.Error("Add after ShutDown must be ignored")
		}
	})
}

func TestShutDownHandsOutQueuedItems(t *testing.T) {
	q := New(Options[int]{})
	q.Add(1)
	q.Add(2)
	q.ShutDown()
	var got []int
	for {
		item, shutdown := q.Get()
		if shutdown {
			break
		}
		got = append(got, item)
		q.Done(item)
	}
	if d := cmp.Diff([]int{1, 2}, got); d != "" {
		t.Error(d)
	}
}

func TestGetContext(t *testing.T) {
	leakcheck.Check(t)
	q := New(Options[int]{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, err := q.GetContext(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v", err)
	}
	q.ShutDown()
	if _, err := q.GetContext(context.Background()); !errors.Is(err, ErrShutDown) {
		t.Errorf("err = %v", err)
	}
}

func TestShutDownWithDrain(t *testing.T) {
	leakcheck.Check(t)
	q := New(Options[int]{})
	for i := range 5 {
		q.Add(i)
	}
	var processed atomic.Int32
	release := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			item, shutdown := q.Get()
			if shutdown {
				return
			}
			<-release
			processed.Add(1)
			q.Done(item)
		}
	}()
	drained := make(chan error)
	go func() { drained <- q.ShutDownWithDrain(context.Background()) }()
	select {
	case <-drained:
		t.Fatal("drain returned while items were queued and in flight")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-drained; err != nil {
		t.Fatal(err)
	}
	if processed.Load() != 5 {
		t.Errorf("drained after %d of 5 items", processed.Load())
	}
	wg.Wait()

	stuck := New(Options[int]{})
	stuck.Add(1)
	stuck.Get() // never Done
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := stuck.ShutDownWithDrain(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("drain of a stuck worker: %v", err)
	}
}

func TestAddAfter(t *testing.T) {
	fc := clock.NewFake(time.Unix(1000, 0))
	q := New(Options[string]{Clock: fc})
	q.AddAfter("now", 0)
	q.AddAfter("b", 2*time.Second)
	q.AddAfter("a", time.Second)
	q.AddAfter("b", 5*time.Second) // later duplicate: keeps 2 s
	q.AddAfterWithPriority("c", 2*time.Second, 3)
	if d := cmp.Diff([]string{"now"}, drain(q)); d != "" {
		t.Fatal(d)
	}
	fc.Step(time.Second)
	if d := cmp.Diff([]string{"a"}, drain(q)); d != "" {
		t.Errorf("after 1 s (-want +got):\n%s", d)
	}
	q.AddAfter("b", 500*time.Millisecond) // earlier duplicate: moves b to 1.5 s
	fc.Step(500 * time.Millisecond)
	if d := cmp.Diff([]string{"b"}, drain(q)); d != "" {
		t.Errorf("after 1.5 s (-want +got):\n%s", d)
	}
	fc.Step(time.Second)
	if d := cmp.Diff([]string{"c"}, drain(q)); d != "" {
		t.Errorf("after 2.5 s (-want +got):\n%s", d)
	}
	if q.Delayed() != 0 {
		t.Errorf("%d items still delayed", q.Delayed())
	}
}

func TestAddAfterUsesOneTimer(t *testing.T) {
	fc := clock.NewFake(time.Unix(0, 0))
	q := New(Options[int]{Clock: fc})
	for i := range 10000 {
		q.AddAfterWithPriority(i%100, time.Duration(1+i%7)*time.Second, i%3)
	}
	if n := fc.Pending(); n != 1 {
		t.Fatalf("%d timers armed for 100 delayed items, want 1", n)
	}
	fc.Step(10 * time.Second)
	if got := len(drain(q)); got != 100 {
		t.Errorf("%d items released, want 100 (one per distinct item)", got)
	}
	q.ShutDown()
	if n := fc.Pending(); n != 0 {
		t.Errorf("ShutDown left %d timers", n)
	}
}

func TestRealTimerReleasesDelayedItems(t *testing.T) {
	leakcheck.Check(t)
	q := New(Options[string]{})
	defer q.ShutDown()
	start := time.Now()
	q.AddAfter("x", 30*time.Millisecond)
	item, _ := q.Get()
	if item != "x" || time.Since(start) < 30*time.Millisecond {
		t.Errorf("got %q after %v", item, time.Since(start))
	}
}

// TestConcurrentProducersAndWorkers checks the core rule under load: every item added is
// processed after its last add, and no item is ever on two workers at once.
func TestConcurrentProducersAndWorkers(t *testing.T) {
	leakcheck.Check(t)
	const producers, workers, keys, addsPerProducer = 8, 16, 200, 2000
	q := New(Options[int]{})
	var inFlight [keys]atomic.Int32
	var lastAdd, lastDone [keys]atomic.Int64 // logical clocks
	var tick atomic.Int64
	var violations atomic.Int32
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				item, shutdown := q.Get()
				if shutdown {
					return
				}
				if inFlight[item].Add(1) != 1 {
					violations.Add(1)
				}
				lastDone[item].Store(tick.Add(1))
				if w%4 == 0 {
					// Real time on purpose: a slow worker holds its item while producers
					// add it again, which is the case the rule is about.
					time.Sleep(time.Microsecond)
				}
				inFlight[item].Add(-1)
				q.Done(item)
			}
		}()
	}
	var pwg sync.WaitGroup
	for p := range producers {
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			for i := range addsPerProducer {
				k := (p*7919 + i*31) % keys
				lastAdd[k].Store(tick.Add(1))
				q.AddWithPriority(k, i%3)
			}
		}()
	}
	pwg.Wait()
	if err := q.ShutDownWithDrain(context.Background()); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if v := violations.Load(); v != 0 {
		t.Errorf("%d times an item was on two workers at once", v)
	}
	for k := range keys {
		if lastAdd[k].Load() != 0 && lastDone[k].Load() < lastAdd[k].Load() {
			t.Errorf("key %d: last add at %d was never processed (last processed at %d)", k, lastAdd[k].Load(), lastDone[k].Load())
		}
	}
}

// TestParallelizeUntil runs the pieces in a synctest bubble, each held until the test
// lets it go: after each synctest.Wait every worker that can start a piece has, so the
// pieces running are exactly as many as ParallelizeUntil runs at once, never a guess of
// how long a piece must last for the workers to overlap.
func TestParallelizeUntil(t *testing.T) {
	leakcheck.Check(t)
	const workers, pieces = 4, 100
	synctest.Test(t, func(t *testing.T) {
		var seen [pieces]atomic.Int32
		var running atomic.Int32
		release := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			ParallelizeUntil(context.Background(), workers, pieces, func(_ context.Context, i int) {
				running.Add(1)
				<-release
				seen[i].Add(1)
				running.Add(-1)
			})
		}()
		for left := pieces; left > 0; left-- {
			synctest.Wait() // every worker is in a piece, or done
			if n, want := running.Load(), int32(min(workers, left)); n != want {
				t.Errorf("%d pieces running at once with %d workers and %d pieces left, want %d", n, workers, left, want)
				break
			}
			release <- struct{}{}
		}
		close(release) // after a failure, the pieces left run through
		<-done
		for i := range seen {
			if seen[i].Load() != 1 {
				t.Fatalf("piece %d ran %d times", i, seen[i].Load())
			}
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	var ran atomic.Int32
	ParallelizeUntil(ctx, 2, 1000, func(_ context.Context, i int) {
		if ran.Add(1) == 10 {
			cancel()
		}
	})
	if n := ran.Load(); n >= 1000 || n < 10 {
		t.Errorf("%d pieces ran after cancel at 10", n)
	}
}

func ExampleQueue() {
	q := New(Options[string]{})
	q.Add("default/web")
	q.Add("default/db")
	q.Add("default/web") // already waiting: nothing happens
	for q.Len() > 0 {
		key, _ := q.Get()
		fmt.Println("sync", key)
		q.Forget(key) // success: reset its backoff
		q.Done(key)
	}
	q.ShutDown()
	// Output:
	// sync default/web
	// sync default/db
}

func TestDelayedDuplicateKeepsHighestPriority(t *testing.T) {
	fc := clock.NewFake(time.Unix(0, 0))
	q := New(Options[string]{Clock: fc})
	q.Add("plain")
	q.AddAfterWithPriority("x", time.Second, 0)
	q.AddAfterWithPriority("x", 2*time.Second, 5) // later time ignored, priority kept
	fc.Step(time.Second)
	if d := cmp.Diff([]string{"x", "plain"}, drain(q)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// TestRaisedEntryLeavesNoPhantom: an item raised out of the FIFO leaves its old slot
// behind; once the item has been handed out from the heap, that old slot must not hand
// it out a second time.
func TestRaisedEntryLeavesNoPhantom(t *testing.T) {
	q := New(Options[string]{})
	q.Add("x")
	q.Add("a")
	q.Add("b")
	q.AddWithPriority("a", 5) // raised: its FIFO slot, behind x, goes stale
	first, _ := q.Get()
	q.Done(first)
	var got []string
	for q.Len() > 0 {
		item, _ := q.Get()
		got = append(got, item)
		q.Done(item)
	}
	if d := cmp.Diff([]string{"x", "b"}, got); first != "a" || d != "" {
		t.Errorf("first %q, then (-want +got):\n%s", first, d)
	}
}
