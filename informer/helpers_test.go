package informer

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/simtest"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
)

// recorder is a handler that applies its events to its own view and logs them. It also
// checks that each event follows from what it was told before (an update starts from
// the state it last saw, of the same object; an add is of an object it does not hold; a
// delete is of one it holds) and keeps any violation.
type recorder struct {
	mu         sync.Mutex
	view       map[string]string // key → resourceVersion
	uids       map[string]string // key → UID
	log        []string
	violations []string
	block      chan struct{} // when set, each call waits on it
}

func newRecorder() *recorder { return &recorder{view: map[string]string{}, uids: map[string]string{}} }

func (r *recorder) violate(format string, args ...any) {
	r.violations = append(r.violations, fmt.Sprintf(format, args...))
}

func (r *recorder) brokenRules() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.violations...)
}

func (r *recorder) wait() {
	if r.block != nil {
		<-r.block
	}
}

func (r *recorder) OnAdd(p *object.Pod, initial bool) {
	r.wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	key := object.Key(p)
	if rv, held := r.view[key]; held {
		r.violate("add %s@%s while holding it at %s", key, p.ResourceVersion, rv)
	}
	r.view[key], r.uids[key] = p.ResourceVersion, p.UID
	r.log = append(r.log, fmt.Sprintf("add %s initial=%v", key, initial))
}

func (r *recorder) OnUpdate(old, p *object.Pod) {
	r.wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	key := object.Key(p)
	if rv, held := r.view[key]; !held || rv != old.ResourceVersion || r.uids[key] != old.UID || old.UID != p.UID {
		r.violate("update %s %s/%s→%s/%s while holding %s/%s (held %v)", key, old.UID, old.ResourceVersion,
			p.UID, p.ResourceVersion, r.uids[key], rv, held)
	}
	r.view[key], r.uids[key] = p.ResourceVersion, p.UID
	kind := "update"
	if old == p {
		kind = "resync"
	}
	r.log = append(r.log, fmt.Sprintf("%s %s", kind, object.Key(p)))
}

func (r *recorder) OnDelete(p *object.Pod, fsu bool) {
	r.wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	key := object.Key(p)
	if _, held := r.view[key]; !held || r.uids[key] != p.UID {
		r.violate("delete %s/%s while holding %s (held %v)", key, p.UID, r.uids[key], held)
	}
	delete(r.view, key)
	delete(r.uids, key)
	r.log = append(r.log, fmt.Sprintf("delete %s fsu=%v", key, fsu))
}

func (r *recorder) snapshot() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]string, len(r.view))
	for k, v := range r.view {
		out[k] = v
	}
	return out
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

// eventually polls cond for up to 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
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
	eventually(t, "the cut", func() bool { return rec.count("add ns/"+cut) == 1 })
	change()
	e.sim.Compact()
	f.CutWatches(0, false)
	f.FailRequests(0, 0, 0, nil)
	eventually(t, "the relist", func() bool { return cmp.Equal(rec.snapshot(), e.serverState(t)) })
}
