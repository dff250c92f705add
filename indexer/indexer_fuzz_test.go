package indexer

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/object"
)

// FuzzIndexerModel reads the fuzzer's bytes as a sequence of operations on an indexer
// (Add, Update, Delete, DeleteKey, Replace, ReplaceWithin one namespace, AddIndexers,
// AddIndexers while a Replace or a ReplaceWithin is building its new content on another
// goroutine, ByIndex) and applies each to a model
// too: a plain map of objects and the list of index functions. After every step the
// indexer must hold the model's objects, and each of its indexes must be what the
// index function gives over those objects: no stale entry, no missing one, no empty
// value left behind.
func FuzzIndexerModel(f *testing.F) {
	for _, seed := range [][]byte{
		{opAdd, 0, 1, opAdd, 1, 2, opAddIndexers, 0, 1, opByIndex, 2, 0, opDelete, 0},
		{opAddIndexers, 2, 3, opReplace, 3, 0, 1, 13, 2, 4, 0, opQuery, opUpdate, 4, 3},
		{opAdd, 5, 1, opReplaceWhileAdding, 2, 5, 1, 6, 2, 4, 5, opByIndex, 4, 1},
		{opReplace, 2, 7, 1, 7, 2, opAddIndexers, 0, 0, opAddIndexers, 0, 0, opDeleteKey, 7},
		{opAdd, 0, 1, opAdd, 3, 2, opAddIndexers, 6, 1, opReplaceWithin, 0, 3, 1, 4, 2, 1, opReplaceWithinWhileAdding, 1, 2, 3, 0, 4, 1, 0, opQuery},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, ops []byte) {
		leakcheck.Check(t)
		h := newIndexerHarness()
		in := &opReader{data: ops}
		for step := 0; step < maxSteps && !in.done(); step++ {
			what := h.apply(t, in)
			if err := h.check(); err != nil {
				t.Fatalf("step %d (%s): %v", step, what, err)
			}
		}
	})
}

// maxSteps caps an input's operations: over eight keys, longer runs reach nothing new,
// and each step's full check would make them slow to run and to minimize.
const maxSteps = 64

// The operations, by the first byte of each (modulo their number).
const (
	opAdd = iota
	opUpdate
	opDelete
	opDeleteKey
	opReplace
	opAddIndexers
	opReplaceWhileAdding
	opByIndex
	opQuery
	opReplaceWithin
	opReplaceWithinWhileAdding
	numOps
)

// opReader hands out the fuzzer's bytes one at a time, then zeros.
type opReader struct {
	data []byte
}

func (r *opReader) done() bool { return len(r.data) == 0 }

func (r *opReader) next(n int) int {
	if len(r.data) == 0 {
		return 0
	}
	b := r.data[0]
	r.data = r.data[1:]
	return int(b) % n
}

// fuzzKeys is a small key space, so that operations meet the same objects often.
func fuzzKeys() [][2]string {
	return [][2]string{{"a", "p0"}, {"a", "p1"}, {"a", "p2"}, {"b", "p0"}, {"b", "p1"}, {"b", "p3"}, {"", "node"}, {"c", "p0"}}
}

// labelSets are the labels an object can have: index values present, absent, shared.
func labelSets() []map[string]string {
	return []map[string]string{nil, {"app": "web"}, {"app": "db"}, {"app": "web", "tier": "front"}, {"tier": "back"}, {"app": ""}}
}

// namedIndex is an index function and its name.
type namedIndex struct {
	name string
	fn   IndexFunc[*object.Pod]
}

// indexPool is every index function the fuzzer can add: single, multiple, repeated and
// no values, and values made of several fields.
func indexPool() []namedIndex {
	return []namedIndex{
		{"app", func(p *object.Pod) ([]string, error) {
			if v, ok := p.Labels["app"]; ok {
				return []string{v}, nil
			}
			return nil, nil
		}},
		{"labels", func(p *object.Pod) ([]string, error) {
			var out []string
			for k, v := range p.Labels {
				out = append(out, k+"="+v)
			}
			return out, nil
		}},
		{"twice", func(p *object.Pod) ([]string, error) { return []string{p.Name, p.Name}, nil }},
		{"nothing", func(p *object.Pod) ([]string, error) { return nil, nil }},
		{"ns-app", func(p *object.Pod) ([]string, error) { return []string{p.Namespace + "/" + p.Labels["app"]}, nil }},
		{"rv", func(p *object.Pod) ([]string, error) { return []string{p.ResourceVersion}, nil }},
		// fails on some objects: the store must keep the key's previous state whole.
		{"fails", func(p *object.Pod) ([]string, error) {
			if p.Labels["tier"] == "back" {
				return nil, errBackTier
			}
			return []string{p.Labels["tier"]}, nil
		}},
	}
}

var errBackTier = errors.New("no index for the back tier")

// fails reports whether an index function of the model fails on p.
func (h *indexerHarness) fails(p *object.Pod) bool {
	for _, fn := range h.funcs {
		if _, err := fn(p); err != nil {
			return true
		}
	}
	return false
}

type indexerHarness struct {
	ix *Indexer[*object.Pod]
	// The model.
	objs  map[string]*object.Pod
	funcs map[string]IndexFunc[*object.Pod]

	keys   [][2]string
	labels []map[string]string
	pool   []namedIndex

	rv int // resourceVersions, so that every object made is told apart
	// onBuild, when set, runs inside the "gate" index function, which every object of a
	// Replace passes through while the Replace builds its new content outside the lock.
	onBuild func()
}

func newIndexerHarness() *indexerHarness {
	h := &indexerHarness{ix: New[*object.Pod](), objs: map[string]*object.Pod{},
		funcs: map[string]IndexFunc[*object.Pod]{NamespaceIndex: ByNamespace[*object.Pod]},
		keys:  fuzzKeys(), labels: labelSets(), pool: indexPool()}
	gate := func(p *object.Pod) ([]string, error) {
		if h.onBuild != nil {
			h.onBuild()
		}
		return []string{p.Namespace}, nil
	}
	if err := h.ix.AddIndexers(map[string]IndexFunc[*object.Pod]{"gate": gate}); err != nil {
		panic(err)
	}
	// The model computes the gate's index with the same values, without the hook.
	h.funcs["gate"] = ByNamespace[*object.Pod]
	return h
}

func (h *indexerHarness) object(in *opReader) *object.Pod {
	k := h.keys[in.next(len(h.keys))]
	h.rv++
	return &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: k[0], Name: k[1], ResourceVersion: fmt.Sprint(h.rv),
		Labels: h.labels[in.next(len(h.labels))]}}
}

func (h *indexerHarness) objects(in *opReader, atLeast int) []*object.Pod {
	objs := make([]*object.Pod, atLeast+in.next(6))
	for i := range objs {
		objs[i] = h.object(in) // keys may repeat: the last one wins, as in a map
	}
	return objs
}

// indexers picks one or two functions of the pool, maybe ones the indexer already has.
func (h *indexerHarness) indexers(in *opReader) map[string]IndexFunc[*object.Pod] {
	out := map[string]IndexFunc[*object.Pod]{}
	for range 1 + in.next(2) {
		f := h.pool[in.next(len(h.pool))]
		out[f.name] = f.fn
	}
	return out
}

// addIndexers is AddIndexers on both: all of them are added, or none when a name is
// taken or a function fails on a stored object.
func (h *indexerHarness) addIndexers(t *testing.T, funcs map[string]IndexFunc[*object.Pod]) {
	refused := false
	for name, fn := range funcs {
		_, dup := h.funcs[name]
		refused = refused || dup
		for _, p := range h.objs {
			_, err := fn(p)
			refused = refused || err != nil
		}
	}
	err := h.ix.AddIndexers(funcs)
	if refused != (err != nil) {
		t.Fatalf("AddIndexers(%v) = %v with indexes %v", slices.Sorted(maps.Keys(funcs)), err, slices.Sorted(maps.Keys(h.funcs)))
	}
	if !refused {
		maps.Copy(h.funcs, funcs)
	}
}

// replaceModel is a Replace on the model: the last object of each key, except those an
// index function fails on, which keep their previous state (or stay absent).
func (h *indexerHarness) replaceModel(objs []*object.Pod) (failed []string) {
	last := map[string]*object.Pod{}
	for _, p := range objs {
		last[object.Key(p)] = p
	}
	next := map[string]*object.Pod{}
	for key, p := range last {
		if !h.fails(p) {
			next[key] = p
			continue
		}
		failed = append(failed, key)
		if old, ok := h.objs[key]; ok {
			next[key] = old
		}
	}
	h.objs = next
	slices.Sort(failed)
	return failed
}

// scopes are the namespaces a ReplaceWithin can replace: those of fuzzKeys, and one
// without objects.
var scopes = []string{"a", "b", "c", "", "d"}

// inScope is the scope of a ReplaceWithin of namespace ns.
func inScope(ns string) func(*object.Pod) bool {
	return func(p *object.Pod) bool { return p.Namespace == ns }
}

// partObjects makes objects for a ReplaceWithin of ns: in it, as the contract asks.
func (h *indexerHarness) partObjects(in *opReader, ns string, atLeast int) []*object.Pod {
	objs := h.objects(in, atLeast)
	for _, p := range objs {
		p.Namespace = ns
	}
	return objs
}

// replaceWithinModel is a ReplaceWithin of ns on the model: the objects of ns go, but
// those of objs (the last of each key) and those whose new object an index function
// fails on, which keep their previous state (or stay absent).
func (h *indexerHarness) replaceWithinModel(ns string, objs []*object.Pod) (failed []string) {
	last := map[string]*object.Pod{}
	for _, p := range objs {
		last[object.Key(p)] = p
	}
	for key, p := range h.objs {
		if _, listed := last[key]; !listed && p.Namespace == ns {
			delete(h.objs, key)
		}
	}
	for key, p := range last {
		if h.fails(p) {
			failed = append(failed, key)
			continue
		}
		h.objs[key] = p
	}
	slices.Sort(failed)
	return failed
}

// checkReplaceError checks that a Replace's error names exactly the failed keys.
func checkReplaceError(err error, failed []string) error {
	var got []string
	var rerr *ReplaceError
	if errors.As(err, &rerr) {
		for _, f := range rerr.Failed {
			if !errors.Is(f, errBackTier) {
				return fmt.Errorf("failure %v is not the index function's", f)
			}
			got = append(got, f.Key)
		}
	} else if err != nil {
		return err
	}
	if !slices.Equal(got, failed) {
		return fmt.Errorf("Replace reported %v failed, the model %v", got, failed)
	}
	return nil
}

// apply reads one operation, applies it to the indexer and the model, and says what it was.
func (h *indexerHarness) apply(t *testing.T, in *opReader) string {
	switch op := in.next(numOps); op {
	case opAdd, opUpdate:
		p := h.object(in)
		var err error
		if op == opAdd {
			err = h.ix.Add(p)
		} else {
			err = h.ix.Update(p)
		}
		if fails := h.fails(p); fails != (err != nil) {
			t.Fatalf("storing %s %v: error %v, the model says failing is %v", object.Key(p), p.Labels, err, fails)
		}
		if err == nil {
			h.objs[object.Key(p)] = p
		}
		return fmt.Sprintf("store %s %v (%v)", object.Key(p), p.Labels, err)
	case opDelete:
		p := h.object(in) // another state of the object: Delete goes by key
		h.ix.Delete(p)
		delete(h.objs, object.Key(p))
		return "delete " + object.Key(p)
	case opDeleteKey:
		k := h.keys[in.next(len(h.keys))]
		key := object.KeyFor(k[0], k[1])
		h.ix.DeleteKey(key)
		delete(h.objs, key)
		return "delete key " + key
	case opReplace:
		objs := h.objects(in, 0)
		err := h.ix.Replace(objs, "")
		if err := checkReplaceError(err, h.replaceModel(objs)); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("replace with %s", describe(objs))
	case opAddIndexers:
		funcs := h.indexers(in)
		h.addIndexers(t, funcs)
		return fmt.Sprintf("add indexers %v", slices.Sorted(maps.Keys(funcs)))
	case opReplaceWhileAdding:
		objs, funcs := h.objects(in, 1), h.indexers(in)
		h.replaceWhileAdding(t, func() error { return h.ix.Replace(objs, "") }, func() []string { return h.replaceModel(objs) }, funcs)
		return fmt.Sprintf("replace with %s while adding indexers %v", describe(objs), slices.Sorted(maps.Keys(funcs)))
	case opReplaceWithin:
		ns := scopes[in.next(len(scopes))]
		objs := h.partObjects(in, ns, 0)
		err := h.ix.ReplaceWithin(inScope(ns), objs, "")
		if err := checkReplaceError(err, h.replaceWithinModel(ns, objs)); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("replace namespace %q with %s", ns, describe(objs))
	case opReplaceWithinWhileAdding:
		ns := scopes[in.next(len(scopes))]
		objs, funcs := h.partObjects(in, ns, 1), h.indexers(in)
		h.replaceWhileAdding(t, func() error { return h.ix.ReplaceWithin(inScope(ns), objs, "") },
			func() []string { return h.replaceWithinModel(ns, objs) }, funcs)
		return fmt.Sprintf("replace namespace %q with %s while adding indexers %v", ns, describe(objs), slices.Sorted(maps.Keys(funcs)))
	case opByIndex:
		names := slices.Sorted(maps.Keys(h.funcs))
		name := append(names, "missing")[in.next(len(names)+1)]
		value := h.someValue(name, in)
		if err := h.checkByIndex(name, value); err != nil {
			t.Fatalf("ByIndex: %v", err)
		}
		return fmt.Sprintf("by index %s=%q", name, value)
	}
	// opQuery: Get and List agree with the model.
	if got, want := len(h.ix.List()), len(h.objs); got != want {
		t.Fatalf("List has %d objects, the model %d", got, want)
	}
	for key, want := range h.objs {
		if got, ok := h.ix.Get(key); !ok || got != want {
			t.Fatalf("Get(%s) = %v, %v; want the stored object", key, got, ok)
		}
	}
	return "query"
}

// replaceWhileAdding runs replace (a Replace or a ReplaceWithin) on another goroutine
// and, while it is building its new content (stopped inside the gate index function,
// outside the indexer's lock), adds indexes and reads. The reads must see the old
// content, whole; after the replace the new content must be indexed by every index,
// including those added meanwhile. model applies the replace to the model and returns
// the keys that fail.
func (h *indexerHarness) replaceWhileAdding(t *testing.T, replace func() error, model func() []string, funcs map[string]IndexFunc[*object.Pod]) {
	building, proceed := make(chan struct{}), make(chan struct{})
	var once sync.Once
	h.onBuild = func() { once.Do(func() { close(building); <-proceed }) }
	done := make(chan error, 1)
	go func() { done <- replace() }()
	select {
	case <-building:
	case err := <-done:
		// The gate never ran: every object failed an index function that came before it
		// (an object's indexes run in map order, and the first failure ends its staging).
		// The replace is over; add the indexes after it, as the model does.
		h.onBuild = nil
		if err := checkReplaceError(err, model()); err != nil {
			t.Fatal(err)
		}
		h.addIndexers(t, funcs)
		return
	}
	h.addIndexers(t, funcs)
	if err := h.check(); err != nil { // the old content, under the new indexes too
		close(proceed)
		<-done
		t.Fatalf("while a replace was building: %v", err)
	}
	close(proceed)
	err := <-done
	h.onBuild = nil
	if err := checkReplaceError(err, model()); err != nil {
		t.Fatal(err)
	}
}

// someValue picks a value the index has in the model, or one it has not.
func (h *indexerHarness) someValue(name string, in *opReader) string {
	values := slices.Sorted(maps.Keys(h.expected(name)))
	return append(values, "absent")[in.next(len(values)+1)]
}

// expected is the model's index name: value → keys.
func (h *indexerHarness) expected(name string) map[string][]string {
	fn := h.funcs[name]
	out := map[string][]string{}
	if fn == nil {
		return out
	}
	for key, p := range h.objs {
		vals, _ := fn(p)
		for _, v := range vals {
			if !slices.Contains(out[v], key) {
				out[v] = append(out[v], key)
			}
		}
	}
	for _, keys := range out {
		slices.Sort(keys)
	}
	return out
}

func (h *indexerHarness) checkByIndex(name, value string) error {
	got, err := h.ix.ByIndex(name, value)
	if _, exists := h.funcs[name]; !exists {
		if err == nil {
			return fmt.Errorf("index %q does not exist, yet ByIndex answered %v", name, got)
		}
		return nil
	}
	if err != nil {
		return err
	}
	var want []*object.Pod
	for _, key := range h.expected(name)[value] {
		want = append(want, h.objs[key])
	}
	byKey := func(a, b *object.Pod) int { return strings.Compare(object.Key(a), object.Key(b)) }
	slices.SortFunc(got, byKey)
	if len(got) != len(want) || !slices.Equal(got, want) { // the same objects, not copies
		return fmt.Errorf("ByIndex(%s, %q) = %s, want %s", name, value, describe(got), describe(want))
	}
	return nil
}

// check compares the whole indexer with the model.
func (h *indexerHarness) check() error {
	if got, want := h.ix.ListKeys(), slices.Sorted(maps.Keys(h.objs)); !slices.Equal(got, want) {
		return fmt.Errorf("keys %v, want %v", got, want)
	}
	for name := range h.funcs {
		want := h.expected(name)
		got := map[string][]string{}
		for _, v := range h.ix.ListIndexFuncValues(name) {
			keys, err := h.ix.IndexKeys(name, v)
			if err != nil {
				return err
			}
			got[v] = keys
		}
		if !maps.EqualFunc(want, got, slices.Equal) {
			return fmt.Errorf("index %q over %s (-model +indexer):\n%s", name, describe(slices.Collect(maps.Values(h.objs))), cmp.Diff(want, got))
		}
	}
	return nil
}

func describe(objs []*object.Pod) string {
	var parts []string
	for _, p := range objs {
		parts = append(parts, fmt.Sprintf("%s@%s%v", object.Key(p), p.ResourceVersion, p.Labels))
	}
	return "[" + strings.Join(parts, " ") + "]"
}
