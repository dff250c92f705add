package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/logbuf"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/object"
)

// TestWatchVerboseLogsTheRelist: with -v, a relist forced by the server (410 on the
// watch) is one log line on stderr with its reason, and nothing is logged per event.
func TestWatchVerboseLogsTheRelist(t *testing.T) {
	leakcheck.Check(t)
	sim, kc, pods := simPods(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut logbuf.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"watch", "pods", "-v", "--kubeconfig", kc}, &out, &errOut) }()
	if _, err := pods.Create(ctx, &object.Pod{ObjectMeta: object.ObjectMeta{Name: "a"}}); err != nil {
		t.Fatal(err)
	}
	waitForOutput(t, &out, "ADD     default/a")

	// The open stream ends cleanly after its next event; the watch that follows is
	// answered 410, which only a relist can recover from.
	isWatch := func(r *http.Request) bool { return r.URL.Query().Get("watch") != "" }
	sim.Faults().FailRequests(1, http.StatusGone, 0, isWatch)
	sim.Faults().CutWatches(1, false)
	if _, err := pods.Create(ctx, &object.Pod{ObjectMeta: object.ObjectMeta{Name: "b"}}); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 10*time.Second, func() bool { return strings.Contains(errOut.String(), "relisting") },
		"no relist logged:\n%s", &errOut)
	sim.Faults().CutWatches(0, false)
	for i := range 20 {
		if _, err := pods.Create(ctx, &object.Pod{ObjectMeta: object.ObjectMeta{Name: "c" + string(rune('a'+i))}}); err != nil {
			t.Fatal(err)
		}
	}
	waitForOutput(t, &out, "ADD     default/ct")
	cancel()
	if err := <-done; err != nil {
		t.Errorf("watch ended with %v", err)
	}
	logs := errOut.String()
	var relists []string
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		if strings.Contains(line, "relisting") {
			relists = append(relists, line)
		}
	}
	if len(relists) != 1 || !strings.Contains(relists[0], "reason=") || !strings.Contains(relists[0], "410") && !strings.Contains(strings.ToLower(relists[0]), "gone") {
		t.Errorf("want one relist line with its reason, got %q in:\n%s", relists, logs)
	}
	t.Logf("stderr:\n%s", logs)
	if n := strings.Count(logs, "\n"); n > 3 {
		t.Errorf("%d log lines for one relist and 22 events: something is logged per event:\n%s", n, logs)
	}
}
