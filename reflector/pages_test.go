package reflector_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
)

func podJSON(name string) string {
	return fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"ns","resourceVersion":"5"}}`, name)
}

// servedDiscovery answers r if it is a discovery request, as an apiserver with only pods
// would, and says whether it did; any answer is JSON.
func servedDiscovery(w http.ResponseWriter, r *http.Request) bool {
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/api":
		w.Write([]byte(`{"versions":["v1"]}`))
	case "/apis":
		w.Write([]byte(`{"groups":[]}`))
	case "/api/v1":
		w.Write([]byte(`{"resources":[{"name":"pods","namespaced":true,"kind":"Pod"}]}`))
	default:
		return false
	}
	return true
}

// pagedServer serves a list of two pages (the first with the continue token "p2") and
// watches that wait for the client to go. first writes the first page; second the second.
func pagedServer(t *testing.T, first, second func(w http.ResponseWriter, r *http.Request)) *listwatch.Resource[*object.Pod] {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case servedDiscovery(w, r):
		case r.URL.Query().Get("watch") == "1":
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		case r.URL.Query().Get("continue") == "p2":
			second(w, r)
		default:
			first(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := listwatch.New(&listwatch.Config{Host: srv.URL, QPS: -1, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	info, err := c.Discover(testwait.Context(t, 10*time.Second), "pods")
	if err != nil {
		t.Fatal(err)
	}
	return listwatch.For[*object.Pod](c, info, "ns")
}

// The second page is asked for while the first is still arriving: the server holds the
// first page's items back until the second page's request comes (or for 10 s, after
// which the test fails), and both pages are stored, in order.
func TestNextPageIsAskedForWhileThisOneArrives(t *testing.T) {
	leakcheck.Check(t)
	asked := make(chan struct{})
	var waited atomic.Bool
	lw := pagedServer(t,
		func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"kind":"PodList","metadata":{"resourceVersion":"5","continue":"p2"},"items":[`)
			w.(http.Flusher).Flush()
			select {
			case <-asked:
			case <-time.After(10 * time.Second):
				waited.Store(true)
			}
			fmt.Fprint(w, podJSON("a")+`]}`)
		},
		func(w http.ResponseWriter, r *http.Request) {
			close(asked)
			fmt.Fprint(w, `{"kind":"PodList","metadata":{"resourceVersion":"5"},"items":[`+podJSON("b")+`]}`)
		})
	store := &stateStore{}
	r := reflector.New[*object.Pod](lw, store, reflector.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	testwait.Eventually(t, 20*time.Second, func() bool { return len(store.snapshot()) == 2 }, "both pages stored")
	cancel()
	<-done
	if waited.Load() {
		t.Error("the second page was asked for only once the first had arrived")
	}
}

// A page that fails after its token was read takes the page asked for ahead of it down
// with it: that request is cancelled and its goroutine ends (leakcheck), and nothing is
// stored.
func TestThePageAheadOfAFailedOneIsCancelled(t *testing.T) {
	leakcheck.Check(t)
	cancelled, asked := make(chan struct{}), make(chan struct{})
	lw := pagedServer(t,
		func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"kind":"PodList","metadata":{"resourceVersion":"5","continue":"p2"},"items":[`)
			w.(http.Flusher).Flush()
			select { // the second page's request is out (else the test fails below)
			case <-asked:
			case <-time.After(10 * time.Second):
			}
			fmt.Fprint(w, `{"metadata":nonsense}]}`)
		},
		func(w http.ResponseWriter, r *http.Request) {
			close(asked)
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			close(cancelled)
		})
	store := &stateStore{}
	r := reflector.New[*object.Pod](lw, store, reflector.Options{Backoff: reflector.Backoff{Initial: time.Hour, Max: time.Hour, Jitter: -1}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	select {
	case <-cancelled:
	case <-time.After(20 * time.Second):
		t.Error("the second page's request was not cancelled")
	}
	testwait.Eventually(t, 10*time.Second, func() bool { return r.Status().LastError != nil }, "the list's error in the status")
	cancel()
	<-done
	if got := store.snapshot(); len(got) != 0 {
		t.Errorf("stored %v after a failed list", got)
	}
}

// The page asked for ahead answers 410 (its token expired) while the page before it is
// still arriving: the list starts over once, whole and unpaginated, as a 410 between
// pages makes it, and stores what that list holds, nothing twice.
func TestAnExpiredPageAheadRestartsTheListWhole(t *testing.T) {
	leakcheck.Check(t)
	asked := make(chan struct{})
	var whole atomic.Int32
	lw := pagedServer(t,
		func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("limit") == "" { // the restart: everything at once
				whole.Add(1)
				fmt.Fprint(w, `{"kind":"PodList","metadata":{"resourceVersion":"9"},"items":[`+podJSON("a")+`,`+podJSON("b")+`,`+podJSON("c")+`]}`)
				return
			}
			fmt.Fprint(w, `{"kind":"PodList","metadata":{"resourceVersion":"5","continue":"p2"},"items":[`)
			w.(http.Flusher).Flush()
			select {
			case <-asked:
			case <-time.After(10 * time.Second):
			}
			fmt.Fprint(w, podJSON("a")+`]}`)
		},
		func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusGone)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410,"message":"the continue token expired"}`)
			close(asked)
		})
	store := &stateStore{}
	r := reflector.New[*object.Pod](lw, store, reflector.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	testwait.Eventually(t, 20*time.Second, func() bool { return len(store.snapshot()) == 3 }, "the whole list stored")
	cancel()
	<-done
	if n := whole.Load(); n != 1 {
		t.Errorf("%d whole lists, want 1", n)
	}
	if got := r.Status().Relists; got != 0 {
		t.Errorf("%d relists: the restart is part of the first list", got)
	}
}
