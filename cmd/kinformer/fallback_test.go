package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/logbuf"
	"github.com/kinformer/kinformer/object"
)

// A server that refuses the streaming list with a 400 makes the reflector fall back to
// list+watch, the 400 left in its status while that list runs: the command goes on to
// sync, it does not take that 400 for a selector the server refused.
func TestWatchSurvivesAStreamingListRefusedWith400(t *testing.T) {
	leakcheck.Check(t)
	sim, kc, pods := simPods(t)
	if _, err := pods.Create(context.Background(), &object.Pod{ObjectMeta: object.ObjectMeta{Name: "a"}}); err != nil {
		t.Fatal(err)
	}
	streaming := func(r *http.Request) bool { return r.URL.Query().Get("sendInitialEvents") == "true" }
	sim.Faults().FailRequests(1, http.StatusBadRequest, 0, streaming)
	sim.Faults().Delay(700 * time.Millisecond) // the list after the fallback outlasts a status check
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut logbuf.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"watch", "pods", "--streaming-list", "--kubeconfig", kc}, &out, &errOut)
	}()
	waitForOutput(t, &out, "ADD     default/a")
	cancel()
	if err := <-done; err != nil {
		t.Errorf("watch ended with %v\n%s", err, errOut.String())
	}
}
