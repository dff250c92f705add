package informer

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/eventcheck"
	"github.com/kinformer/kinformer/internal/testrig/simtest"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
)

// recorder is a handler that logs its events and builds its own view from them with
// eventcheck, which also keeps any event that does not follow from the ones before it.
type recorder struct {
	check *eventcheck.View[*object.Pod]
	mu    sync.Mutex
	log   []string
	block chan struct{} // when set, each call waits on it
	calls atomic.Int32  // calls begun, counted before any wait on block
}

func newRecorder() *recorder { return &recorder{check: eventcheck.New[*object.Pod]()} }

func (r *recorder) wait() {
	r.calls.Add(1)
	if r.block != nil {
		<-r.block
	}
}

// apply runs the view's update and logs the event under one lock, so a test that sees
// the view change also finds the event in the log.
func (r *recorder) apply(update func(), format string, args ...any) {
	r.wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	update()
	r.log = append(r.log, fmt.Sprintf(format, args...))
}

func (r *recorder) OnAdd(p *object.Pod, initial bool) {
	r.apply(func() { r.check.OnAdd(p, initial) }, "add %s initial=%v", object.Key(p), initial)
}

func (r *recorder) OnUpdate(old, p *object.Pod) {
	kind := "update"
	if old == p {
		kind = "resync"
	}
	r.apply(func() { r.check.OnUpdate(old, p) }, "%s %s", kind, object.Key(p))
}

func (r *recorder) OnDelete(p *object.Pod, finalStateUnknown bool) {
	r.apply(func() { r.check.OnDelete(p, finalStateUnknown) }, "delete %s finalStateUnknown=%v", object.Key(p), finalStateUnknown)
}

func (r *recorder) snapshot() map[string]string { return r.check.Snapshot() }

// handed returns how many notifications the informer has handed l (each queued, or
// coalesced under a key newly queued), whether delivered yet or not.
func (l *listener[T]) handed() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.queued
}

// linesFor returns the log lines about key, in order.
func (r *recorder) linesFor(key string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, l := range r.log {
		if f := strings.Fields(l); len(f) > 1 && f[1] == key {
			out = append(out, l)
		}
	}
	return out
}

func (r *recorder) count(prefix string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, l := range r.log {
		if len(l) >= len(prefix) && l[:len(prefix)] == prefix {
			n++
		}
	}
	return n
}

// env is a simulator, a client, and a pods resource in namespace "ns".
type env struct {
	sim    *apisim.Server
	client *listwatch.Client
	pods   *listwatch.Resource[*object.Pod]
	gaps   int // gapThenRelist calls so far
}

func newEnv(t *testing.T, opts apisim.Options) *env {
	t.Helper()
	sim, c := simtest.Start(t, opts)
	info, err := c.Discover(context.Background(), "pods")
	if err != nil {
		t.Fatal(err)
	}
	return &env{sim: sim, client: c, pods: listwatch.For[*object.Pod](c, info, "ns")}
}

// fastReflector: short backoffs and watch timeouts so faults resolve within a test.
func fastReflector() reflector.Options {
	return reflector.Options{
		Backoff:         reflector.Backoff{Initial: 20 * time.Millisecond, Max: 200 * time.Millisecond, Jitter: -1},
		WatchTimeoutMin: 5 * time.Second, WatchTimeoutMax: 5 * time.Second, IdleMargin: 5 * time.Second,
	}
}

// run starts inf and stops it (waiting for every goroutine) when the test ends.
func run[T object.Object](t *testing.T, inf *Informer[T]) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		inf.Run(ctx)
		close(done)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

func (e *env) create(t *testing.T, name string, labels map[string]string) *object.Pod {
	t.Helper()
	p, err := e.pods.Create(context.Background(), &object.Pod{ObjectMeta: object.ObjectMeta{Name: name, Labels: labels}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (e *env) relabel(t *testing.T, name, value string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"labels":{"v":%q}}}`, value)
	if _, err := e.pods.Patch(context.Background(), name, listwatch.MergePatch, []byte(patch), ""); err != nil {
		t.Fatal(err)
	}
}

func (e *env) remove(t *testing.T, name string) {
	t.Helper()
	if err := e.pods.Delete(context.Background(), name, listwatch.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// serverState lists the server: key → resourceVersion.
func (e *env) serverState(t *testing.T) map[string]string {
	t.Helper()
	l, err := e.pods.List(context.Background(), listwatch.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range l.Items {
		out[object.Key(p)] = p.ResourceVersion
	}
	return out
}

func cacheState(inf *Informer[*object.Pod]) map[string]string {
	out := map[string]string{}
	for _, p := range inf.Cache().List() {
		out[object.Key(p)] = p.ResourceVersion
	}
	return out
}

// gapThenRelist opens a gap in the informer's watch: it ends the watch (once rec has
// seen the event that ends it), refuses new ones while change runs, then compacts the
// history, so the re-watch gets 410 and only a relist can catch up. It returns once rec's
// view equals the server again.
func (e *env) gapThenRelist(t *testing.T, rec *recorder, change func()) {
	t.Helper()
	f := e.sim.Faults()
	f.FailRequests(1000, http.StatusServiceUnavailable, 0, func(r *http.Request) bool { return r.URL.Query().Get("watch") == "1" })
	f.CutWatches(1, false)
	e.gaps++
	cut := fmt.Sprint("cut-", e.gaps)
	e.create(t, cut, nil)
	testwait.Eventually(t, 10*time.Second, func() bool { return rec.count("add ns/"+cut) == 1 }, "waiting for the cut")
	change()
	e.sim.Compact()
	f.CutWatches(0, false)
	f.FailRequests(0, 0, 0, nil)
	testwait.Eventually(t, 10*time.Second, func() bool { return cmp.Equal(rec.snapshot(), e.serverState(t)) }, "waiting for the relist")
}

// mustNew is New for options that are right.
func mustNew(t testing.TB, lw reflector.ListerWatcher[*object.Pod], opts Options[*object.Pod]) *Informer[*object.Pod] {
	t.Helper()
	inf, err := New[*object.Pod](lw, opts)
	if err != nil {
		t.Fatal(err)
	}
	return inf
}
