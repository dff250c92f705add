package informer

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
	"github.com/kinformer/kinformer/shard"
)

// hookedLW runs onList before each list it passes on (on the goroutine that lists the
// page, which for the page asked for ahead is not the reflector's: see reflector/pages.go).
type hookedLW struct {
	reflector.ListerWatcher[*object.Pod]
	onList func(opts listwatch.ListOptions)
}

func (h *hookedLW) List(ctx context.Context, opts listwatch.ListOptions) (*object.List[*object.Pod], error) {
	if h.onList != nil {
		h.onList(opts)
	}
	return h.ListerWatcher.List(ctx, opts)
}

// forward is a handler that notes every notification taking an object back: to an older
// resourceVersion than the last one the handler heard of the same object (same uid).
type forward struct {
	mu   sync.Mutex
	last map[string]string // key → uid/resourceVersion
	back []string
}

func newForward() *forward { return &forward{last: map[string]string{}} }

func (f *forward) saw(what string, p *object.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := object.Key(p)
	if prev, ok := f.last[key]; ok {
		uid, rv, _ := strings.Cut(prev, "/")
		if c, err := object.CompareResourceVersion(p.ResourceVersion, rv); uid == p.UID && (err != nil || c < 0) {
			f.back = append(f.back, fmt.Sprintf("%s %s@%s after @%s", what, key, p.ResourceVersion, rv))
		}
	}
	f.last[key] = p.UID + "/" + p.ResourceVersion
}

func (f *forward) OnAdd(p *object.Pod, _ bool)    { f.saw("add", p) }
func (f *forward) OnUpdate(_, p *object.Pod)      { f.saw("update", p) }
func (f *forward) OnDelete(p *object.Pod, _ bool) { f.saw("delete", p) }

func (f *forward) backwards() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.back...)
}

// serverPods is key → resourceVersion of the pods on the server in the namespaces sel
// selects.
func (e *shardEnv) serverPods(t *testing.T, sel shard.Selector) map[string]string {
	t.Helper()
	l, err := e.all.List(context.Background(), listwatch.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range l.Items {
		if sel.Matches(p.Namespace) {
			out[object.Key(p)] = p.ResourceVersion
		}
	}
	return out
}

// within keeps the entries of m whose namespace sel selects.
func within(m map[string]string, sel shard.Selector) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if ns, _, _ := strings.Cut(k, "/"); sel.Matches(ns) {
			out[k] = v
		}
	}
	return out
}

// The part a growth gains is changed while it is listed (as a previous owner's last
// writes land between the cache's resourceVersion and the list): a pod changed twice,
// one created, one created and deleted. The channel closes with the cache holding the
// part as the server does, and the watch that resumes from the cache's older
// resourceVersion replays those changes without any reaching the handlers: none sees
// an object of the part go back to an older state, nor hears of the pod that came and
// went; the part kept's change, and what comes past the list, do reach them.
func TestInformerGrowthNeverTakesAnObjectBack(t *testing.T) {
	e := newShardEnv(t)
	e.createEverywhere(t, "a")
	var gainedNS, keptNS string
	for i := range 20 {
		switch ns := shardNamespace(i); {
		case gainedNS == "" && secondQuarterNamespaces.Matches(ns):
			gainedNS = ns
		case keptNS == "" && quarterNamespaces.Matches(ns):
			keptNS = ns
		}
	}
	if gainedNS == "" || keptNS == "" {
		t.Fatal("no namespace in one of the quarters")
	}
	podsIn := func(ns string) *listwatch.Resource[*object.Pod] {
		return listwatch.For[*object.Pod](e.client, e.pods.Info(), ns)
	}
	relabel := func(ns, name, v string) (*object.Pod, error) {
		return podsIn(ns).Patch(context.Background(), name, listwatch.MergePatch, fmt.Appendf(nil, `{"metadata":{"labels":{"v":%q}}}`, v), "")
	}
	lw := &hookedLW{ListerWatcher: e.all}
	var hookErr error
	var once sync.Once
	lw.onList = func(opts listwatch.ListOptions) {
		if opts.Shard.String() != secondQuarterNamespaces.String() {
			return
		}
		once.Do(func() {
			steps := []func() error{
				func() error { _, err := relabel(gainedNS, "a", "2"); return err },
				func() error { _, err := relabel(gainedNS, "a", "3"); return err },
				func() error {
					_, err := podsIn(gainedNS).Create(context.Background(), &object.Pod{ObjectMeta: object.ObjectMeta{Name: "new"}})
					return err
				},
				func() error {
					_, err := podsIn(gainedNS).Create(context.Background(), &object.Pod{ObjectMeta: object.ObjectMeta{Name: "gone"}})
					return err
				},
				func() error { return podsIn(gainedNS).Delete(context.Background(), "gone", listwatch.DeleteOptions{}) },
				func() error { _, err := relabel(keptNS, "a", "2"); return err },
			}
			for _, step := range steps {
				if hookErr = step(); hookErr != nil {
					return
				}
			}
		})
	}
	inf := mustNew(t, lw, Options[*object.Pod]{Name: "pods", Shard: quarterNamespaces, Reflector: fastReflector()})
	rec, fwd := newRecorder(), newForward()
	for _, h := range []Handler[*object.Pod]{rec, fwd} {
		if _, err := inf.AddEventHandler(h, HandlerOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	run(t, inf)
	caughtUp(t, inf, e)
	g, k := gainedNS+"/a", keptNS+"/a"
	heardOfG := len(rec.linesFor(g))

	done, err := inf.SetShard(lowerNamespaces)
	if err != nil {
		t.Fatal(err)
	}
	waitClosed(t, done, "SetShard's channel", func() any { return inf.Status() })
	atClose := cacheState(inf)
	if hookErr != nil {
		t.Fatalf("the writes during the list: %v", hookErr)
	}
	if d := cmp.Diff(e.serverPods(t, secondQuarterNamespaces), within(atClose, secondQuarterNamespaces)); d != "" {
		t.Errorf("at the close, the part gained (-the server +cached):\n%s", d)
	}

	// Past the list: the part gained changes again, pods come everywhere.
	p, err := relabel(gainedNS, "a", "4")
	if err != nil {
		t.Fatal(err)
	}
	e.createEverywhere(t, "z")
	caughtUp(t, inf, e)
	if d := cmp.Diff(e.serverPods(t, lowerNamespaces), cacheState(inf)); d != "" {
		t.Errorf("once caught up, the cache (-the server +cached):\n%s", d)
	}
	testwait.Eventually(t, 10*time.Second, func() bool { return cmp.Equal(cacheState(inf), rec.snapshot()) },
		"the handler's view never matched the cache")
	if back := fwd.backwards(); len(back) > 0 {
		t.Errorf("handlers saw objects go back to older states: %q", back)
	}
	if broken := rec.check.Broken(); len(broken) > 0 {
		t.Errorf("the handler was told inconsistent events: %q", broken)
	}
	if d := cmp.Diff([]string{"add " + g + " initial=false", "update " + g}, rec.linesFor(g)[heardOfG:]); d != "" {
		t.Errorf("what the handler heard of %s, gained, then changed past the list (-want +got):\n%s", g, d)
	}
	if got := rec.snapshot()[g]; got != p.ResourceVersion {
		t.Errorf("the handler holds %s at %s, want %s", g, got, p.ResourceVersion)
	}
	if lines := rec.linesFor(gainedNS + "/gone"); len(lines) > 0 {
		t.Errorf("the handler heard of a pod created and deleted before the list: %q", lines)
	}
	if lines := rec.linesFor(k); !cmp.Equal(lines[len(lines)-1:], []string{"update " + k}, cmpopts.EquateEmpty()) {
		t.Errorf("the part kept's change did not reach the handler: %q", lines)
	}
	if st := inf.Status(); st.Relists != 0 || st.LastError != nil {
		t.Errorf("status %+v: want no relist, no error", st)
	}
}

// FactoryOptions.ConsistentLists: every informer's first list reads the newest state
// (no resourceVersion); without it, any state ("0", the watch cache).
func TestFactoryConsistentLists(t *testing.T) {
	for _, consistent := range []bool{false, true} {
		t.Run(fmt.Sprintf("ConsistentLists=%v", consistent), func(t *testing.T) {
			leakcheck.Check(t)
			sim := apisim.New(apisim.Options{})
			var mu sync.Mutex
			var lists []url.Values
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if q := r.URL.Query(); r.URL.Path == "/api/v1/pods" && q.Get("watch") == "" {
					mu.Lock()
					lists = append(lists, q)
					mu.Unlock()
				}
				sim.ServeHTTP(w, r)
			}))
			t.Cleanup(func() { srv.Close(); sim.Close() })
			c, err := listwatch.New(&listwatch.Config{Host: srv.URL, QPS: -1})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.CloseIdleConnections)
			f := NewFactory(c, FactoryOptions{ConsistentLists: consistent})
			defer f.Shutdown()
			if _, err := For[*object.Pod](context.Background(), f, "pods", Selectors{}); err != nil {
				t.Fatal(err)
			}
			f.Start(context.Background())
			if err := f.WaitForSync(testwait.Context(t, 10*time.Second)); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(lists) == 0 {
				t.Fatal("no list")
			}
			want := map[string]string{"resourceVersion": "0"}
			if consistent {
				want = map[string]string{}
			}
			got := map[string]string{}
			for _, n := range []string{"resourceVersion", "resourceVersionMatch"} {
				if lists[0].Has(n) {
					got[n] = lists[0].Get(n)
				}
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("the first list (-want +got):\n%s", d)
			}
		})
	}
}
