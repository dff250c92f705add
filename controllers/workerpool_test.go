package controllers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/kinformer/kinformer/controllers/consistency"
	"github.com/kinformer/kinformer/internal/leakcheck"
	"github.com/kinformer/kinformer/internal/logbuf"
	"github.com/kinformer/kinformer/internal/testwait"
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

// countingLimiter counts the retries asked of the rate limiter, per key.
type countingLimiter struct {
	workqueue.RateLimiter[string]
	mu   sync.Mutex
	when map[string]int
}

func newCountingLimiter() *countingLimiter {
	return &countingLimiter{RateLimiter: workqueue.NewItemExponential[string](time.Millisecond, 10*time.Millisecond),
		when: map[string]int{}}
}

func (c *countingLimiter) When(key string) time.Duration {
	c.mu.Lock()
	c.when[key]++
	c.mu.Unlock()
	return c.RateLimiter.When(key)
}

func (c *countingLimiter) retries(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.when[key]
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
	limiter := newCountingLimiter()
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

// A sync that finds its cache behind its own last write is retried with the key's rate
// limit and counted as stale, not as a failure.
func TestWorkerPoolRetriesStaleSyncs(t *testing.T) {
	leakcheck.Check(t)
	limiter := newCountingLimiter()
	q := workqueue.New(workqueue.Options[string]{Name: "test", RateLimiter: workqueue.RateLimiter[string](limiter)})
	var logs logbuf.Buffer
	metrics := newTestMetrics(t)
	var mu sync.Mutex
	attempts := 0
	pool := &WorkerPool{Name: "test", Queue: q, Metrics: metrics, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Sync: func(context.Context, string) error {
			mu.Lock()
			defer mu.Unlock()
			if attempts++; attempts <= 2 {
				return fmt.Errorf("syncing: %w", &consistency.StaleError{Owner: "ns/web", Resource: "pods", Wrote: "12", Read: "10"})
			}
			return nil
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { pool.Run(ctx, ctx, 1); close(done) }()
	q.Add("ns/web")
	testwait.Eventually(t, 5*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return attempts == 3
	}, "the stale key was not retried until it synced")
	cancel()
	<-done
	q.ShutDown()
	if got := limiter.retries("ns/web"); got != 2 {
		t.Errorf("%d rate-limited retries, want 2", got)
	}
	if q.NumRequeues("ns/web") != 0 {
		t.Error("the key's retries were not forgotten once it synced")
	}
	if got := counterValue(t, metrics.stale.WithLabelValues("test", "pods")); got != 2 {
		t.Errorf("kinformer_controller_stale_syncs_total{resource=pods} = %v, want 2", got)
	}
	if got := counterValue(t, metrics.errors.WithLabelValues("test")); got != 0 {
		t.Errorf("kinformer_controller_sync_errors_total = %v, want 0: a stale cache is no failure", got)
	}
	var h dto.Metric
	if err := metrics.duration.WithLabelValues("test").(prometheus.Metric).Write(&h); err != nil {
		t.Fatal(err)
	}
	if got := h.GetHistogram().GetSampleCount(); got != 1 {
		t.Errorf("%d sync durations observed, want 1: a skipped sync is no sync", got)
	}
	if out := logs.String(); strings.Contains(out, "sync failed") {
		t.Errorf("a stale sync was logged as a failure:\n%s", out)
	}
}
