package reflector_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/logbuf"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
)

// A reflector stopped while it watches says nothing of the watch its stop ended: it is
// no broken watch (an operator saw one "watch broke ... context canceled" per informer at
// every shutdown).
func TestStoppingIsQuiet(t *testing.T) {
	leakcheck.Check(t)
	lw := pagedServer(t,
		func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"kind":"PodList","metadata":{"resourceVersion":"5"},"items":[`+podJSON("a")+`]}`)
		},
		func(w http.ResponseWriter, r *http.Request) {})
	var logs logbuf.Buffer
	store := &stateStore{}
	fake := clock.NewFake(time.Now())
	r := reflector.New[*object.Pod](lw, store, reflector.Options{Logger: logs.Logger(slog.LevelDebug), Clock: fake})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	testwait.Eventually(t, 10*time.Second, func() bool { return r.Status().State == reflector.StateWatching }, "watching")
	fake.Step(2 * time.Second) // past healthyStream: a watch broken now would be logged at Info
	cancel()
	<-done
	if strings.Contains(logs.String(), "watch broke") || strings.Contains(logs.String(), "backing off") {
		t.Errorf("stopping logged a failure:\n%s", logs.String())
	}
	if err := r.Status().LastError; err != nil {
		t.Errorf("stopping left the error %v in the status", err)
	}
}
