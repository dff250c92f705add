package leakcheck

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// Check records the running goroutines and, when the test ends, fails it if new ones are
// still running after a grace period (goroutines wind down asynchronously).
func Check(t testing.TB) {
	before := map[string]bool{}
	for _, g := range goroutines() {
		before[g.id] = true
	}
	t.Cleanup(func() {
		if t.Failed() {
			return
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			var leaked []string
			for _, g := range goroutines() {
				if !before[g.id] && !ignored(g.stack) {
					leaked = append(leaked, g.stack)
				}
			}
			if len(leaked) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("%d goroutine(s) leaked:\n\n%s", len(leaked), strings.Join(leaked, "\n\n"))
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

type goroutine struct{ id, stack string }

// Goroutines returns every running goroutine's stack, by goroutine id: for tests that
// compare what runs at two moments themselves (the chaos leak check).
func Goroutines() map[string]string {
	out := map[string]string{}
	for _, g := range goroutines() {
		out[g.id] = g.stack
	}
	return out
}

func goroutines() []goroutine {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []goroutine
	for _, g := range strings.Split(string(buf), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		fields := strings.Fields(header) // "goroutine 12 [running]:"
		if len(fields) < 2 {
			continue
		}
		out = append(out, goroutine{id: fields[1], stack: g})
	}
	return out
}

// ignored are goroutines of the runtime and the test framework, and idle pooled HTTP
// connections (closed by their transport's CloseIdleConnections, which tests call).
func ignored(stack string) bool {
	for _, s := range []string{
		"testing.(*T).Run", "testing.tRunner", "testing.(*M).", "runtime.goexit\n\t", "signal.signal_recv",
		"leakcheck.goroutines", "created by testing.(*T).Run",
	} {
		if strings.Contains(stack, s) && !strings.Contains(stack, "kinformer/") {
			return true
		}
	}
	return strings.Contains(stack, "leakcheck.Check")
}
