package testwait

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeT records what a helper reports; its Fatalf ends the goroutine, as testing's does.
type fakeT struct {
	testing.TB
	fatal    string
	cleanups []func()
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (f *fakeT) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }

// run calls fn with a fakeT in a goroutine of its own (Fatalf ends it) and returns what
// it reported.
func run(fn func(t testing.TB)) *fakeT {
	f := &fakeT{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f
}

func TestEventuallyReturnsOnceTheConditionHolds(t *testing.T) {
	var calls atomic.Int32
	f := run(func(t testing.TB) {
		Eventually(t, 5*time.Second, func() bool { return calls.Add(1) == 3 }, "never")
	})
	if f.fatal != "" || calls.Load() != 3 {
		t.Errorf("failed with %q after %d calls, want success at the third", f.fatal, calls.Load())
	}
}

func TestEventuallyFailsWithTheMessageAndTheLastState(t *testing.T) {
	n := 0
	start := time.Now()
	f := run(func(t testing.TB) {
		Eventually(t, 50*time.Millisecond, func() bool { n++; return false }, "%d pods, want %d; seen %d calls, %+v", 2, 3,
			Lazy(func() any { return n }), Lazy(func() any { return struct{ N int }{n} }))
	})
	took := time.Since(start)
	want := fmt.Sprintf("timed out after 50ms: 2 pods, want 3; seen %d calls, {N:%d}", n, n)
	if f.fatal != want {
		t.Errorf("failed with %q, want %q", f.fatal, want)
	}
	if took < 50*time.Millisecond || took > 5*time.Second {
		t.Errorf("gave up after %v, want 50ms", took)
	}
	if n < 2 {
		t.Errorf("cond called %d times in 50ms, want a few", n)
	}
}

func TestUntilReportsTheLastCheck(t *testing.T) {
	for _, tt := range []struct{ last, want string }{
		{"3 pods", "timed out after 20ms: scale: 3 pods"},
		{"-a\n+b\n", "timed out after 20ms: scale (-want +got):\n-a\n+b\n"},
	} {
		f := run(func(t testing.TB) {
			what := "scale"
			if strings.Contains(tt.last, "\n") {
				what = "scale (-want +got)"
			}
			Until(t, 20*time.Millisecond, func() string { return tt.last }, "%s", what)
		})
		if f.fatal != tt.want {
			t.Errorf("failed with %q, want %q", f.fatal, tt.want)
		}
	}
	var calls int
	f := run(func(t testing.TB) {
		Until(t, 5*time.Second, func() string {
			if calls++; calls < 2 {
				return "not yet"
			}
			return ""
		}, "never")
	})
	if f.fatal != "" || calls != 2 {
		t.Errorf("failed with %q after %d calls, want success at the second", f.fatal, calls)
	}
}

func TestPollReportsWithoutFailing(t *testing.T) {
	var calls int
	if !Poll(5*time.Second, func() bool { calls++; return calls == 3 }) || calls != 3 {
		t.Errorf("Poll = false or %d calls, want true at the third", calls)
	}
	calls = 0
	start := time.Now()
	if Every(20*time.Millisecond).Poll(50*time.Millisecond, func() bool { calls++; return false }) {
		t.Error("Poll of a condition that never holds = true")
	}
	// Calls at about 0, 20, 40 and 60 ms: the last after the deadline.
	if took := time.Since(start); took < 50*time.Millisecond || took > 5*time.Second || calls < 2 || calls > 5 {
		t.Errorf("gave up after %v and %d calls, want 50ms and about 4", took, calls)
	}
}

func TestEveryPollsAtItsInterval(t *testing.T) {
	var calls int
	start := time.Now()
	run(func(t testing.TB) {
		Every(40*time.Millisecond).Eventually(t, 100*time.Millisecond, func() bool { calls++; return false }, "never")
	})
	// Calls at about 0, 40, 80 and 120 ms; the default interval would make ten.
	if calls < 2 || calls > 5 || time.Since(start) < 100*time.Millisecond {
		t.Errorf("%d calls in %v at a 40ms interval over 100ms", calls, time.Since(start))
	}
}

func TestContextEndsAtTimeoutOrCleanup(t *testing.T) {
	f := &fakeT{}
	ctx := Context(f, time.Hour)
	if ctx.Err() != nil {
		t.Fatal("a fresh context is done")
	}
	for _, fn := range f.cleanups {
		fn()
	}
	if ctx.Err() != context.Canceled {
		t.Errorf("after the test's cleanups: %v, want canceled", ctx.Err())
	}
	short := Context(f, time.Millisecond)
	select {
	case <-short.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a context of 1ms did not end")
	}
	if short.Err() != context.DeadlineExceeded {
		t.Errorf("%v, want the deadline exceeded", short.Err())
	}
}
