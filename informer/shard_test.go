package informer

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/logbuf"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
	"github.com/kinformer/kinformer/shard"
)

// These tests shard pods by namespace over namespaces named so that FNV-1a spreads
// them: it barely mixes a name's last bytes into the high bits that ranges cut, so
// ns-0 … ns-19 would all fall in one half, and 0-ns … 19-ns do not.
var (
	lowerNamespaces = shard.Selector{Field: shard.Namespace, Ranges: []shard.Range{{First: 0, Last: 1<<63 - 1}}}
	upperNamespaces = shard.Selector{Field: shard.Namespace, Ranges: []shard.Range{{First: 1 << 63, Last: 1<<64 - 1}}}
)

func shardNamespace(i int) string { return fmt.Sprintf("%d-ns", i) }

// shardEnv is a simulator and a client for pods of every namespace, with what the test
// created: the keys of the pods by namespace shard, and the newest resourceVersion.
type shardEnv struct {
	*env
	all    *listwatch.Resource[*object.Pod]
	keys   []string // every pod created, sorted
	lastRV string
}

func newShardEnv(t *testing.T) *shardEnv {
	t.Helper()
	e := &shardEnv{env: newEnv(t, apisim.Options{BookmarkInterval: 100 * time.Millisecond})}
	e.all = listwatch.For[*object.Pod](e.client, e.pods.Info(), "")
	return e
}

func (e *shardEnv) createIn(t *testing.T, ns, name string) {
	t.Helper()
	p, err := e.all.Create(context.Background(), &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: ns, Name: name}})
	if err != nil {
		t.Fatal(err)
	}
	e.keys = append(e.keys, object.Key(p))
	slices.Sort(e.keys)
	e.lastRV = p.ResourceVersion
}

// createNodes creates cluster-scoped objects, which no shard by namespace divides.
func (e *shardEnv) createNodes(t *testing.T, names ...string) {
	t.Helper()
	nodes, err := e.client.Discover(context.Background(), "nodes")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if _, err := listwatch.For[*object.Raw](e.client, nodes, "").Create(context.Background(), &object.Raw{ObjectMeta: object.ObjectMeta{Name: n}}); err != nil {
			t.Fatal(err)
		}
	}
}

// createEverywhere creates a pod named name in each of the 20 namespaces.
func (e *shardEnv) createEverywhere(t *testing.T, name string) {
	t.Helper()
	for i := range 20 {
		e.createIn(t, shardNamespace(i), name)
	}
}

// selected is the keys of the pods created that sel selects.
func (e *shardEnv) selected(sel shard.Selector) []string {
	var out []string
	for _, k := range e.keys {
		ns, _, _ := strings.Cut(k, "/")
		if sel.Matches(ns) {
			out = append(out, k)
		}
	}
	return out
}

func cachedKeys[T object.Object](inf *Informer[T]) []string {
	var keys []string
	for _, o := range inf.Cache().List() {
		keys = append(keys, object.Key(o))
	}
	slices.Sort(keys)
	return keys
}

// caughtUp waits until inf's cache has followed the server past the newest create.
func caughtUp[T object.Object](t *testing.T, inf *Informer[T], e *shardEnv) {
	t.Helper()
	testwait.Eventually(t, 10*time.Second, func() bool {
		c, err := object.CompareResourceVersion(inf.LastStoreSyncResourceVersion(), e.lastRV)
		return err == nil && c >= 0
	}, "waiting for the cache to reach resourceVersion %s; status %+v", e.lastRV, testwait.Lazy(func() any { return inf.Status() }))
}

// relistAfterGone ends inf's watch, holds new ones off while pods are created, and
// compacts the history, so only a relist (after a 410 on the re-watch) catches up.
func (e *shardEnv) relistAfterGone(t *testing.T, inf *Informer[*object.Pod]) {
	t.Helper()
	f := e.sim.Faults()
	f.FailRequests(1000, http.StatusServiceUnavailable, 0, func(r *http.Request) bool { return r.URL.Query().Get("watch") == "1" })
	f.CutWatches(1, false)
	// One pod in every namespace: at least one event reaches the watch, sharded or not.
	e.createEverywhere(t, "cut")
	testwait.Eventually(t, 10*time.Second, func() bool { return inf.Status().State != reflector.StateWatching }, "waiting for the watch to end")
	e.createEverywhere(t, "missed")
	e.sim.Compact()
	f.CutWatches(0, false)
	f.FailRequests(0, 0, 0, nil)
	testwait.Eventually(t, 10*time.Second, func() bool { return inf.Status().Relists == 1 }, "waiting for the relist")
	caughtUp(t, inf, e)
}

// An informer with a shard caches exactly the pods of its shard, through the first list,
// watch events and a relist after a 410, whether the server filters or ignores the
// selector. When it ignores it, the informer says so: its status, one warning, and the
// metrics.
func TestShardedInformerCachesTheShard(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ignore    bool // the server has no ShardedListAndWatch gate
		streaming bool
		want      reflector.ShardFiltering
	}{
		{"the server filters", false, false, reflector.ShardFilteringServer},
		{"the server ignores the selector", true, false, reflector.ShardFilteringClient},
		{"the server ignores the selector of a streaming list", true, true, reflector.ShardFilteringClient},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newShardEnv(t)
			e.sim.Faults().IgnoreShardSelector(tc.ignore)
			e.createEverywhere(t, "a")
			reg := prometheus.NewRegistry()
			m, err := NewMetrics(reg)
			if err != nil {
				t.Fatal(err)
			}
			var logs logbuf.Buffer
			ropts := fastReflector()
			ropts.StreamingList = tc.streaming
			inf := mustNew(t, e.all, Options[*object.Pod]{Name: "pods", Shard: lowerNamespaces, Reflector: ropts,
				Metrics: m, Logger: logs.Logger(slog.LevelInfo)})
			rec := newRecorder()
			if _, err := inf.AddEventHandler(rec, HandlerOptions{}); err != nil {
				t.Fatal(err)
			}
			run(t, inf)
			check := func(when string) {
				t.Helper()
				caughtUp(t, inf, e)
				want := e.selected(lowerNamespaces)
				if len(want) == 0 || len(want) == len(e.keys) {
					t.Fatalf("the namespaces do not straddle the halves: %d of %d pods in the shard", len(want), len(e.keys))
				}
				if d := cmp.Diff(want, cachedKeys(inf)); d != "" {
					t.Errorf("%s: the cache (-in the shard +cached):\n%s", when, d)
				}
				testwait.Eventually(t, 10*time.Second, func() bool { return cmp.Equal(cacheState(inf), rec.snapshot()) },
					"%s: the handler's view never matched the cache", when)
				st := inf.Status()
				if st.ShardFiltering != tc.want || (st.ShardDropped > 0) != tc.ignore {
					t.Errorf("%s: ShardFiltering %q with %d dropped; want %q, dropped: %v", when, st.ShardFiltering, st.ShardDropped, tc.want, tc.ignore)
				}
			}
			check("after the sync")
			e.createEverywhere(t, "b")
			check("after watch events")
			e.relistAfterGone(t, inf)
			check("after a relist")

			if got, want := metric(t, reg, "kinformer_informer_shard_fraction", map[string]string{"name": "pods"}), shard.SetOf(lowerNamespaces.Ranges...).Fraction(); got != want {
				t.Errorf("kinformer_informer_shard_fraction = %v, want the shard's %v", got, want)
			}
			onClient := metric(t, reg, "kinformer_informer_shard_filtered_on_client", map[string]string{"name": "pods"})
			dropped := metric(t, reg, "kinformer_informer_shard_dropped_total", map[string]string{"name": "pods"})
			warnings := strings.Count(logs.String(), "level=WARN msg=\"the server does not filter by shard")
			if tc.ignore {
				if onClient != 1 || dropped != float64(inf.Status().ShardDropped) || warnings != 1 {
					t.Errorf("filtered on client %v, dropped %v (status: %d), %d warnings; want 1, the status's count, 1\n%s",
						onClient, dropped, inf.Status().ShardDropped, warnings, logs.String())
				}
				if !strings.Contains(logs.String(), "reflector=pods") {
					t.Errorf("the warning does not name the informer:\n%s", logs.String())
				}
			} else if onClient != 0 || dropped != -1 || warnings != 0 {
				t.Errorf("filtered on client %v, dropped %v, %d warnings; want 0, no series, none\n%s", onClient, dropped, warnings, logs.String())
			}
			if broken := rec.check.Broken(); len(broken) > 0 {
				t.Errorf("the handler was told inconsistent events: %q", broken)
			}
		})
	}
}

// A factory's shard applies to its namespaced informers, not to cluster-scoped ones
// when it is by namespace; an informer's own shard replaces it and makes another
// informer, even when it equals the factory's (which SetShard may change).
func TestFactoryShard(t *testing.T) {
	e := newShardEnv(t)
	e.createEverywhere(t, "a")
	e.createNodes(t, "n1", "n2", "n3")
	f := NewFactory(e.client, FactoryOptions{Reflector: fastReflector(), Shard: lowerNamespaces})
	defer f.Shutdown()
	ctx := context.Background()
	lower, err := For[*object.Pod](ctx, f, "pods", Selectors{})
	if err != nil {
		t.Fatal(err)
	}
	upper, _ := For[*object.Pod](ctx, f, "pods", Selectors{Shard: upperNamespaces})
	own, _ := For[*object.Pod](ctx, f, "pods", Selectors{Shard: lowerNamespaces})
	again, _ := For[*object.Pod](ctx, f, "pods", Selectors{})
	ownAgain, _ := For[*object.Pod](ctx, f, "pods", Selectors{Shard: lowerNamespaces})
	if upper == lower || own == lower || own == upper || again != lower || ownAgain != own {
		t.Errorf("informers of pods: the factory's shard %p, another %p, its own equal to the factory's %p, the factory's again %p, its own again %p: "+
			"want three, the same for the same request", lower, upper, own, again, ownAgain)
	}
	nodeInf, err := For[*object.Raw](ctx, f, "nodes", Selectors{})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx)
	if err := f.WaitForSync(testwait.Context(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, lower, e)
	caughtUp(t, upper, e)
	if d := cmp.Diff(e.selected(lowerNamespaces), cachedKeys(lower)); d != "" {
		t.Errorf("the factory's shard (-want +cached):\n%s", d)
	}
	if d := cmp.Diff(e.selected(upperNamespaces), cachedKeys(upper)); d != "" {
		t.Errorf("the informer's own shard (-want +cached):\n%s", d)
	}
	if d := cmp.Diff([]string{"n1", "n2", "n3"}, cachedKeys(nodeInf)); d != "" {
		t.Errorf("nodes, cluster-scoped, are not sharded by namespace (-want +cached):\n%s", d)
	}
	got := map[string]reflector.ShardFiltering{"lower": lower.Status().ShardFiltering,
		"upper": upper.Status().ShardFiltering, "nodes": nodeInf.Status().ShardFiltering}
	want := map[string]reflector.ShardFiltering{"lower": reflector.ShardFilteringServer,
		"upper": reflector.ShardFilteringServer, "nodes": ""}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ShardFiltering (-want +got):\n%s", d)
	}
}

// A selector the server would refuse on every request is refused by New.
func TestInvalidShardIsRefused(t *testing.T) {
	e := newEnv(t, apisim.Options{})
	for _, sel := range []shard.Selector{
		{Field: "object.metadata.name", Ranges: []shard.Range{shard.Whole()}},
		{Field: shard.UID, Ranges: []shard.Range{{First: 2, Last: 1}}},
	} {
		if _, err := New[*object.Pod](e.pods, Options[*object.Pod]{Name: "pods", Shard: sel}); err == nil {
			t.Errorf("New accepted %v", sel)
		}
		f := NewFactory(e.client, FactoryOptions{})
		if _, err := For[*object.Pod](context.Background(), f, "pods", Selectors{Shard: sel}); err == nil {
			t.Errorf("For accepted %v", sel)
		}
	}
}
