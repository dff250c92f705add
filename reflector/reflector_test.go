package reflector_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/simtest"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
)

// logStore records what the reflector tells it.
type logStore struct {
	mu  sync.Mutex
	log []string
}

func (s *logStore) rec(f string, args ...any) {
	s.mu.Lock()
	s.log = append(s.log, fmt.Sprintf(f, args...))
	s.mu.Unlock()
}
func (s *logStore) Add(p *object.Pod)    { s.rec("add %s", p.Name) }
func (s *logStore) Update(p *object.Pod) { s.rec("update %s", p.Name) }
func (s *logStore) Delete(p *object.Pod) { s.rec("delete %s", p.Name) }
func (s *logStore) Replace(ps []*object.Pod, rv string) {
	s.rec("replace %d", len(ps))
}
func (s *logStore) has(entry string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.log {
		if l == entry {
			return true
		}
	}
	return false
}

func TestResumesWithoutRelistWhenTheServerEndsTheWatch(t *testing.T) {
	sim, c := simtest.Start(t, apisim.Options{})
	info, _ := c.Discover(context.Background(), "pods")
	pods := listwatch.For[*object.Pod](c, info, "ns")
	store := &logStore{}
	r := reflector.New[*object.Pod](pods, store, reflector.Options{Name: "pods",
		Backoff: reflector.Backoff{Initial: 10 * time.Millisecond, Jitter: -1}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	testwait.Eventually(t, 10*time.Second, func() bool { return r.Status().State == reflector.StateWatching }, "waiting for the reflector to watch")
	sim.Faults().CutWatches(1, false) // every stream ends cleanly after one event
	for i := range 3 {
		pods.Create(ctx, &object.Pod{ObjectMeta: object.ObjectMeta{Name: fmt.Sprint("p", i)}})
	}
	testwait.Eventually(t, 10*time.Second, func() bool { return store.has("add p2") }, "waiting for add p2 in the store")
	store.mu.Lock()
	defer store.mu.Unlock()
	replaces := 0
	for _, l := range store.log {
		if strings.HasPrefix(l, "replace") {
			replaces++
		}
	}
	if replaces != 1 {
		t.Errorf("%d lists; a cleanly ended watch must resume without a relist: %v", replaces, store.log)
	}
	if r.LastSyncResourceVersion() == "" {
		t.Error("no resourceVersion recorded")
	}
}

// TestShortWatchIsAFailure: a server (or proxy) that ends every watch at once with no
// event would make a naive loop re-watch thousands of times a second. Such a watch counts
// as a failure and goes through the backoff.
func TestShortWatchIsAFailure(t *testing.T) {
	leakcheck.Check(t)
	var watches atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case servedDiscovery(w, r):
		case r.URL.Query().Get("watch") == "1":
			watches.Add(1) // 200 with an empty body: the stream ends at once
		default:
			w.Write([]byte(`{"metadata":{"resourceVersion":"5"},"items":[]}`))
		}
	}))
	defer srv.Close()
	c, _ := listwatch.New(&listwatch.Config{Host: srv.URL, QPS: -1})
	defer c.CloseIdleConnections()
	info, err := c.Discover(context.Background(), "pods")
	if err != nil {
		t.Fatal(err)
	}
	r := reflector.New[*object.Pod](listwatch.For[*object.Pod](c, info, "ns"), &logStore{},
		reflector.Options{Backoff: reflector.Backoff{Initial: 100 * time.Millisecond, Max: time.Second, Jitter: -1}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	r.Run(ctx)
	// 100 + 200 + 400 ms of backoff fit in a second: about 4 watches, never hundreds.
	if n := watches.Load(); n < 2 || n > 5 {
		t.Errorf("%d watches in 1 s", n)
	}
	if err := r.Status().LastError; err == nil || !strings.Contains(err.Error(), "without any event") {
		t.Errorf("last error %v", err)
	}
}
