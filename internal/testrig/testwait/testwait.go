package testwait

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// DefaultInterval is how long Eventually, Until and Poll sleep between two checks.
const DefaultInterval = 10 * time.Millisecond

// Poller polls at a fixed interval. The package functions Eventually, Until and Poll poll
// at DefaultInterval, as does the zero Poller; Every makes a Poller for a wait that must
// poll more or less often (a real cluster, a sampling loop, a test that times a change).
type Poller struct{ interval time.Duration }

// Every returns a Poller that sleeps interval between two checks.
func Every(interval time.Duration) Poller {
	if interval <= 0 {
		panic(fmt.Sprintf("testwait: interval %v is not positive", interval))
	}
	return Poller{interval: interval}
}

// Eventually calls cond, in the calling goroutine, until it returns true. If it has not
// after timeout, it fails the test (t.Fatalf) with "timed out after <timeout>: " and the
// message format, args. A Lazy argument is made only then, to show the state at the end
// of the wait.
func Eventually(t testing.TB, timeout time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	Poller{interval: DefaultInterval}.Eventually(t, timeout, cond, format, args...)
}

// Until calls check, in the calling goroutine, until it returns "". If it has not after
// timeout, it fails the test (t.Fatalf) with "timed out after <timeout>: ", the message
// format, args, and what check returned last (after a newline when that has several
// lines, a diff for instance).
func Until(t testing.TB, timeout time.Duration, check func() string, format string, args ...any) {
	t.Helper()
	Poller{interval: DefaultInterval}.Until(t, timeout, check, format, args...)
}

// Poll calls cond, in the calling goroutine, until it returns true or timeout has
// passed, and reports whether it returned true. It fails nothing: it is for a wait whose
// caller reports a timeout itself, because it goes on after it (counting the miss,
// logging what it saw) or returns what it found to a caller that decides.
func Poll(timeout time.Duration, cond func() bool) bool {
	return Poller{interval: DefaultInterval}.Poll(timeout, cond)
}

// Poll is the package's Poll, polling at p's interval.
func (p Poller) Poll(timeout time.Duration, cond func() bool) bool { return p.poll(timeout, cond) }

// Eventually is the package's Eventually, polling at p's interval.
func (p Poller) Eventually(t testing.TB, timeout time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	if !p.poll(timeout, cond) {
		t.Fatalf("timed out after %v: %s", timeout, fmt.Sprintf(format, args...))
	}
}

// Until is the package's Until, polling at p's interval.
func (p Poller) Until(t testing.TB, timeout time.Duration, check func() string, format string, args ...any) {
	t.Helper()
	var last string
	if !p.poll(timeout, func() bool { last = check(); return last == "" }) {
		sep := ": "
		if strings.Contains(strings.TrimSuffix(last, "\n"), "\n") {
			sep = ":\n"
		}
		t.Fatalf("timed out after %v: %s%s%s", timeout, fmt.Sprintf(format, args...), sep, last)
	}
}

// poll calls done until it returns true, and then returns true, or returns false once
// done has said false at a time past timeout (so the last call comes after the deadline).
func (p Poller) poll(timeout time.Duration, done func() bool) bool {
	interval := p.interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	deadline := time.Now().Add(timeout)
	for !done() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
	}
	return true
}

// Lazy is an argument for the message of Eventually or Until (or of any fmt function)
// whose value is taken when the message is made, and formatted by its verb: the state
// when the wait failed, not when it began. For example
//
//	testwait.Eventually(t, 10*time.Second, func() bool { return count() == 3 },
//		"%d pods, want 3", testwait.Lazy(func() any { return count() }))
type Lazy func() any

// Format formats the value l returns as its verb and flags say.
func (l Lazy) Format(f fmt.State, verb rune) { fmt.Fprintf(f, fmt.FormatString(f, verb), l()) }

// Context returns a context that ends after timeout, or when the test ends and its
// cleanups run, whichever comes first; the test need not cancel it.
func Context(t testing.TB, timeout time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return ctx
}
