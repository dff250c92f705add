package informer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
	"github.com/kinformer/kinformer/shard"
)

// quarterNamespaces is the first quarter of the namespace hash space: part of
// lowerNamespaces.
var quarterNamespaces = shard.Selector{Field: shard.Namespace, Ranges: []shard.Range{{First: 0, Last: 1<<62 - 1}}}

// churn creates pods in the 20 namespaces, round, until the returned function is called;
// that one waits for the last create and records what was created in e.
func (e *shardEnv) churn(t *testing.T, prefix string) (stop func()) {
	done := make(chan struct{})
	var mu sync.Mutex
	var keys []string
	var lastRV string
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			p, err := e.all.Create(context.Background(), &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: shardNamespace(i % 20), Name: fmt.Sprint(prefix, i)}})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			keys, lastRV = append(keys, object.Key(p)), p.ResourceVersion
			mu.Unlock()
		}
	}()
	return func() {
		close(done)
		<-stopped
		e.keys = append(e.keys, keys...)
		slices.Sort(e.keys)
		if lastRV != "" {
			e.lastRV = lastRV
		}
	}
}

// outside is the keys whose namespace sel does not select.
func outside(keys []string, sel shard.Selector) []string {
	var out []string
	for _, k := range keys {
		if ns, _, _ := strings.Cut(k, "/"); !sel.Matches(ns) {
			out = append(out, k)
		}
	}
	return out
}

func waitClosed(t *testing.T, done <-chan struct{}, what string, status func() any) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: never closed; status %+v", what, status())
	}
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// A running informer's shard grows and shrinks while pods are created everywhere. The
// channel closes once the cache holds every pod of the new shard that existed before
// the call, and nothing outside it; handlers hear adds for the pods that joined and
// deletes for those that left, and end with the cache's view. Whether the server
// filters or not, with streaming lists or without.
func TestInformerSetShard(t *testing.T) {
	for _, ch := range []struct {
		name     string
		from, to shard.Selector
	}{{"grow", quarterNamespaces, lowerNamespaces}, {"shrink", lowerNamespaces, quarterNamespaces}} {
		for _, ignore := range []bool{false, true} {
			for _, streaming := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/server ignores the selector=%v/streaming=%v", ch.name, ignore, streaming), func(t *testing.T) {
					testInformerSetShard(t, ch.from, ch.to, ignore, streaming)
				})
			}
		}
	}
}

func testInformerSetShard(t *testing.T, from, to shard.Selector, ignore, streaming bool) {
	e := newShardEnv(t)
	e.sim.Faults().IgnoreShardSelector(ignore)
	e.createEverywhere(t, "a")
	if q, h := len(e.selected(quarterNamespaces)), len(e.selected(lowerNamespaces)); q == 0 || q == h || h == len(e.keys) {
		t.Fatalf("the namespaces do not straddle the quarter and the half: %d pods in the quarter, %d in the half, of %d", q, h, len(e.keys))
	}
	ropts := fastReflector()
	ropts.StreamingList = streaming
	inf := mustNew(t, e.all, Options[*object.Pod]{Name: "pods", Shard: from, Reflector: ropts})
	rec := newRecorder()
	if _, err := inf.AddEventHandler(rec, HandlerOptions{}); err != nil {
		t.Fatal(err)
	}
	run(t, inf)
	caughtUp(t, inf, e)
	if d := cmp.Diff(e.selected(from), cachedKeys(inf)); d != "" {
		t.Fatalf("before SetShard, the cache (-in the shard +cached):\n%s", d)
	}
	wasIn := e.selected(from)

	stop := e.churn(t, "churn")
	before := e.selected(to)
	done, err := inf.SetShard(to)
	if err != nil {
		t.Fatal(err)
	}
	waitClosed(t, done, "SetShard's channel", func() any { return inf.Status() })
	atClose := cachedKeys(inf)
	if missing := setMinus(before, atClose); len(missing) > 0 {
		t.Errorf("the channel closed with pods of the new shard missing from the cache: %v", missing)
	}
	if out := outside(atClose, to); len(out) > 0 {
		t.Errorf("the channel closed with pods outside the new shard in the cache: %v", out)
	}
	stop()
	e.createEverywhere(t, "z")
	caughtUp(t, inf, e)
	if d := cmp.Diff(e.selected(to), cachedKeys(inf)); d != "" {
		t.Errorf("after SetShard, the cache (-in the new shard +cached):\n%s", d)
	}
	testwait.Eventually(t, 10*time.Second, func() bool { return cmp.Equal(cacheState(inf), rec.snapshot()) },
		"the handler's view never matched the cache")
	if broken := rec.check.Broken(); len(broken) > 0 {
		t.Errorf("the handler was told inconsistent events: %q", broken)
	}
	for _, k := range setMinus(wasIn, e.selected(to)) { // the pods that left
		lines := rec.linesFor(k)
		if len(lines) == 0 || lines[len(lines)-1] != "delete "+k+" finalStateUnknown=true" {
			t.Errorf("%s left the shard; the handler heard %q", k, lines)
		}
	}
	for _, k := range setMinus(before, wasIn) { // the pods that joined
		if lines := rec.linesFor(k); !slices.Contains(lines, "add "+k+" initial=false") {
			t.Errorf("%s joined the shard; the handler heard %q", k, lines)
		}
	}
	st := inf.Status()
	want := reflector.ShardFilteringServer
	switch {
	case ignore:
		want = reflector.ShardFilteringClient
	case streaming && len(shard.Without(to.Ranges, from.Ranges)) == 0:
		// A streaming list never tells, and a shrink lists nothing; the list of the part
		// a growth gained tells.
		want = reflector.ShardFilteringUnknown
	}
	if st.ShardFiltering != want || st.Relists != 0 || !st.Synced {
		t.Errorf("status %+v: want ShardFiltering %s, no relist counted, synced", st, want)
	}
}

// setMinus is the elements of a not in b.
func setMinus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// The channel of an informer that cannot list (403) closes when the informer stops, and
// a SetShard after that answers with a closed channel; an invalid shard is refused.
func TestInformerSetShardClosesOnStop(t *testing.T) {
	e := newShardEnv(t)
	e.sim.Faults().Forbid("pods", true)
	inf := mustNew(t, e.all, Options[*object.Pod]{Name: "pods", Shard: quarterNamespaces, Reflector: fastReflector()})
	if _, err := inf.SetShard(shard.Selector{Field: "object.metadata.name", Ranges: []shard.Range{shard.Whole()}}); err == nil {
		t.Error("SetShard accepted a field the server does not hash")
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { inf.Run(ctx); close(stopped) }()
	testwait.Eventually(t, 10*time.Second, func() bool { return inf.Status().LastError != nil }, "waiting for the 403")
	done, err := inf.SetShard(lowerNamespaces)
	if err != nil {
		t.Fatal(err)
	}
	if closed(done) {
		t.Fatal("the channel closed without a list")
	}
	cancel()
	<-stopped
	if !closed(done) {
		t.Error("the channel is still open once the informer has stopped")
	}
	if again, err := inf.SetShard(quarterNamespaces); err != nil || !closed(again) {
		t.Errorf("SetShard on a stopped informer: closed %v, err %v", closed(again), err)
	}
	if st := inf.Status(); st.State != reflector.StateStopped {
		t.Errorf("state %s after the stop", st.State)
	}
}

// Factory.SetShard gives the new shard to the informers that take the factory's (before
// and after Start), not to those with their own, nor (by namespace) to cluster-scoped
// ones; its channel closes once every one of them holds its new shard in its cache.
// Informers made later take it, and the factory's informer keeps its key.
func TestFactorySetShard(t *testing.T) {
	e := newShardEnv(t)
	e.createEverywhere(t, "a")
	e.createNodes(t, "n1", "n2", "n3")
	f := NewFactory(e.client, FactoryOptions{Reflector: fastReflector(), Shard: quarterNamespaces})
	defer f.Shutdown()
	ctx := context.Background()
	follower, err := For[*object.Pod](ctx, f, "pods", Selectors{})
	if err != nil {
		t.Fatal(err)
	}
	metaFollower, err := For[*object.Raw](ctx, f, "pods", Selectors{MetadataOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	own, _ := For[*object.Pod](ctx, f, "pods", Selectors{Shard: quarterNamespaces})
	nodeInf, err := For[*object.Raw](ctx, f, "nodes", Selectors{})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx)
	if err := f.WaitForSync(testwait.Context(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, follower, e)
	caughtUp(t, own, e)
	caughtUp(t, metaFollower, e)

	if _, err := f.SetShard(shard.Selector{Field: shard.UID, Ranges: []shard.Range{{First: 3, Last: 2}}}); err != nil {
		// refused, as it must be
	} else {
		t.Error("Factory.SetShard accepted an inverted range")
	}
	done, err := f.SetShard(lowerNamespaces)
	if err != nil {
		t.Fatal(err)
	}
	waitClosed(t, done, "Factory.SetShard's channel", func() any {
		return map[string]any{"pods": follower.Status(), "pods(metadata)": metaFollower.Status()}
	})
	// At the close, both followers' caches hold the new shard.
	want := e.selected(lowerNamespaces)
	got := map[string][]string{"pods": cachedKeys(follower), "pods(metadata)": cachedKeys(metaFollower),
		"own": cachedKeys(own), "nodes": cachedKeys(nodeInf)}
	wantAll := map[string][]string{"pods": want, "pods(metadata)": want,
		"own": e.selected(quarterNamespaces), "nodes": {"n1", "n2", "n3"}}
	if d := cmp.Diff(wantAll, got); d != "" {
		t.Errorf("the caches at the close (-want +got):\n%s", d)
	}
	if again, _ := For[*object.Pod](ctx, f, "pods", Selectors{}); again != follower {
		t.Error("For after SetShard made another informer for the factory's shard")
	}
	later, err := For[*object.Raw](ctx, f, "pods", Selectors{LabelSelector: "!absent"})
	if err != nil {
		t.Fatal(err)
	}
	caughtUp(t, later, e)
	if d := cmp.Diff(want, cachedKeys(later)); d != "" {
		t.Errorf("an informer made after SetShard (-in the new shard +cached):\n%s", d)
	}
	filtering := map[string]reflector.ShardFiltering{"pods": follower.Status().ShardFiltering,
		"own": own.Status().ShardFiltering, "nodes": nodeInf.Status().ShardFiltering}
	if d := cmp.Diff(map[string]reflector.ShardFiltering{"pods": reflector.ShardFilteringServer,
		"own": reflector.ShardFilteringServer, "nodes": ""}, filtering); d != "" {
		t.Errorf("ShardFiltering (-want +got):\n%s", d)
	}
	// The informer with its own shard never relisted: it is where it was.
	if r := own.Status().Relists; r != 0 {
		t.Errorf("the informer with its own shard relisted %d times", r)
	}
	// The same shard again: nothing to wait for.
	if same, err := f.SetShard(lowerNamespaces); err != nil || !closed(same) {
		t.Errorf("Factory.SetShard with the current shard: closed %v, err %v", closed(same), err)
	}
}

// A Factory.SetShard before Start is applied by the informers' first lists; one that is
// never started is answered by Shutdown.
func TestFactorySetShardBeforeStart(t *testing.T) {
	e := newShardEnv(t)
	e.createEverywhere(t, "a")
	f := NewFactory(e.client, FactoryOptions{Reflector: fastReflector(), Shard: quarterNamespaces})
	inf, err := For[*object.Pod](context.Background(), f, "pods", Selectors{})
	if err != nil {
		t.Fatal(err)
	}
	done, err := f.SetShard(lowerNamespaces)
	if err != nil {
		t.Fatal(err)
	}
	if closed(done) {
		t.Fatal("closed before Start")
	}
	f.Start(context.Background())
	waitClosed(t, done, "Factory.SetShard's channel", func() any { return inf.Status() })
	if d := cmp.Diff(e.selected(lowerNamespaces), cachedKeys(inf)); d != "" {
		t.Errorf("the cache (-in the new shard +cached):\n%s", d)
	}
	f.Shutdown()

	idle := NewFactory(e.client, FactoryOptions{Reflector: fastReflector(), Shard: quarterNamespaces})
	if _, err := For[*object.Pod](context.Background(), idle, "pods", Selectors{}); err != nil {
		t.Fatal(err)
	}
	never, err := idle.SetShard(lowerNamespaces)
	if err != nil {
		t.Fatal(err)
	}
	idle.Shutdown()
	if !closed(never) {
		t.Error("the channel of a factory never started is still open after Shutdown")
	}
}
