package reflector_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/internal/testrig/logbuf"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
	"github.com/kinformer/kinformer/shard"
)

// These tests shard the pods of namespace "ns" by uid, which the simulator draws at
// random: which pods are in the lower half of the hash space is read from each create's
// answer.
var lowerUIDs = shard.Selector{Field: shard.UID, Ranges: []shard.Range{{First: 0, Last: 1<<63 - 1}}}

// setStore keeps the objects the reflector hands it, by name.
type setStore struct {
	mu   sync.Mutex
	objs map[string]*object.Pod
}

func (s *setStore) Add(p *object.Pod)    { s.Update(p) }
func (s *setStore) Update(p *object.Pod) { s.mu.Lock(); s.objs[p.Name] = p; s.mu.Unlock() }
func (s *setStore) Delete(p *object.Pod) { s.mu.Lock(); delete(s.objs, p.Name); s.mu.Unlock() }
func (s *setStore) Replace(ps []*object.Pod, _ string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objs = map[string]*object.Pod{}
	for _, p := range ps {
		s.objs[p.Name] = p
	}
}

func (s *setStore) names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.objs))
}

// shardPods records the pods a test created and which of them sel selects.
type shardPods struct {
	sel    shard.Selector
	in     []string // names, sorted
	lastRV string   // of the newest create
	out    int
}

func (sp *shardPods) create(t *testing.T, f *fixture, names ...string) {
	t.Helper()
	for _, name := range names {
		p, err := f.pods.Create(context.Background(), &object.Pod{ObjectMeta: object.ObjectMeta{Name: name}})
		if err != nil {
			t.Fatal(err)
		}
		if sp.sel.Matches(p.UID) {
			sp.in = append(sp.in, name)
			slices.Sort(sp.in)
		} else {
			sp.out++
		}
		sp.lastRV = p.ResourceVersion
	}
}

// createIn creates pods prefix0, prefix1… until one is in the shard, so that a watch
// filtered by the server sees at least one event.
func (sp *shardPods) createIn(t *testing.T, f *fixture, prefix string) {
	t.Helper()
	for i := 0; ; i++ {
		in := len(sp.in)
		sp.create(t, f, fmt.Sprint(prefix, i))
		if len(sp.in) > in {
			return
		}
	}
}

func seq(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprint(prefix, i)
	}
	return names
}

// caughtUp waits until r has followed the server past the newest create.
func caughtUp(t *testing.T, r *reflector.Reflector[*object.Pod], sp *shardPods) {
	t.Helper()
	testwait.Eventually(t, 10*time.Second, func() bool {
		c, err := object.CompareResourceVersion(r.LastSyncResourceVersion(), sp.lastRV)
		return err == nil && c >= 0 && r.Status().State == reflector.StateWatching
	}, "waiting for the reflector to reach resourceVersion %s; status %+v", sp.lastRV, testwait.Lazy(func() any { return r.Status() }))
}

// forceRelist makes the reflector's watch end and its resourceVersion expire, as
// TestRelistAfterGoneAsksForAtLeastTheLastResourceVersion does, with a create in
// between, and waits for the relist.
func forceRelist(t *testing.T, f *fixture, r *reflector.Reflector[*object.Pod], sp *shardPods) {
	t.Helper()
	relists := r.Status().Relists
	faults := f.sim.Faults()
	faults.FailRequests(1000, http.StatusServiceUnavailable, 0, func(r *http.Request) bool { return r.URL.Query().Get("watch") == "1" })
	faults.CutWatches(1, false)
	sp.createIn(t, f, fmt.Sprintf("cut%d-", relists))
	testwait.Eventually(t, 10*time.Second, func() bool { return r.Status().State != reflector.StateWatching },
		"waiting for the watch to end")
	sp.create(t, f, seq(fmt.Sprintf("missed%d-", relists), 6)...)
	f.sim.Compact()
	faults.CutWatches(0, false)
	faults.FailRequests(0, 0, 0, nil)
	testwait.Eventually(t, 10*time.Second, func() bool { return r.Status().Relists > relists }, "waiting for the relist")
	caughtUp(t, r, sp)
}

// Every request the reflector sends carries the selector: the first list and each of
// its pages, the watch, the relist after a 410 and the watch after it; with streaming
// lists, the streaming list and the one that relists.
func TestShardSelectorOnEveryRequest(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			f := newFixture(t, 0)
			sp := &shardPods{sel: lowerUIDs}
			sp.create(t, f, seq("p", 12)...)
			r := f.run(t, &setStore{objs: map[string]*object.Pod{}}, reflector.Options{PageSize: 2, Shard: lowerUIDs, StreamingList: streaming})
			caughtUp(t, r, sp)
			forceRelist(t, f, r, sp)

			lists, watches := f.log.split()
			kinds := map[string]int{}
			for _, req := range append(lists, watches...) {
				q := req.query
				kind := "list"
				switch {
				case q.Get("sendInitialEvents") == "true":
					kind = "streaming list"
				case req.watch():
					kind = "watch"
				case q.Get("continue") != "":
					kind = "continued list"
				}
				kinds[kind]++
				if got := q.Get("shardSelector"); got != lowerUIDs.String() {
					t.Errorf("a %s without the selector: shardSelector=%q", kind, got)
				}
			}
			want := map[string]int{"list": 2, "continued list": 1, "watch": 2} // at least
			if streaming {
				want = map[string]int{"streaming list": 2, "watch": 1}
			}
			for k, n := range want {
				if kinds[k] < n {
					t.Errorf("%d requests of kind %s, want at least %d (all: %v)", kinds[k], k, n, kinds)
				}
			}
		})
	}
}

// Whoever filters, the store holds exactly the pods in the shard, through the first
// fetch, watch events and a relist after a 410. The status says who filtered, and a
// reflector filtering alone says so once in its log.
func TestShardFilteringOnServerOrClient(t *testing.T) {
	for _, tc := range []struct {
		name         string
		ignore       bool // the server has no ShardedListAndWatch gate
		streaming    bool
		want         reflector.ShardFiltering
		wantWarnings int
	}{
		{"the server filters", false, false, reflector.ShardFilteringServer, 0},
		{"the server ignores the selector", true, false, reflector.ShardFilteringClient, 1},
		// A streaming list carries no shardInfo, and nothing outside the shard comes.
		{"the server filters a streaming list", false, true, reflector.ShardFilteringUnknown, 0},
		{"the server ignores the selector of a streaming list", true, true, reflector.ShardFilteringClient, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 0)
			f.sim.Faults().IgnoreShardSelector(tc.ignore)
			sp := &shardPods{sel: lowerUIDs}
			sp.create(t, f, seq("before-", 10)...)
			// Random uids fall all on one side of the half once in 500 sets of ten: add
			// pods until both sides have some.
			for i := 0; len(sp.in) == 0 || sp.out == 0; i++ {
				if i == 20 {
					t.Fatalf("the uids do not straddle the halves: %d in, %d out", len(sp.in), sp.out)
				}
				sp.create(t, f, fmt.Sprint("before-more-", i))
			}
			store := &setStore{objs: map[string]*object.Pod{}}
			var logs logbuf.Buffer
			r := f.run(t, store, reflector.Options{Name: "pods", Shard: lowerUIDs, StreamingList: tc.streaming, Logger: logs.Logger(slog.LevelInfo)})
			var mu sync.Mutex
			var told []reflector.ShardFiltering // ShardFiltering at each transition that changed it
			r.OnStatus(func(s reflector.Status) {
				mu.Lock()
				defer mu.Unlock()
				if n := len(told); n == 0 || told[n-1] != s.ShardFiltering {
					told = append(told, s.ShardFiltering)
				}
			})
			caughtUp(t, r, sp)
			check := func(when string) {
				t.Helper()
				if d := cmp.Diff(sp.in, store.names()); d != "" {
					t.Errorf("%s: the store (-in the shard +stored):\n%s", when, d)
				}
				st := r.Status()
				if st.ShardFiltering != tc.want {
					t.Errorf("%s: ShardFiltering %q, want %q", when, st.ShardFiltering, tc.want)
				}
				if dropped := st.ShardDropped > 0; dropped != tc.ignore {
					t.Errorf("%s: %d dropped by the reflector, with a server that ignores the selector: %v", when, st.ShardDropped, tc.ignore)
				}
			}
			check("after the first fetch")
			sp.create(t, f, seq("after-", 10)...)
			caughtUp(t, r, sp)
			check("after watch events")
			forceRelist(t, f, r, sp)
			check("after a relist")

			if n := strings.Count(logs.String(), "the server does not filter by shard"); n != tc.wantWarnings {
				t.Errorf("%d warnings that the server does not filter, want %d; the log:\n%s", n, tc.wantWarnings, logs.String())
			}
			if tc.wantWarnings > 0 && !strings.Contains(logs.String(), "level=WARN") {
				t.Errorf("the fallback is not a warning:\n%s", logs.String())
			}
			mu.Lock()
			defer mu.Unlock()
			if tc.want != reflector.ShardFilteringUnknown && !slices.Contains(told, tc.want) {
				t.Errorf("status subscribers were told %q, never %q", told, tc.want)
			}
		})
	}
}

// The status follows the server: filtering on the server, then alone once a watch (on
// an apiserver without the gate, say, behind the same load balancer) brings an object
// outside the shard, then on the server again after a list that echoes the selector.
func TestShardFilteringFollowsTheServer(t *testing.T) {
	f := newFixture(t, 0)
	sp := &shardPods{sel: lowerUIDs}
	sp.create(t, f, seq("p", 6)...)
	var logs logbuf.Buffer
	store := &setStore{objs: map[string]*object.Pod{}}
	r := f.run(t, store, reflector.Options{Name: "pods", Shard: lowerUIDs, Logger: logs.Logger(slog.LevelInfo)})
	caughtUp(t, r, sp)
	if got := r.Status().ShardFiltering; got != reflector.ShardFilteringServer {
		t.Fatalf("ShardFiltering %q after a sharded list", got)
	}
	// The open watch was planned sharded; the next one, after a clean end, is not.
	f.sim.Faults().IgnoreShardSelector(true)
	f.sim.Faults().CutWatches(1, false)
	sp.createIn(t, f, "ends-the-watch-")
	testwait.Eventually(t, 10*time.Second, func() bool { _, w := f.log.split(); return len(w) >= 2 }, "waiting for a second watch")
	f.sim.Faults().CutWatches(0, false)
	sp.create(t, f, seq("q", 10)...)
	caughtUp(t, r, sp)
	if st := r.Status(); st.ShardFiltering != reflector.ShardFilteringClient || st.ShardDropped == 0 {
		t.Errorf("after unsharded watch events: ShardFiltering %q, %d dropped", st.ShardFiltering, st.ShardDropped)
	}
	if d := cmp.Diff(sp.in, store.names()); d != "" {
		t.Errorf("the store (-in the shard +stored):\n%s", d)
	}
	f.sim.Faults().IgnoreShardSelector(false)
	forceRelist(t, f, r, sp)
	if got := r.Status().ShardFiltering; got != reflector.ShardFilteringServer {
		t.Errorf("ShardFiltering %q after a relist that echoed the selector", got)
	}
	if d := cmp.Diff(sp.in, store.names()); d != "" {
		t.Errorf("after the relist, the store (-in the shard +stored):\n%s", d)
	}
	out := logs.String()
	if strings.Count(out, "the server does not filter by shard") != 1 || strings.Count(out, "the server filters by shard") != 2 {
		t.Errorf("the log does not tell each change once:\n%s", out)
	}
}

// Without a shard, nothing is filtered and the status says nothing of sharding.
func TestNoShardNoFiltering(t *testing.T) {
	f := newFixture(t, 0)
	sp := &shardPods{sel: shard.Selector{}}
	sp.create(t, f, seq("p", 4)...)
	store := &setStore{objs: map[string]*object.Pod{}}
	r := f.run(t, store, reflector.Options{})
	caughtUp(t, r, sp)
	if st := r.Status(); st.ShardFiltering != "" || st.ShardDropped != 0 {
		t.Errorf("ShardFiltering %q, %d dropped, without a shard", st.ShardFiltering, st.ShardDropped)
	}
	if len(store.names()) != 4 {
		t.Errorf("stored %v", store.names())
	}
	for _, req := range f.log.snapshot() {
		if req.query.Has("shardSelector") {
			t.Errorf("a request with shardSelector: %v", req.query)
		}
	}
}
