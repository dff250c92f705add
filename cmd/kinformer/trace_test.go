package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/logbuf"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// traceLine is one line of `watch --trace`: every stage, in the pipeline's order, then
// the total.
var traceLine = regexp.MustCompile(`^trace (ADDED|MODIFIED|DELETED) (\S+) rv=(\d+): ` +
	`read (\S+) → decode (\S+) → fifo (\S+) → store (\S+) → handler (\S+) → queue (\S+) → worker (\S+) = (\S+)$`)

func traceLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "trace ") {
			lines = append(lines, l)
		}
	}
	return lines
}

// With --trace-every 1 every watch event gets a line with each stage's time, after the
// handler's own line for it, and the spans add up to the total.
func TestWatchTrace(t *testing.T) {
	leakcheck.Check(t)
	_, kc, pods := simPods(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Listed, not watched: its line says the informer has synced, and it gets no trace.
	if _, err := pods.Create(ctx, &object.Pod{ObjectMeta: object.ObjectMeta{Name: "listed"}}); err != nil {
		t.Fatal(err)
	}
	var out, errOut logbuf.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"watch", "pods", "--kubeconfig", kc, "--trace", "--trace-every", "1"}, &out, &errOut)
	}()
	waitForOutput(t, &out, "ADD     default/listed")

	events := 0
	for i := range 3 {
		name := fmt.Sprint("web-", i)
		if _, err := pods.Create(ctx, &object.Pod{ObjectMeta: object.ObjectMeta{Name: name}}); err != nil {
			t.Fatal(err)
		}
		if _, err := pods.Patch(ctx, name, listwatch.MergePatch, []byte(`{"metadata":{"labels":{"v":"2"}}}`), ""); err != nil {
			t.Fatal(err)
		}
		events += 2
	}
	if err := pods.Delete(ctx, "web-0", listwatch.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	events++
	testwait.Eventually(t, 10*time.Second, func() bool { return len(traceLines(out.String())) >= events },
		"%d trace lines, want %d:\n%s", testwait.Lazy(func() any { return len(traceLines(out.String())) }), events, &out)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("watch ended with %v", err)
	}

	printed := out.String()
	lines := traceLines(printed)
	if len(lines) != events {
		t.Errorf("%d trace lines, want %d (one per event):\n%s", len(lines), events, printed)
	}
	handlerWord := map[string]string{"ADDED": "ADD", "MODIFIED": "UPDATE", "DELETED": "DELETE"}
	for _, l := range lines {
		m := traceLine.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("line does not have every stage in order:\n%s", l)
			continue
		}
		handled := fmt.Sprintf("%-7s %s rv=%s", handlerWord[m[1]], m[2], m[3])
		if i := strings.Index(printed, handled); i < 0 || i > strings.Index(printed, l) {
			t.Errorf("no handler line %q before\n%s", handled, l)
		}
		var sum time.Duration
		for i, s := range m[4:11] {
			d, err := time.ParseDuration(s)
			if err != nil || d < 0 {
				t.Errorf("span %d is %q (%v), want a duration >= 0:\n%s", i, s, err, l)
			}
			sum += d
		}
		total, err := time.ParseDuration(m[11])
		if err != nil {
			t.Errorf("total %q: %v", m[11], err)
		}
		// Each printed span is rounded to three digits (at worst half a microsecond off).
		if slack := 4*time.Microsecond + total/100; (sum - total).Abs() > slack {
			t.Errorf("spans add up to %v, total says %v:\n%s", sum, total, l)
		}
	}
	// Raw objects, read as JSON under the default encoding (auto).
	for _, want := range []string{fmt.Sprintf("printed %d,", events), "kinformer: trace of default/pods (encoding=json): followed "} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, errOut.String())
		}
	}
}

func TestWatchTraceEveryMustBePositive(t *testing.T) {
	_, kc := startSim(t, apisim.Options{})
	err := run(context.Background(), []string{"watch", "pods", "--kubeconfig", kc, "--trace", "--trace-every", "0"}, &logbuf.Buffer{}, &logbuf.Buffer{})
	if err == nil || exitCode(err) != 2 {
		t.Errorf("error %v, want a usage error", err)
	}
}
