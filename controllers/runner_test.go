package controllers

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/logbuf"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
)

// syncerFunc is an informer.Syncer for the test.
type syncerFunc func() <-chan struct{}

func (f syncerFunc) Synced() <-chan struct{} { return f() }

// A Runner syncs the keys of its queue with its metrics and logger, says what must sync
// before it runs, drops a key after the retry limit with a log line naming the
// controller, and shuts its queue down when it stops.
func TestRunner(t *testing.T) {
	leakcheck.Check(t)
	var logs logbuf.Buffer
	metrics := newTestMetrics(t)
	synced := make(chan string, 1)
	r := NewRunner("test", func(_ context.Context, key string) error {
		if key == "bad" {
			return errors.New("boom")
		}
		synced <- key
		return nil
	}, Options{Metrics: metrics, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	r.pool.MaxRetries = 1 // the default limit would take minutes of backoff
	informers := syncerFunc(func() <-chan struct{} { return nil })
	r.AddSyncers(informers)
	if got := len(r.Syncers()); got != 1 {
		t.Fatalf("%d syncers, want the one added", got)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx, ctx, 1) }()
	r.Queue().Add("bad")
	r.Queue().Add("good")
	if key := <-synced; key != "good" {
		t.Fatalf("synced %s", key)
	}
	testwait.Eventually(t, 5*time.Second, func() bool { return counterValue(t, metrics.drops.WithLabelValues("test")) == 1 },
		"the failing key was never dropped")
	cancel()
	<-done
	if !r.Queue().ShuttingDown() {
		t.Error("the queue was not shut down when the workers stopped")
	}
	out := logs.String()
	for _, want := range []string{"controller=test", `msg="dropping test out of the queue after repeated failures"`, "key=bad", "err=boom"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log has no %q:\n%s", want, out)
		}
	}
}

// skipError is a Skipped of the test's own: the pool knows skips by the interface, not
// by package consistency's error.
type skipError struct{ resource string }

func (e skipError) Error() string      { return "the " + e.resource + " cache is behind" }
func (e skipError) SkippedFor() string { return e.resource }

// A key skipped more often than MaxRetries is logged as skipped, at debug level, never as
// failed or dropped, and syncs when the skips end.
func TestRunnerLogsSkipsAsSkips(t *testing.T) {
	leakcheck.Check(t)
	var logs logbuf.Buffer
	metrics := newTestMetrics(t)
	var mu sync.Mutex
	attempts := 0
	r := NewRunner("test", func(context.Context, string) error {
		mu.Lock()
		defer mu.Unlock()
		if attempts++; attempts <= 3 {
			return skipError{resource: "pods"}
		}
		return nil
	}, Options{Metrics: metrics, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	r.pool.MaxRetries = 1
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx, ctx, 1) }()
	r.Queue().Add("ns/web")
	testwait.Eventually(t, 5*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return attempts == 4 },
		"the key did not sync after its skips")
	cancel()
	<-done
	if got := counterValue(t, metrics.drops.WithLabelValues("test")); got != 0 {
		t.Errorf("kinformer_controller_dropped_keys_total = %v, want 0", got)
	}
	out := logs.String()
	if n := strings.Count(out, `level=DEBUG msg="sync skipped, will retry" controller=test key=ns/web waitingFor=pods`); n != 3 {
		t.Errorf("%d skips logged, want 3:\n%s", n, out)
	}
	for _, unwanted := range []string{"dropping", "failed"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("a skip was logged as %q:\n%s", unwanted, out)
		}
	}
}
