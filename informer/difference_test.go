package informer

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/indexer"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
	"github.com/kinformer/kinformer/shard"
)

// secondQuarterNamespaces is the second quarter of the namespace hash space: in
// lowerNamespaces, next to quarterNamespaces.
var secondQuarterNamespaces = shard.Selector{Field: shard.Namespace, Ranges: []shard.Range{{First: 1 << 62, Last: 1<<63 - 1}}}

// A running informer's shard changes while it watches, and the change costs the
// difference: a growth lists the part gained alone (one list, delivering the pods of
// that part from a server that filters, every pod from one that does not), a shrink
// lists nothing, a move to a neighbouring part does both. Handlers hear an add for each
// pod that joined, a delete (finalStateUnknown) for each that left, and nothing about
// those that stayed; the channel closes with the cache holding the new shard; no relist
// is counted.
func TestInformerSetShardCostsTheDifference(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to shard.Selector
	}{
		{"grow", quarterNamespaces, lowerNamespaces},
		{"shrink", lowerNamespaces, quarterNamespaces},
		{"move", quarterNamespaces, secondQuarterNamespaces},
		{"to no shard", lowerNamespaces, shard.Selector{}},
		{"from no shard", shard.Selector{}, quarterNamespaces},
	} {
		for _, ignore := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/server ignores the selector=%v", tc.name, ignore), func(t *testing.T) {
				testSetShardCostsTheDifference(t, tc.from, tc.to, ignore)
			})
		}
	}
}

func testSetShardCostsTheDifference(t *testing.T, from, to shard.Selector, ignore bool) {
	e := newShardEnv(t)
	e.sim.Faults().IgnoreShardSelector(ignore)
	e.createEverywhere(t, "a")
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	inf := mustNew(t, e.all, Options[*object.Pod]{Name: "pods", Shard: from, Reflector: fastReflector(), Metrics: m})
	rec := newRecorder()
	if _, err := inf.AddEventHandler(rec, HandlerOptions{}); err != nil {
		t.Fatal(err)
	}
	run(t, inf)
	caughtUp(t, inf, e)
	wasIn := e.selected(from)
	if d := cmp.Diff(wasIn, cachedKeys(inf)); d != "" {
		t.Fatalf("before SetShard, the cache (-in the shard +cached):\n%s", d)
	}
	pods := map[string]string{"name": "pods"}
	count := func() (lists, listed float64) {
		return metric(t, reg, "kinformer_reflector_lists_total", pods), metric(t, reg, "kinformer_informer_listed_objects_total", pods)
	}
	lists0, listed0 := count()
	// What the handler heard so far is counted once it has heard the whole cache: the
	// initial adds may still be on their way to it when the cache has them.
	testwait.Eventually(t, 10*time.Second, func() bool { return cmp.Equal(cacheState(inf), rec.snapshot()) },
		"the handler's view never matched the cache before SetShard")
	before := map[string]int{}
	for _, k := range e.keys {
		before[k] = len(rec.linesFor(k))
	}

	done, err := inf.SetShard(to)
	if err != nil {
		t.Fatal(err)
	}
	waitClosed(t, done, "SetShard's channel", func() any { return inf.Status() })
	isIn := e.selected(to)
	if d := cmp.Diff(isIn, cachedKeys(inf)); d != "" {
		t.Errorf("at the close, the cache (-in the new shard +cached):\n%s", d)
	}

	gained := setMinus(isIn, wasIn)
	wantLists, wantListed := 0.0, 0.0
	if len(shard.Without(ranges(to), ranges(from))) > 0 {
		wantLists, wantListed = 1, float64(len(gained))
		if ignore {
			wantListed = float64(len(e.keys)) // every pod, of which the informer keeps the part
		}
	}
	if lists, listed := count(); lists-lists0 != wantLists || listed-listed0 != wantListed {
		t.Errorf("the change made %v lists delivering %v objects; want %v delivering %v (%d pods gained, %d in all)",
			lists-lists0, listed-listed0, wantLists, wantListed, len(gained), len(e.keys))
	}
	testwait.Eventually(t, 10*time.Second, func() bool { return cmp.Equal(cacheState(inf), rec.snapshot()) },
		"the handler's view never matched the cache")
	if broken := rec.check.Broken(); len(broken) > 0 {
		t.Errorf("the handler was told inconsistent events: %q", broken)
	}
	for _, k := range e.keys {
		heard := rec.linesFor(k)[before[k]:]
		var want []string
		switch in, was := slices.Contains(isIn, k), slices.Contains(wasIn, k); {
		case in && !was:
			want = []string{"add " + k + " initial=false"}
		case was && !in:
			want = []string{"delete " + k + " finalStateUnknown=true"}
		}
		if d := cmp.Diff(want, heard, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("what the handler heard about %s (-want +got):\n%s", k, d)
		}
	}
	st := inf.Status()
	want := reflector.ShardFilteringServer
	switch {
	case to.IsZero():
		want = ""
	case from.IsZero():
		want = reflector.ShardFilteringUnknown // no list told, and nothing before said
	case ignore:
		want = reflector.ShardFilteringClient
	}
	if st.ShardFiltering != want || st.Relists != 0 || st.LastError != nil || !st.Synced {
		t.Errorf("status %+v: want ShardFiltering %q, no relist counted, no error, synced", st, want)
	}
	// The watch that resumed follows the server.
	e.createEverywhere(t, "z")
	caughtUp(t, inf, e)
	if d := cmp.Diff(e.selected(to), cachedKeys(inf)); d != "" {
		t.Errorf("after new pods, the cache (-in the new shard +cached):\n%s", d)
	}
}

// ranges is the part of the space sel selects: all of it for the zero Selector.
func ranges(sel shard.Selector) []shard.Range {
	if sel.IsZero() {
		return []shard.Range{shard.Whole()}
	}
	return sel.Ranges
}

// An object an index function failed on, in the part the shard loses, leaves the
// cache's failures with the part: it is no longer the informer's to store. One outside
// the part stays reported.
func TestInformerShrinkClearsTheFailuresOfThePartLost(t *testing.T) {
	e := newShardEnv(t)
	errBad := errors.New("bad pod")
	failing := func(p *object.Pod) ([]string, error) {
		if strings.HasPrefix(p.Name, "bad") {
			return nil, errBad
		}
		return []string{p.Name}, nil
	}
	inf := mustNew(t, e.all, Options[*object.Pod]{Name: "pods", Shard: lowerNamespaces, Reflector: fastReflector(),
		Indexers: map[string]indexer.IndexFunc[*object.Pod]{"name": failing}})
	run(t, inf)
	var lost, kept string // a namespace in the second quarter, and one in the first
	for i := range 20 {
		ns := shardNamespace(i)
		switch {
		case lost == "" && secondQuarterNamespaces.Matches(ns):
			lost = ns
		case kept == "" && quarterNamespaces.Matches(ns):
			kept = ns
		}
	}
	if lost == "" || kept == "" {
		t.Fatal("no namespace in one of the quarters")
	}
	e.createIn(t, lost, "bad-lost")
	e.createIn(t, kept, "bad-kept")
	caughtUp(t, inf, e)
	if n := inf.Status().LeftOut; n != 2 {
		t.Fatalf("%d objects left out, want both bad pods", n)
	}
	done, err := inf.SetShard(quarterNamespaces)
	if err != nil {
		t.Fatal(err)
	}
	waitClosed(t, done, "SetShard's channel", func() any { return inf.Status() })
	if st := inf.Status(); st.LeftOut != 1 || st.StoreError == nil || !errors.Is(st.StoreError, errBad) {
		t.Errorf("status %+v: want the kept bad pod alone left out", st)
	}
}
