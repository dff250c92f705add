package informer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/indexer"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/logbuf"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// handSource is a ListerWatcher driven by hand: List answers its objects, and each
// Watch is a listwatch.Fake the test sends events on (Stream waits for it).
type handSource struct {
	list    []*object.Pod
	watches chan *listwatch.Fake[*object.Pod]
}

func newHandSource(list ...*object.Pod) *handSource {
	return &handSource{list: list, watches: make(chan *listwatch.Fake[*object.Pod], 8)}
}

func (s *handSource) List(context.Context, listwatch.ListOptions) (*object.List[*object.Pod], error) {
	return &object.List[*object.Pod]{ListMeta: object.ListMeta{ResourceVersion: "1"}, Items: s.list}, nil
}

func (s *handSource) Watch(context.Context, listwatch.WatchOptions) (listwatch.Stream[*object.Pod], error) {
	w := listwatch.NewFake[*object.Pod]()
	s.watches <- w
	return w, nil
}

// stream waits for the informer's watch.
func (s *handSource) stream(t *testing.T) *listwatch.Fake[*object.Pod] {
	t.Helper()
	select {
	case w := <-s.watches:
		return w
	case <-time.After(10 * time.Second):
		t.Fatal("no watch")
		return nil
	}
}

func podAt(name, rv string, labels map[string]string) *object.Pod {
	return &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: "ns", Name: name, UID: "uid-" + name, ResourceVersion: rv, Labels: labels}}
}

var errNoTeam = errors.New("no team label")

func byTeam(p *object.Pod) ([]string, error) {
	team, ok := p.Labels["team"]
	if !ok {
		return nil, errNoTeam
	}
	return []string{team}, nil
}

// An index function that fails for one object leaves that object out of the cache (at
// its previous state), says so in the log, the status, a metric and OnStatus, and every
// other object keeps flowing, before and after. (Before, the first such error ended the
// informer's processing loop without a word and froze the cache.)
func TestIndexFailureLeavesOneObjectOutAndTheRestFlows(t *testing.T) {
	leakcheck.Check(t)
	src := newHandSource(podAt("good", "1", map[string]string{"team": "a"}))
	reg := prometheus.NewRegistry()
	metrics, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	var logs logbuf.Buffer
	inf := mustNew(t, src, Options[*object.Pod]{Name: "pods", Metrics: metrics, Logger: logs.Logger(slog.LevelInfo),
		Indexers: map[string]indexer.IndexFunc[*object.Pod]{"team": byTeam}})
	var mu sync.Mutex
	var told []SyncStatus
	inf.OnStatus(func(s SyncStatus) { mu.Lock(); told = append(told, s); mu.Unlock() })
	rec := newRecorder()
	if _, err := inf.AddEventHandler(rec, HandlerOptions{}); err != nil {
		t.Fatal(err)
	}
	run(t, inf)
	w := src.stream(t)

	w.Add(podAt("bad", "2", nil)) // no team: the index function fails
	w.Modify(podAt("good", "3", map[string]string{"team": "b"}))
	w.Add(podAt("other", "4", map[string]string{"team": "a"}))
	testwait.Eventually(t, 10*time.Second, func() bool { return cmp.Equal(cacheState(inf), map[string]string{"ns/good": "3", "ns/other": "4"}) },
		"waiting for the objects after the failing one")

	st := inf.Status()
	var ierr *indexer.IndexError
	if st.LeftOut != 1 || !errors.As(st.StoreError, &ierr) || ierr.Key != "ns/bad" || ierr.Index != "team" || !errors.Is(st.StoreError, errNoTeam) {
		t.Errorf("status: %d left out, store error %v; want ns/bad under index team, errNoTeam", st.LeftOut, st.StoreError)
	}
	if got := metric(t, reg, "kinformer_informer_store_errors_total", map[string]string{"name": "pods"}); got != 1 {
		t.Errorf("kinformer_informer_store_errors_total = %v, want 1", got)
	}
	if log := logs.String(); !strings.Contains(log, "left out of the cache") || !strings.Contains(log, "ns/bad") {
		t.Errorf("the log does not name the object left out:\n%s", log)
	}
	mu.Lock()
	toldOfIt := len(told) > 0 && told[len(told)-1].LeftOut == 1
	mu.Unlock()
	if !toldOfIt {
		t.Error("OnStatus was not told of the object left out")
	}
	if got := rec.linesFor("ns/bad"); len(got) != 0 {
		t.Errorf("handlers heard of an object the cache does not hold: %v", got)
	}

	// A later state it can index brings it in, and the status clears.
	w.Modify(podAt("bad", "5", map[string]string{"team": "c"}))
	testwait.Eventually(t, 10*time.Second, func() bool { _, ok := inf.Lister().Get("ns/bad"); return ok }, "waiting for the fixed object")
	if st := inf.Status(); st.LeftOut != 0 || st.StoreError != nil {
		t.Errorf("after the fix: %d left out, store error %v", st.LeftOut, st.StoreError)
	}
	if d := cmp.Diff([]string{"add ns/bad initial=false"}, rec.linesFor("ns/bad")); d != "" {
		t.Errorf("the handler's view of the fixed object (-want +got):\n%s", d)
	}
	if keys, _ := inf.Cache().IndexKeys("team", "c"); !cmp.Equal(keys, []string{"ns/bad"}) {
		t.Errorf("index team=c holds %v", keys)
	}
}

// An option that cannot be applied is an error, not a silent loss: an index named
// "namespace" (the built-in one) used to discard every user index with it.
func TestNewRefusesATakenIndexName(t *testing.T) {
	_, err := New[*object.Pod](newHandSource(), Options[*object.Pod]{Name: "pods",
		Indexers: map[string]indexer.IndexFunc[*object.Pod]{indexer.NamespaceIndex: indexer.ByNamespace[*object.Pod], "team": byTeam}})
	if err == nil || !strings.Contains(err.Error(), `"namespace" already exists`) {
		t.Errorf("New = %v, want an error naming the taken index", err)
	}
}

type panicky struct{ on string }

func (p panicky) OnAdd(obj *object.Pod, _ bool) {
	if obj.Name == p.on {
		panic(fmt.Sprintf("cannot handle %s", obj.Name))
	}
}
func (panicky) OnUpdate(_, _ *object.Pod)      {}
func (panicky) OnDelete(_ *object.Pod, _ bool) {}

// A handler that panics is stopped, with its status, a log line with the stack and a
// metric; the other handlers, the cache and the process go on.
func TestPanickingHandlerStopsAloneAndSaysWhy(t *testing.T) {
	leakcheck.Check(t)
	src := newHandSource()
	reg := prometheus.NewRegistry()
	metrics, _ := NewMetrics(reg)
	var logs logbuf.Buffer
	inf := mustNew(t, src, Options[*object.Pod]{Name: "pods", Metrics: metrics, Logger: logs.Logger(slog.LevelInfo)})
	bad, err := inf.AddEventHandler(panicky{on: "boom"}, HandlerOptions{Name: "fragile"})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	good, _ := inf.AddEventHandler(rec, HandlerOptions{Name: "steady"})
	run(t, inf)
	if err := WaitForSync(testwait.Context(t, 10*time.Second), inf, bad, good); err != nil {
		t.Fatal(err)
	}
	w := src.stream(t)
	w.Add(podAt("boom", "2", nil))
	w.Add(podAt("after", "3", nil))
	testwait.Eventually(t, 10*time.Second, func() bool { return rec.count("add ns/after") == 1 }, "waiting for the steady handler")
	select {
	case <-bad.Stopped():
	case <-time.After(10 * time.Second):
		t.Fatal("the panicking handler was not stopped")
	}
	var p *HandlerPanic
	if !errors.As(bad.Err(), &p) || p.Handler != "fragile" || fmt.Sprint(p.Value) != "cannot handle boom" || len(p.Stack) == 0 {
		t.Errorf("Err() = %v, want the handler's panic with its stack", bad.Err())
	}
	if good.Err() != nil {
		t.Errorf("the steady handler reports %v", good.Err())
	}
	st := inf.Status()
	if len(st.StoppedHandlers) != 1 || st.StoppedHandlers[0].Handler != "fragile" {
		t.Errorf("status names the stopped handlers %v", st.StoppedHandlers)
	}
	if got := metric(t, reg, "kinformer_informer_handler_panics_total", map[string]string{"name": "pods", "handler": "fragile"}); got != 1 {
		t.Errorf("kinformer_informer_handler_panics_total = %v", got)
	}
	if log := logs.String(); !strings.Contains(log, "handler panicked") || !strings.Contains(log, "failures_test.go") {
		t.Errorf("the log has no line with the panic's stack:\n%s", log)
	}
	if _, ok := inf.Lister().Get("ns/boom"); !ok {
		t.Error("the cache lost the object a handler panicked on")
	}
}

// A handler stopped by a panic before it synced makes WaitForSync fail at once rather
// than wait for a sync that cannot come.
func TestWaitForSyncReportsAHandlerStoppedBeforeSync(t *testing.T) {
	leakcheck.Check(t)
	src := newHandSource(podAt("boom", "1", nil))
	inf := mustNew(t, src, Options[*object.Pod]{Name: "pods"})
	bad, _ := inf.AddEventHandler(panicky{on: "boom"}, HandlerOptions{Name: "fragile"})
	run(t, inf)
	err := WaitForSync(testwait.Context(t, 10*time.Second), inf, bad)
	var p *HandlerPanic
	if !errors.As(err, &p) || p.Handler != "fragile" {
		t.Errorf("WaitForSync = %v, want the handler's panic", err)
	}
}

// The initial list of a cache larger than a handler's buffer is coalesced (that is how
// the buffer bounds memory), but it is no slow handler: it must not be reported as one.
// A burst after the sync still is.
func TestInitialListLargerThanTheBufferIsNotAWarning(t *testing.T) {
	leakcheck.Check(t)
	var initial []*object.Pod
	for i := range 50 {
		initial = append(initial, podAt(fmt.Sprint("p", i), "1", nil))
	}
	src := newHandSource(initial...)
	var logs logbuf.Buffer
	inf := mustNew(t, src, Options[*object.Pod]{Name: "pods", Logger: logs.Logger(slog.LevelInfo)})
	block := make(chan struct{})
	h := newRecorder()
	h.block = block
	reg, _ := inf.AddEventHandler(h, HandlerOptions{Name: "small", BufferSize: 4})
	run(t, inf)
	w := src.stream(t)
	close(block)
	if err := WaitForSync(testwait.Context(t, 10*time.Second), inf, reg); err != nil {
		t.Fatal(err)
	}
	if log := logs.String(); strings.Contains(log, "level=WARN") || strings.Contains(log, "caught up") {
		t.Errorf("the initial list was reported as a slow handler:\n%s", log)
	}

	h.block = make(chan struct{}) // now the handler falls behind a burst
	for i := range 20 {
		w.Modify(podAt(fmt.Sprint("p", i), "2", map[string]string{"v": "2"}))
	}
	testwait.Eventually(t, 10*time.Second, func() bool { return strings.Contains(logs.String(), "level=WARN") }, "waiting for the slow handler warning")
	close(h.block)
}
