package informer

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

func TestInformerDeliversInitialListThenChanges(t *testing.T) {
	e := newEnv(t, apisim.Options{})
	e.create(t, "a", map[string]string{"app": "web"})
	e.create(t, "b", map[string]string{"app": "db"})
	inf := mustNew(t, e.pods, Options[*object.Pod]{Name: "pods", Reflector: fastReflector()})
	rec := newRecorder()
	reg, _ := inf.AddEventHandler(rec, HandlerOptions{})
	run(t, inf)
	if err := WaitForSync(testwait.Context(t, 10*time.Second), inf, reg); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"add ns/a initial=true", "add ns/b initial=true"}, rec.log); d != "" {
		t.Errorf("initial (-want +got):\n%s", d)
	}
	e.create(t, "c", nil)
	e.relabel(t, "a", "2")
	e.remove(t, "b")
	testwait.Eventually(t, 10*time.Second, func() bool { return cmp.Equal(rec.snapshot(), e.serverState(t)) }, "waiting for the handler to see the changes")
	if d := cmp.Diff(e.serverState(t), cacheState(inf)); d != "" {
		t.Errorf("cache vs server:\n%s", d)
	}
	web, _ := object.ParseSelector("app=web")
	if got := inf.Lister().Namespace("ns").List(web); len(got) != 1 || got[0].Name != "a" {
		t.Errorf("lister: %v", got)
	}
	if _, ok := inf.Lister().Get("ns/c"); !ok {
		t.Error("lister Get")
	}
}

func TestLateHandlerGetsReplayAndOwnSync(t *testing.T) {
	e := newEnv(t, apisim.Options{})
	e.create(t, "a", nil)
	inf := mustNew(t, e.pods, Options[*object.Pod]{Reflector: fastReflector()})
	run(t, inf)
	if err := WaitForSync(testwait.Context(t, 10*time.Second), inf); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	rec.block = make(chan struct{})
	reg, _ := inf.AddEventHandler(rec, HandlerOptions{})
	// The handler is inside its first call, the replay's only add, and held there.
	testwait.Eventually(t, 10*time.Second, func() bool { return rec.calls.Load() >= 1 }, "waiting for the handler's first call")
	if reg.HasSynced() {
		t.Error("a handler that has not taken its replay is not synced") // not Fatal: the handler must be let go
	}
	close(rec.block)
	if err := WaitForSync(testwait.Context(t, 10*time.Second), reg); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"add ns/a initial=true"}, rec.log); d != "" {
		t.Error(d)
	}
	reg.Remove()
	handed := reg.l.handed()
	// The informer hands each change to its handlers in the order they were added. Once
	// a handler added after the removal has b, the removed one, had it still been
	// registered, would have been handed b before it: delivered, or queued to be.
	other := newRecorder()
	otherReg, _ := inf.AddEventHandler(other, HandlerOptions{})
	if err := WaitForSync(testwait.Context(t, 10*time.Second), otherReg); err != nil {
		t.Fatal(err)
	}
	e.create(t, "b", nil)
	testwait.Eventually(t, 10*time.Second, func() bool { return other.count("add ns/b initial=false") == 1 }, "waiting for the other handler to hear of b")
	if n := reg.l.handed() - handed; n != 0 || rec.count("add ns/b") != 0 {
		t.Errorf("a removed handler was handed %d notifications; its lines about b: %v", n, rec.linesFor("ns/b"))
	}
}

// TestSlowHandlerNeitherBlocksOthersNorLosesFinalState: one handler is stuck while 500
// changes happen. The other sees them all at once; the stuck one's buffer stays bounded
// (coalescing), and once released it ends with exactly the server's state.
func TestSlowHandlerNeitherBlocksOthersNorLosesFinalState(t *testing.T) {
	e := newEnv(t, apisim.Options{})
	inf := mustNew(t, e.pods, Options[*object.Pod]{Reflector: fastReflector()})
	fast, slow := newRecorder(), newRecorder()
	slow.block = make(chan struct{})
	inf.AddEventHandler(fast, HandlerOptions{Name: "fast"})
	slowReg, _ := inf.AddEventHandler(slow, HandlerOptions{Name: "slow", BufferSize: 10})
	run(t, inf)
	testwait.Eventually(t, 10*time.Second, inf.HasSynced, "waiting for sync")
	for i := range 50 {
		name := string(rune('a'+i%26)) + string(rune('a'+i/26))
		e.create(t, name, nil)
		for v := range 8 {
			e.relabel(t, name, string(rune('0'+v)))
		}
		if i%3 == 0 {
			e.remove(t, name)
		}
	}
	want := e.serverState(t)
	testwait.Eventually(t, 10*time.Second, func() bool { return cmp.Equal(fast.snapshot(), want) }, "waiting for the fast handler")
	stats := inf.handlerStats()
	for _, s := range stats {
		if s.name == "slow" && (s.depth > 10+50 || s.coalesced == 0) {
			t.Errorf("slow handler buffer: depth %d (bound 10 + one per object), coalesced %d", s.depth, s.coalesced)
		}
	}
	close(slow.block)
	testwait.Eventually(t, 10*time.Second, func() bool { return cmp.Equal(slow.snapshot(), want) }, "waiting for the slow handler")
	if !slowReg.HasSynced() {
		t.Error("slow handler never synced")
	}
}

func TestRelistAfterCompactionEmitsTombstones(t *testing.T) {
	e := newEnv(t, apisim.Options{})
	e.create(t, "keep", nil)
	e.create(t, "doomed", nil)
	e.create(t, "reborn", nil)
	inf := mustNew(t, e.pods, Options[*object.Pod]{Reflector: fastReflector()})
	rec := newRecorder()
	inf.AddEventHandler(rec, HandlerOptions{})
	run(t, inf)
	testwait.Eventually(t, 10*time.Second, inf.HasSynced, "waiting for sync")
	// Cut the watch and refuse new ones, change things, compact: the re-watch from the
	// old resourceVersion then gets 410 and only a relist can catch up.
	e.gapThenRelist(t, rec, func() {
		e.remove(t, "doomed")
		e.create(t, "born", nil)
		e.remove(t, "reborn")
		e.create(t, "reborn", nil) // same name, another object (UID)
	})
	if rec.count("delete ns/doomed finalStateUnknown=true") != 1 {
		t.Errorf("want a tombstone for the object deleted during the gap; log: %v", rec.log)
	}
	if rec.count("add ns/born initial=false") != 1 {
		t.Errorf("want an add for the object created during the gap; log: %v", rec.log)
	}
	// A recreated object is another object: its predecessor's tombstone, then an add,
	// rather than an update across two UIDs.
	if d := cmp.Diff([]string{"delete ns/reborn finalStateUnknown=true", "add ns/reborn initial=false"}, rec.linesFor("ns/reborn")[1:]); d != "" {
		t.Errorf("recreated during the gap (-want +got):\n%s", d)
	}
}

func TestRecoversFromStreamFaults(t *testing.T) {
	tests := []struct {
		name   string
		inject func(f *apisim.Faults)
		clear  func(f *apisim.Faults)
	}{
		{"malformed frame", func(f *apisim.Faults) { f.InjectMalformedFrames(1) }, func(*apisim.Faults) {}},
		{"unknown event", func(f *apisim.Faults) { f.InjectUnknownEvents(1) }, func(*apisim.Faults) {}},
		{"abrupt cuts", func(f *apisim.Faults) { f.CutWatches(2, true) }, func(f *apisim.Faults) { f.CutWatches(0, false) }},
		{"429 on watch", func(f *apisim.Faults) {
			f.FailRequests(2, http.StatusTooManyRequests, time.Second, func(r *http.Request) bool { return r.URL.Query().Get("watch") == "1" })
			f.CutWatches(1, false)
		}, func(f *apisim.Faults) { f.CutWatches(0, false) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, apisim.Options{})
			inf := mustNew(t, e.pods, Options[*object.Pod]{Reflector: fastReflector()})
			rec := newRecorder()
			inf.AddEventHandler(rec, HandlerOptions{})
			run(t, inf)
			testwait.Eventually(t, 10*time.Second, inf.HasSynced, "waiting for sync")
			tt.inject(e.sim.Faults())
			for _, n := range []string{"a", "b", "c", "d"} {
				e.create(t, n, nil)
			}
			e.relabel(t, "a", "x")
			e.remove(t, "b")
			tt.clear(e.sim.Faults())
			e.create(t, "last", nil)
			testwait.Eventually(t, 10*time.Second, func() bool { return cmp.Equal(rec.snapshot(), e.serverState(t)) }, "waiting for convergence")
			if d := cmp.Diff(e.serverState(t), cacheState(inf)); d != "" {
				t.Error(d)
			}
		})
	}
}

func TestIdleWatchIsReplaced(t *testing.T) {
	e := newEnv(t, apisim.Options{BookmarkInterval: time.Hour})
	ro := fastReflector()
	ro.WatchTimeoutMin, ro.WatchTimeoutMax, ro.IdleMargin = time.Second, time.Second, 200*time.Millisecond
	inf := mustNew(t, e.pods, Options[*object.Pod]{Reflector: ro})
	rec := newRecorder()
	inf.AddEventHandler(rec, HandlerOptions{})
	run(t, inf)
	testwait.Eventually(t, 10*time.Second, inf.HasSynced, "waiting for sync")
	// The stream goes dead: silent, and never ended by the server (as a connection a
	// load balancer dropped). Only the idle deadline can end it.
	e.sim.Faults().StallWatches(true)
	e.create(t, "while-stalled", nil)
	testwait.Eventually(t, 10*time.Second, func() bool { return errors.Is(inf.Status().LastError, listwatch.ErrIdleTimeout) },
		"waiting for the reflector to give up on the silent stream at its idle deadline")
	e.sim.Faults().StallWatches(false)
	testwait.Eventually(t, 10*time.Second, func() bool { return rec.count("add ns/while-stalled") == 1 }, "waiting for the object created while the stream was dead")
}

func TestStatusExplainsWhyNotSynced(t *testing.T) {
	e := newEnv(t, apisim.Options{})
	e.sim.Faults().Forbid("pods", true)
	inf := mustNew(t, e.pods, Options[*object.Pod]{Name: "pods", Reflector: fastReflector()})
	run(t, inf)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := WaitForSync(ctx, inf)
	if err == nil || !object.IsForbidden(err) || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("WaitForSync error = %v, want the 403 as the reason", err)
	}
	if st := inf.Status(); st.Synced || !object.IsForbidden(st.LastError) {
		t.Errorf("status %+v", st)
	}
	e.sim.Faults().Forbid("pods", false)
	if err := WaitForSync(testwait.Context(t, 10*time.Second), inf); err != nil {
		t.Fatalf("after the 403 is lifted: %v", err)
	}
	if st := inf.Status(); st.LastError != nil {
		t.Errorf("a synced informer still reports %v", st.LastError)
	}
}

// expiringLister compacts the server after the first page, so the continue token of the
// second page is expired, as after a long pause mid-list.
type expiringLister struct {
	*listwatch.Resource[*object.Pod]
	sim   *apisim.Server
	pages int
}

func (l *expiringLister) List(ctx context.Context, opts listwatch.ListOptions) (*object.List[*object.Pod], error) {
	// The second page is asked for once the first is in and the server compacted, not
	// ahead of it (see reflector/pages.go): the pause mid-list this lister plays.
	opts.OnContinue = nil
	page, err := l.Resource.List(ctx, opts)
	l.pages++
	if l.pages == 1 {
		l.sim.Compact()
	}
	return page, err
}

func TestExpiredContinueTokenFallsBackToFullList(t *testing.T) {
	e := newEnv(t, apisim.Options{})
	for i := range 30 {
		e.create(t, "p"+string(rune('a'+i%26))+string(rune('a'+i/26)), nil)
	}
	e.sim.Compact() // any later write moves past the compacted revision
	ro := fastReflector()
	ro.PageSize = 10
	lw := &expiringLister{Resource: e.pods, sim: e.sim}
	inf := mustNew(t, lw, Options[*object.Pod]{Reflector: ro})
	run(t, inf)
	if err := WaitForSync(testwait.Context(t, 10*time.Second), inf); err != nil {
		t.Fatal(err)
	}
	if n := inf.Cache().Len(); n != 30 {
		t.Errorf("cache holds %d pods after the fallback list, want 30", n)
	}
}

func TestStreamingList(t *testing.T) {
	tests := []struct {
		name         string
		fault        func(f *apisim.Faults)
		wantFallback bool
	}{
		{"served", func(*apisim.Faults) {}, false},
		{"refused", func(f *apisim.Faults) { f.RefuseStreamingList(true) }, true},
		{"no end bookmark", func(f *apisim.Faults) { f.DropInitialEventsEnd(true) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, apisim.Options{})
			e.create(t, "a", nil)
			e.create(t, "b", nil)
			tt.fault(e.sim.Faults())
			ro := fastReflector()
			ro.StreamingList, ro.InitialEventsTimeout = true, 300*time.Millisecond
			inf := mustNew(t, e.pods, Options[*object.Pod]{Reflector: ro})
			rec := newRecorder()
			inf.AddEventHandler(rec, HandlerOptions{})
			run(t, inf)
			if err := WaitForSync(testwait.Context(t, 10*time.Second), inf); err != nil {
				t.Fatal(err)
			}
			if got := inf.reflector.Status().StreamingFallback; got != tt.wantFallback {
				t.Errorf("fallback = %v, want %v", got, tt.wantFallback)
			}
			e.create(t, "c", nil)
			testwait.Eventually(t, 10*time.Second, func() bool { return cmp.Equal(rec.snapshot(), e.serverState(t)) }, "waiting for the watch after the initial state")
			if rec.count("add ns/a initial=true") != 1 {
				t.Errorf("log %v", rec.log)
			}
		})
	}
}

func TestPerHandlerResync(t *testing.T) {
	e := newEnv(t, apisim.Options{})
	e.create(t, "a", nil)
	counting := &countingWatcher{Resource: e.pods}
	inf := mustNew(t, counting, Options[*object.Pod]{Reflector: fastReflector()})
	resynced, plain := newRecorder(), newRecorder()
	inf.AddEventHandler(resynced, HandlerOptions{ResyncPeriod: 50 * time.Millisecond})
	inf.AddEventHandler(plain, HandlerOptions{})
	run(t, inf)
	testwait.Eventually(t, 10*time.Second, inf.HasSynced, "waiting for sync")
	lists, watches := counting.lists.Load(), counting.watches.Load()
	testwait.Eventually(t, 10*time.Second, func() bool { return resynced.count("resync ns/a") >= 3 }, "waiting for resyncs")
	if plain.count("resync") != 0 {
		t.Error("a handler without a resync period got resyncs")
	}
	if l, w := counting.lists.Load(), counting.watches.Load(); l != lists || w != watches {
		t.Errorf("resyncs contacted the server: lists %d→%d, watches %d→%d", lists, l, watches, w)
	}
}

// The default transform strips managedFields, and has the reflector ask for objects
// decoded without them and with shared maps; NoTransform keeps them and asks for
// nothing. Both the listed object and the watched one are checked.
func TestTransformStripsManagedFieldsByDefault(t *testing.T) {
	cases := []struct {
		name      string
		transform func(*object.Pod) *object.Pod
		dropped   bool
	}{
		{"default", nil, true},
		{"NoTransform", NoTransform[*object.Pod], false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, apisim.Options{})
			create := func(name string) {
				p := &object.Pod{ObjectMeta: object.ObjectMeta{Name: name}}
				p.ObjectMeta.Unknown.Set("managedFields", json.RawMessage(`[{"manager":"x"}]`))
				if _, err := e.pods.Create(context.Background(), p); err != nil {
					t.Fatal(err)
				}
			}
			create("listed")
			counting := &countingWatcher{Resource: e.pods}
			inf := mustNew(t, counting, Options[*object.Pod]{Reflector: fastReflector(), Transform: c.transform})
			run(t, inf)
			testwait.Eventually(t, 10*time.Second, inf.HasSynced, "waiting for sync")
			create("watched")
			testwait.Eventually(t, 10*time.Second, func() bool { _, ok := inf.Lister().Get("ns/watched"); return ok }, "waiting for the watched pod")
			for _, key := range []string{"ns/listed", "ns/watched"} {
				got, _ := inf.Lister().Get(key)
				if kept := got.ObjectMeta.Unknown.Get("managedFields") != nil; kept == c.dropped {
					t.Errorf("%s: managedFields kept = %v", key, kept)
				}
			}
			if l, w := counting.dropList.Load(), counting.dropWatch.Load(); l != c.dropped || w != c.dropped {
				t.Errorf("DropManagedFields asked of list %v, of watch %v; want %v", l, w, c.dropped)
			}
			if l, w := counting.shareList.Load(), counting.shareWatch.Load(); l != c.dropped || w != c.dropped {
				t.Errorf("a map table given to list %v, to watch %v; want %v", l, w, c.dropped)
			}
		})
	}
}

func TestShortWatchesBackOff(t *testing.T) {
	e := newEnv(t, apisim.Options{})
	counting := &countingWatcher{Resource: e.pods}
	ro := fastReflector()
	ro.Backoff.Initial, ro.Backoff.Max = 100*time.Millisecond, time.Second
	inf := mustNew(t, counting, Options[*object.Pod]{Reflector: ro})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	counting.closeAtOnce = true
	inf.Run(ctx)
	if n := counting.watches.Load(); n > 6 {
		t.Errorf("%d watches in 1 s against a server that closes them at once: hot loop", n)
	}
}

// countingWatcher counts lists and watches and can make each watch fail at once (a 1 ms
// idle deadline), like a proxy that drops every watch.
type countingWatcher struct {
	*listwatch.Resource[*object.Pod]
	lists, watches        atomic.Int32
	dropList, dropWatch   atomic.Bool // the last call's DropManagedFields
	shareList, shareWatch atomic.Bool // and whether it had a map table
	closeAtOnce           bool
}

func (c *countingWatcher) List(ctx context.Context, opts listwatch.ListOptions) (*object.List[*object.Pod], error) {
	c.lists.Add(1)
	c.dropList.Store(opts.Decode.DropManagedFields)
	c.shareList.Store(opts.Decode.Maps != nil)
	return c.Resource.List(ctx, opts)
}

func (c *countingWatcher) Watch(ctx context.Context, opts listwatch.WatchOptions) (listwatch.Stream[*object.Pod], error) {
	c.watches.Add(1)
	c.dropWatch.Store(opts.Decode.DropManagedFields)
	c.shareWatch.Store(opts.Decode.Maps != nil)
	if c.closeAtOnce {
		opts.TimeoutSeconds = 0
		opts.IdleTimeout = time.Millisecond
	}
	return c.Resource.Watch(ctx, opts)
}

// TestRelistReusesUnchangedObjects: a relist hands back the cached object for every
// object whose resourceVersion did not move (so a relist does not hold two copies of
// an unchanged store), without transforming it a second time.
func TestRelistReusesUnchangedObjects(t *testing.T) {
	e := newEnv(t, apisim.Options{})
	e.create(t, "same", nil)
	e.create(t, "moved", nil)
	var transformed sync.Map // name → count
	count := func(p *object.Pod) *object.Pod {
		n, _ := transformed.LoadOrStore(p.Name, new(atomic.Int32))
		n.(*atomic.Int32).Add(1)
		return p
	}
	inf := mustNew(t, e.pods, Options[*object.Pod]{Reflector: fastReflector(), Transform: count})
	rec := newRecorder()
	inf.AddEventHandler(rec, HandlerOptions{})
	run(t, inf)
	testwait.Eventually(t, 10*time.Second, inf.HasSynced, "waiting for sync")
	same, _ := inf.Lister().Get("ns/same")
	moved, _ := inf.Lister().Get("ns/moved")

	e.gapThenRelist(t, rec, func() { e.relabel(t, "moved", "1") })

	if got, _ := inf.Lister().Get("ns/same"); got != same {
		t.Error("an unchanged object was replaced by its relisted copy")
	}
	if got, _ := inf.Lister().Get("ns/moved"); got == moved || got.ResourceVersion == moved.ResourceVersion {
		t.Error("a changed object was not replaced")
	}
	for name, want := range map[string]int32{"same": 1, "moved": 2} {
		n, _ := transformed.Load(name)
		if got := n.(*atomic.Int32).Load(); got != want {
			t.Errorf("%s transformed %d times, want %d", name, got, want)
		}
	}
}
