package controllers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/controllers/consistency"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/logbuf"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/workqueue"
)

// A key that keeps failing is retried with backoff MaxRetries times, then dropped with
// its last error; a key that succeeds is forgotten (its failures reset).
func TestWorkerPoolRetriesThenDrops(t *testing.T) {
	leakcheck.Check(t)
	q := workqueue.New(workqueue.Options[string]{Name: "test",
		RateLimiter: workqueue.NewItemExponential[string](time.Millisecond, 10*time.Millisecond)})
	var mu sync.Mutex
	attempts := map[string]int{}
	dropped := make(chan string, 1)
	pool := &WorkerPool{Name: "test", Queue: q, MaxRetries: 3,
		Sync: func(_ context.Context, key string) error {
			mu.Lock()
			defer mu.Unlock()
			attempts[key]++
			if key == "bad" || attempts[key] < 3 {
				return errors.New("boom")
			}
			return nil
		},
		OnDrop: func(key string, err error) {
			if err == nil || err.Error() != "boom" {
				t.Errorf("dropped %s with %v", key, err)
			}
			dropped <- key
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { pool.Run(ctx, ctx, 2); close(done) }()
	q.Add("bad")
	q.Add("flaky")
	if key := <-dropped; key != "bad" {
		t.Fatalf("dropped %s", key)
	}
	testwait.Eventually(t, 5*time.Second, func() bool {
		if q.NumRequeues("flaky") != 0 {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		return attempts["flaky"] >= 3
	}, "flaky never succeeded")
	cancel()
	<-done
	q.ShutDown()
	mu.Lock()
	defer mu.Unlock()
	if attempts["bad"] != 4 || attempts["flaky"] != 3 {
		t.Errorf("attempts %v, want bad: 1 + 3 retries, flaky: 3", attempts)
	}
	if q.NumRequeues("bad") != 0 {
		t.Error("a dropped key keeps its failure count")
	}
}

// countingLimiter records the delays asked of a rate limiter, per key.
type countingLimiter struct {
	workqueue.RateLimiter[string]
	mu     sync.Mutex
	delays map[string][]time.Duration
}

func newCountingLimiter(l workqueue.RateLimiter[string]) *countingLimiter {
	return &countingLimiter{RateLimiter: l, delays: map[string][]time.Duration{}}
}

// newFastLimiter counts a short exponential backoff.
func newFastLimiter() *countingLimiter {
	return newCountingLimiter(workqueue.NewItemExponential[string](time.Millisecond, 10*time.Millisecond))
}

func (c *countingLimiter) When(key string) time.Duration {
	d := c.RateLimiter.When(key)
	c.mu.Lock()
	c.delays[key] = append(c.delays[key], d)
	c.mu.Unlock()
	return d
}

func (c *countingLimiter) retries(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.delays[key])
}

func (c *countingLimiter) delaysOf(key string) []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.delays[key])
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func newTestMetrics(t *testing.T) *Metrics {
	t.Helper()
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// panicker is a sync that panics for the key "bad" and records the others.
type panicker struct {
	mu       sync.Mutex
	attempts map[string]int
}

func (p *panicker) sync(_ context.Context, key string) error {
	p.mu.Lock()
	p.attempts[key]++
	p.mu.Unlock()
	if key == "bad" {
		var replicas []int
		_ = replicas[len(key)] // an index out of range: the kind of bug that panics in production
	}
	return nil
}

func (p *panicker) count(key string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.attempts[key]
}

// A panic in one sync costs that sync: the loop goes on, the other keys sync, the key is
// retried with its rate limit until MaxRetries, and each panic is logged at error level
// with its stack and counted.
func TestWorkerPoolRecoversPanics(t *testing.T) {
	leakcheck.Check(t)
	limiter := newFastLimiter()
	q := workqueue.New(workqueue.Options[string]{Name: "test", RateLimiter: workqueue.RateLimiter[string](limiter)})
	var logs logbuf.Buffer
	metrics := newTestMetrics(t)
	p := &panicker{attempts: map[string]int{}}
	dropped := make(chan error, 1)
	pool := &WorkerPool{Name: "test", Queue: q, MaxRetries: 3, Sync: p.sync, Metrics: metrics,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		OnDrop: func(key string, err error) {
			if key == "bad" {
				dropped <- err
			}
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { pool.Run(ctx, ctx, 2); close(done) }()
	q.Add("bad")
	q.Add("a")
	var err error
	select {
	case err = <-dropped:
	case <-time.After(5 * time.Second):
		t.Fatal("the panicking key was never dropped")
	}
	q.Add("b") // the workers are still there after four panics
	testwait.Eventually(t, 5*time.Second, func() bool { return p.count("a") == 1 && p.count("b") == 1 },
		"a synced %d times, b %d", testwait.Lazy(func() any { return p.count("a") }), testwait.Lazy(func() any { return p.count("b") }))
	cancel()
	<-done
	q.ShutDown()

	if err == nil || !strings.Contains(err.Error(), "panicked") || !strings.Contains(err.Error(), "index out of range") {
		t.Errorf("dropped with %v, want the panic as the error", err)
	}
	if got := p.count("bad"); got != 4 {
		t.Errorf("bad synced %d times, want 1 + MaxRetries 3", got)
	}
	if got := limiter.retries("bad"); got != 3 {
		t.Errorf("%d rate-limited retries of bad, want 3", got)
	}
	if got := counterValue(t, metrics.panics.WithLabelValues("test")); got != 4 {
		t.Errorf("kinformer_controller_panics_total = %v, want 4", got)
	}
	if got := counterValue(t, metrics.errors.WithLabelValues("test")); got != 4 {
		t.Errorf("kinformer_controller_sync_errors_total = %v, want 4", got)
	}
	out := logs.String()
	for _, want := range []string{"level=ERROR", `msg="sync panicked"`, "key=bad", "index out of range",
		"runtime/debug.Stack", "controllers.(*panicker).sync"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log has no %q:\n%s", want, out)
		}
	}
}

// With CrashOnPanic the panic goes on after it is logged and counted, and the key is not
// left marked as being processed.
func TestWorkerPoolCrashOnPanic(t *testing.T) {
	leakcheck.Check(t)
	q := workqueue.New(workqueue.Options[string]{Name: "test"})
	defer q.ShutDown()
	var logs logbuf.Buffer
	metrics := newTestMetrics(t)
	p := &panicker{attempts: map[string]int{}}
	pool := &WorkerPool{Name: "test", Queue: q, Sync: p.sync, Metrics: metrics, CrashOnPanic: true,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	q.Add("bad")
	recovered := make(chan any, 1)
	go func() {
		defer func() { recovered <- recover() }()
		pool.processNext(context.Background(), context.Background())
	}()
	r := <-recovered
	if err, ok := r.(error); !ok || !strings.Contains(err.Error(), "index out of range") {
		t.Fatalf("recovered %v, want the sync's panic", r)
	}
	if got := counterValue(t, metrics.panics.WithLabelValues("test")); got != 1 {
		t.Errorf("kinformer_controller_panics_total = %v, want 1", got)
	}
	if out := logs.String(); !strings.Contains(out, `msg="sync panicked"`) || !strings.Contains(out, "controllers.(*panicker).sync") {
		t.Errorf("the panic was not logged with its stack before the crash:\n%s", out)
	}
	q.Add("bad")
	if q.Len() != 1 {
		t.Error("the key stayed marked as being processed after the panic (Done not called)")
	}
}

// sourceFunc stands for an informer: how far its cache has followed the server.
type sourceFunc func() string

func (f sourceFunc) LastStoreSyncResourceVersion() string { return f() }

// cacheAt returns a source at resourceVersion rv, and a func that moves it on.
func cacheAt(rv int64) (consistency.Source, func(rv int64)) {
	var at atomic.Int64
	at.Store(rv)
	return sourceFunc(func() string { return strconv.FormatInt(at.Load(), 10) }), at.Store
}

// A key whose syncs are skipped because the cache has not shown the controller's own
// last write is retried with the skip backoff, more often than MaxRetries, and synced once
// the cache catches up: not dropped, not counted as a failure, and its skips are
// forgotten once it synced.
func TestWorkerPoolSyncsOnceTheCacheCatchesUp(t *testing.T) {
	leakcheck.Check(t)
	pods, catchUp := cacheAt(10)
	written := consistency.New(map[string]consistency.Source{"pods": pods})
	web := consistency.Owner{Key: "ns/web", UID: "u1"}
	written.WroteAt(web, "pods", "12")

	clk := clock.NewFake(time.Now())
	limiter := newFastLimiter()
	q := workqueue.New(workqueue.Options[string]{Name: "test", Clock: clk, RateLimiter: workqueue.RateLimiter[string](limiter)})
	var logs logbuf.Buffer
	metrics := newTestMetrics(t)
	var mu sync.Mutex
	synced := 0
	var dropped []string
	const maxRetries, skips = 2, 5
	pool := &WorkerPool{Name: "test", Queue: q, MaxRetries: maxRetries, Metrics: metrics,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Sync: func(_ context.Context, key string) error {
			if err := written.Ready(web); err != nil {
				return fmt.Errorf("syncing %s: %w", key, err)
			}
			mu.Lock()
			defer mu.Unlock()
			synced++
			return nil
		},
		OnDrop: func(key string, _ error) {
			mu.Lock()
			defer mu.Unlock()
			dropped = append(dropped, key)
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { pool.Run(ctx, ctx, 1); close(done) }()
	stale := metrics.stale.WithLabelValues("test", "pods")
	q.Add("ns/web")
	for i := 1; i <= skips; i++ {
		testwait.Eventually(t, 5*time.Second, func() bool { return counterValue(t, stale) == float64(i) && q.Delayed() == 1 },
			"skip %d: %v skips counted, %d keys held back", i, testwait.Lazy(func() any { return counterValue(t, stale) }),
			testwait.Lazy(func() any { return q.Delayed() }))
		if i == skips {
			catchUp(12) // the watch delivers the write
		}
		clk.Step(DefaultSkipBackoffMax)
	}
	testwait.Eventually(t, 5*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return synced == 1 },
		"the key was not synced once the cache caught up")
	cancel()
	<-done
	q.ShutDown()

	mu.Lock()
	defer mu.Unlock()
	if len(dropped) != 0 {
		t.Errorf("dropped %v: skips used up the retries of failures", dropped)
	}
	if got := counterValue(t, stale); got != skips {
		t.Errorf("kinformer_controller_stale_syncs_total{resource=pods} = %v, want %d", got, skips)
	}
	if got := counterValue(t, metrics.errors.WithLabelValues("test")); got != 0 {
		t.Errorf("kinformer_controller_sync_errors_total = %v, want 0: a stale cache is no failure", got)
	}
	if got := limiter.retries("ns/web"); got != 0 {
		t.Errorf("%d retries asked of the queue's rate limiter, want 0: skips have their own backoff", got)
	}
	if got := pool.SkipBackoff.NumRequeues("ns/web"); got != 0 {
		t.Errorf("%d skips still counted after the key synced", got)
	}
	var h dto.Metric
	if err := metrics.duration.WithLabelValues("test").(prometheus.Metric).Write(&h); err != nil {
		t.Fatal(err)
	}
	if got := h.GetHistogram().GetSampleCount(); got != 1 {
		t.Errorf("%d sync durations observed, want 1: a skipped sync is no sync", got)
	}
	out := logs.String()
	if !strings.Contains(out, `msg="sync skipped, will retry"`) || !strings.Contains(out, "waitingFor=pods") {
		t.Errorf("the skips were not logged as skips:\n%s", out)
	}
	if strings.Contains(out, "sync failed") {
		t.Errorf("a stale sync was logged as a failure:\n%s", out)
	}
}

// The retries of failures and of skips are kept apart: skips never count toward
// MaxRetries, failures are still dropped after it, and each kind of retry asks its own
// backoff (the queue's rate limiter for failures, SkipBackoff for skips).
func TestWorkerPoolSkipsAndFailuresRetryApart(t *testing.T) {
	skip := &consistency.StaleError{Owner: "ns/web", Resource: "pods", Wrote: "12", Read: "10"}
	boom := errors.New("boom")
	const maxRetries = 3
	tests := []struct {
		name string
		// results are what the syncs return, one after the other; the key is retried
		// until it syncs, is dropped, or the results are used up.
		results     []error
		wantDropped bool
		// wantFailRetries and wantSkipRetries are the retries asked of the queue's rate
		// limiter and of the skip backoff.
		wantFailRetries, wantSkipRetries int
	}{
		{name: "skipped more often than MaxRetries, then synced",
			results: []error{skip, skip, skip, skip, skip, skip, nil}, wantSkipRetries: 6},
		{name: "failing: dropped after MaxRetries",
			results: []error{boom, boom, boom, boom}, wantDropped: true, wantFailRetries: maxRetries},
		{name: "skips between failures do not count toward MaxRetries",
			results:     []error{boom, skip, skip, skip, boom, skip, skip, boom, skip, boom},
			wantDropped: true, wantFailRetries: maxRetries, wantSkipRetries: 6},
		{name: "failures after many skips still get their retries",
			results:         []error{skip, skip, skip, skip, skip, boom, boom, boom, nil},
			wantFailRetries: 3, wantSkipRetries: 5},
		{name: "a skip wrapped in a failure's context is still a skip",
			results: []error{fmt.Errorf("syncing: %w", skip), fmt.Errorf("syncing: %w", skip), nil}, wantSkipRetries: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clock.NewFake(time.Now())
			failures := newFastLimiter()
			skips := newCountingLimiter(DefaultSkipBackoff())
			q := workqueue.New(workqueue.Options[string]{Name: "test", Clock: clk, RateLimiter: workqueue.RateLimiter[string](failures)})
			defer q.ShutDown()
			attempts := 0
			var dropped error
			pool := &WorkerPool{Name: "test", Queue: q, MaxRetries: maxRetries, SkipBackoff: skips,
				Sync: func(context.Context, string) error {
					attempts++
					return tt.results[attempts-1]
				},
				OnDrop: func(_ string, err error) { dropped = err }}
			ctx := context.Background()
			q.Add("ns/web")
			for attempts < len(tt.results) && dropped == nil {
				if q.Len() == 0 {
					clk.Step(time.Hour) // whatever the backoff, the key is due again
				}
				if q.Len() != 1 {
					t.Fatalf("after %d syncs the key is not queued again (%d queued, %d held back)", attempts, q.Len(), q.Delayed())
				}
				pool.processNext(ctx, ctx)
			}
			if attempts != len(tt.results) {
				t.Errorf("%d syncs, want %d", attempts, len(tt.results))
			}
			if (dropped != nil) != tt.wantDropped {
				t.Errorf("dropped with %v, want dropped %v", dropped, tt.wantDropped)
			}
			if dropped != nil && !errors.Is(dropped, boom) {
				t.Errorf("dropped with %v, want the failure's error", dropped)
			}
			if q.Len() != 0 || q.Delayed() != 0 {
				t.Errorf("the key is still queued (%d) or held back (%d)", q.Len(), q.Delayed())
			}
			if got := failures.retries("ns/web"); got != tt.wantFailRetries {
				t.Errorf("%d retries asked of the rate limiter, want %d", got, tt.wantFailRetries)
			}
			var wantSkipDelays []time.Duration
			for i := range tt.wantSkipRetries {
				wantSkipDelays = append(wantSkipDelays, min(DefaultSkipBackoffBase<<i, DefaultSkipBackoffMax))
			}
			if d := cmp.Diff(wantSkipDelays, skips.delaysOf("ns/web")); d != "" {
				t.Errorf("the skips' delays, short at first and growing (-want +got):\n%s", d)
			}
			if q.NumRequeues("ns/web") != 0 || skips.NumRequeues("ns/web") != 0 {
				t.Errorf("the key's history was kept after it synced or was dropped: %d failures, %d skips",
					q.NumRequeues("ns/web"), skips.NumRequeues("ns/web"))
			}
		})
	}
}

// The default skip backoff starts short, doubles, stops at its cap, and starts over for a
// key that synced.
func TestDefaultSkipBackoff(t *testing.T) {
	b := DefaultSkipBackoff()
	var got []time.Duration
	for range 12 {
		got = append(got, b.When("ns/web"))
	}
	ms := time.Millisecond
	want := []time.Duration{5 * ms, 10 * ms, 20 * ms, 40 * ms, 80 * ms, 160 * ms, 320 * ms, 640 * ms, 1280 * ms,
		DefaultSkipBackoffMax, DefaultSkipBackoffMax, DefaultSkipBackoffMax}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("delays of successive skips (-want +got):\n%s", d)
	}
	if got := b.When("ns/api"); got != DefaultSkipBackoffBase {
		t.Errorf("another key's first skip waits %v, want %v: the backoff is per key", got, DefaultSkipBackoffBase)
	}
	b.Forget("ns/web")
	if got := b.When("ns/web"); got != DefaultSkipBackoffBase {
		t.Errorf("after Forget the next skip waits %v, want %v", got, DefaultSkipBackoffBase)
	}
}
