package deltafifo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/indexer"
	"github.com/kinformer/kinformer/object"
)

// FuzzFIFOModel reads the fuzzer's bytes as the operations of an informer's data path:
// what a reflector puts in the FIFO (Add, Update, Delete, Replace with a list, the
// ReplaceWithin of one namespace's part, Resync),
// Pop into an indexer as the informer applies items, AddIndexers and ByIndex on that
// indexer, and Close. A model runs alongside: a plain queue with the FIFO's one
// documented liberty (a Delete right after a pending Delete of the same key is dropped),
// and plain maps for the cache. After every step the FIFO must hand out exactly what
// the model's queue says, in the same order, HasSynced and Len must agree, the cache
// must hold what the popped items say, with indexes computed from it, and, whenever the
// queue is empty, the cache must equal the result of applying every operation the FIFO
// accepted, without dropping any: the dedup may save work, never change the outcome.
func FuzzFIFOModel(f *testing.F) {
	for _, seed := range [][]byte{
		{fAdd, 0, fAdd, 1, fPop, fUpdate, 0, fDelete, 0, fDelete, 0, fPop, fPop, fPop},
		{fReplace, 3, 0, 1, 2, fAdd, 3, fPop, fAddIndex, 1, fByIndex, 1, 0, fPop},
		{fAdd, 2, fDelete, 2, fReplace, 1, 2, fDelete, 2, fPop, fPop, fPop, fPop, fByIndex, 0, 0},
		{fResync, fReplace, 0, fAdd, 4, fClose, fAdd, 5, fPop},
		{fReplace, 3, 0, 1, 2, fPop, fDelete, 0, fReplaceWithin, 0, 1, 4, fDelete, 0, fDelete, 1, fPop, fPop, fPop, fPop},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, ops []byte) {
		h := newFIFOHarness()
		in := &byteReader{data: ops}
		for step := 0; step < maxFIFOSteps && len(in.data) > 0; step++ {
			what, err := h.apply(in)
			if err == nil {
				err = h.check()
			}
			if err != nil {
				t.Fatalf("step %d (%s): %v\nsteps so far:\n%s", step, what, err, h.history())
			}
		}
	})
}

// maxFIFOSteps caps an input's operations: over eight keys, longer runs reach nothing
// new, and would be slow to run and to minimize.
const maxFIFOSteps = 96

// The operations, by the first byte of each (modulo their number).
const (
	fAdd = iota
	fUpdate
	fDelete
	fReplace
	fResync
	fPop
	fAddIndex
	fByIndex
	fClose
	fBookmark
	fReplaceWithin
	fNumOps
)

// byteReader hands out the fuzzer's bytes one at a time, then zeros.
type byteReader struct{ data []byte }

func (r *byteReader) next(n int) int {
	if len(r.data) == 0 {
		return 0
	}
	b := r.data[0]
	r.data = r.data[1:]
	return int(b) % n
}

// entry is one item of the model's queue.
type entry struct {
	delta    DeltaType // "" for a Replace, a Resync or a Bookmark
	bookmark string
	obj      *object.Pod
	replace  []*object.Pod
	rv       string
	initial  bool
	resync   bool
	// scope, for a ReplaceWithin, is the namespace of the part it replaces.
	scope string
}

// inScope reports whether p is in the part e replaces: all of the cache for a Replace.
func (e *entry) inScope(p *object.Pod) bool { return e.scope == "" || p.Namespace == e.scope }

type fifoHarness struct {
	fifo  *FIFO[*object.Pod]
	cache *indexer.Indexer[*object.Pod]

	// The model: the queue, the newest pending delta of each key since the last Replace
	// (the one a Delete may be deduplicated against), and the cache's objects and indexes.
	queue     []*entry
	pending   map[string]*entry
	populated bool
	synced    bool
	closed    bool
	applied   map[string]*object.Pod
	funcs     map[string]indexer.IndexFunc[*object.Pod]
	// accepted is the cache as it would be had every operation been applied as it was
	// queued, none dropped.
	accepted map[string]*object.Pod

	rv        int    // resourceVersions tell every object made apart
	appliedRV string // the resourceVersion of the newest item applied
	steps     []string
}

func newFIFOHarness() *fifoHarness {
	return &fifoHarness{fifo: New[*object.Pod](), cache: indexer.New[*object.Pod](),
		pending: map[string]*entry{}, applied: map[string]*object.Pod{}, accepted: map[string]*object.Pod{},
		funcs: map[string]indexer.IndexFunc[*object.Pod]{indexer.NamespaceIndex: indexer.ByNamespace[*object.Pod]}}
}

// object makes a new state of one of eight keys, labelled by the key's byte and the
// state's, so that indexes by label move between values.
func (h *fifoHarness) object(in *byteReader) *object.Pod {
	b := in.next(256)
	ns := []string{"a", "b"}[b%2]
	name := fmt.Sprint("p", b/2%4)
	h.rv++
	return &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: fmt.Sprint(h.rv),
		Labels: map[string]string{"tier": []string{"web", "db", "cache"}[(b/8+h.rv)%3]}}}
}

// fuzzIndexes are the indexes the fuzzer can add, by name.
func fuzzIndexes() map[string]indexer.IndexFunc[*object.Pod] {
	return map[string]indexer.IndexFunc[*object.Pod]{
		"tier": func(p *object.Pod) ([]string, error) { return []string{p.Labels["tier"]}, nil },
		"name": func(p *object.Pod) ([]string, error) { return []string{p.Name}, nil },
		"none": func(p *object.Pod) ([]string, error) { return nil, nil },
	}
}

func (h *fifoHarness) apply(in *byteReader) (string, error) {
	what, err := h.step(in)
	h.steps = append(h.steps, what)
	return what, err
}

func (h *fifoHarness) step(in *byteReader) (string, error) {
	switch op := in.next(fNumOps); op {
	case fAdd:
		return h.delta(Added, h.fifo.Add, in), nil
	case fUpdate:
		return h.delta(Updated, h.fifo.Update, in), nil
	case fDelete:
		return h.delta(Deleted, h.fifo.Delete, in), nil
	case fReplace:
		objs := make([]*object.Pod, in.next(5))
		for i := range objs {
			objs[i] = h.object(in)
		}
		rv := fmt.Sprint("list-", h.rv)
		h.fifo.Replace(objs, rv)
		h.queueReplace(objs, rv)
		return fmt.Sprintf("Replace %s", keys(objs)), nil
	case fReplaceWithin:
		ns := []string{"a", "b"}[in.next(2)]
		objs := make([]*object.Pod, in.next(4))
		for i := range objs {
			objs[i] = h.object(in)
			objs[i].Namespace = ns // in the part, as the contract asks
		}
		rv := fmt.Sprint("part-", h.rv)
		h.fifo.ReplaceWithin(func(p *object.Pod) bool { return p.Namespace == ns }, objs, rv)
		h.queueReplaceWithin(ns, objs, rv)
		return fmt.Sprintf("ReplaceWithin %s %s", ns, keys(objs)), nil
	case fBookmark:
		h.rv++
		rv := fmt.Sprint("bookmark-", h.rv)
		h.fifo.Bookmark(rv)
		if !h.closed {
			// A bookmark right behind a queued one replaces it.
			if n := len(h.queue); n > 0 && h.queue[n-1].bookmark != "" {
				h.queue[n-1].bookmark = rv
			} else {
				h.queue = append(h.queue, &entry{bookmark: rv})
			}
		}
		return "Bookmark " + rv, nil
	case fResync:
		h.fifo.Resync()
		if !h.closed {
			h.queue = append(h.queue, &entry{resync: true})
		}
		return "Resync", nil
	case fPop:
		return h.pop()
	case fAddIndex:
		pool := fuzzIndexes()
		names := slices.Sorted(maps.Keys(pool))
		name := names[in.next(len(names))]
		err := h.cache.AddIndexers(map[string]indexer.IndexFunc[*object.Pod]{name: pool[name]})
		if _, taken := h.funcs[name]; taken != (err != nil) {
			return "AddIndexers " + name, fmt.Errorf("AddIndexers(%s) = %v with %v", name, err, slices.Sorted(maps.Keys(h.funcs)))
		}
		h.funcs[name] = pool[name]
		return "AddIndexers " + name, nil
	case fByIndex:
		names := append(slices.Sorted(maps.Keys(h.funcs)), "missing")
		name := names[in.next(len(names))]
		value := []string{"a", "b", "web", "db", "cache", "p0", "p1"}[in.next(7)]
		return fmt.Sprintf("ByIndex %s=%s", name, value), h.checkByIndex(name, value)
	}
	h.fifo.Close()
	h.closed = true
	return "Close", nil
}

// delta hands a new object state to the FIFO with call, and queues it in the model.
func (h *fifoHarness) delta(t DeltaType, call func(*object.Pod), in *byteReader) string {
	p := h.object(in)
	call(p)
	h.queueDelta(t, p)
	return fmt.Sprintf("%s %s@%s", t, object.Key(p), p.ResourceVersion)
}

func (h *fifoHarness) queueDelta(t DeltaType, p *object.Pod) {
	key := object.Key(p)
	if h.closed {
		return
	}
	if prev := h.pending[key]; t == Deleted && prev != nil && prev.delta == Deleted {
		return // the documented dedup: the object is already going away
	}
	e := &entry{delta: t, obj: p}
	h.queue = append(h.queue, e)
	h.pending[key] = e
	h.populated = true
	h.apply1(h.accepted, e)
}

func (h *fifoHarness) queueReplace(objs []*object.Pod, rv string) {
	if h.closed {
		return
	}
	e := &entry{replace: objs, rv: rv, initial: !h.populated}
	h.queue = append(h.queue, e)
	h.populated = true
	// A relist states the whole truth: a Delete after it is news again, whatever was
	// pending before it.
	clear(h.pending)
	h.apply1(h.accepted, e)
}

func (h *fifoHarness) queueReplaceWithin(ns string, objs []*object.Pod, rv string) {
	if h.closed {
		return
	}
	e := &entry{replace: objs, rv: rv, scope: ns}
	h.queue = append(h.queue, e)
	// The part's keys have news again; the others' pending deltas stand.
	for key, p := range h.pending {
		if p.obj != nil && e.inScope(p.obj) {
			delete(h.pending, key)
		}
	}
	for _, p := range objs {
		delete(h.pending, object.Key(p))
	}
	h.apply1(h.accepted, e)
}

// apply1 applies an entry to a model cache, as the informer applies an item.
func (h *fifoHarness) apply1(cache map[string]*object.Pod, e *entry) {
	switch {
	case e.resync, e.bookmark != "":
	case e.delta == "":
		maps.DeleteFunc(cache, func(_ string, p *object.Pod) bool { return e.inScope(p) })
		for _, p := range e.replace {
			cache[object.Key(p)] = p
		}
	case e.delta == Deleted:
		delete(cache, object.Key(e.obj))
	default:
		cache[object.Key(e.obj)] = e.obj
	}
}

// pop pops an item from the FIFO into the cache, and checks it is the model's next.
func (h *fifoHarness) pop() (string, error) {
	ctx, cancel := context.WithCancel(context.Background())
	if len(h.queue) == 0 && !h.closed {
		cancel() // nothing to wait for: Pop must return, not block
	}
	defer cancel()
	var got *Item[*object.Pod]
	err := h.fifo.Pop(ctx, func(it *Item[*object.Pod]) error {
		got = it
		return h.process(it)
	})
	switch {
	case h.closed:
		if !errors.Is(err, ErrClosed) {
			return "Pop", fmt.Errorf("Pop after Close = %v, want ErrClosed", err)
		}
		return "Pop (closed)", nil
	case len(h.queue) == 0:
		if !errors.Is(err, context.Canceled) {
			return "Pop", fmt.Errorf("Pop of an empty FIFO with a cancelled context = %v", err)
		}
		return "Pop (empty)", nil
	case err != nil:
		return "Pop", err
	}
	want := h.queue[0]
	h.queue = h.queue[1:]
	if want.delta != "" && h.pending[object.Key(want.obj)] == want {
		delete(h.pending, object.Key(want.obj))
	}
	if want.initial {
		h.synced = true
	}
	h.apply1(h.applied, want)
	switch { // the version of the newest state applied: what the cache must claim
	case want.bookmark != "":
		h.appliedRV = want.bookmark
	case want.delta == "" && !want.resync:
		h.appliedRV = want.rv
	case want.delta != "":
		h.appliedRV = want.obj.ResourceVersion
	}
	return "Pop " + describe(got), sameItem(got, want)
}

// process applies an item to the cache as the informer does, checking the tombstones
// ReplaceDeltas computes against the model.
func (h *fifoHarness) process(it *Item[*object.Pod]) error {
	switch {
	case it.Resync:
	case it.Replace != nil:
		replaced, tombstones := ReplaceDeltas[*object.Pod](it.Replace, h.cache)
		var wantTombstones []string
		listed := map[string]bool{}
		for _, p := range it.Replace.Objects {
			listed[object.Key(p)] = true
		}
		for _, key := range slices.Sorted(maps.Keys(h.applied)) {
			if !listed[key] && h.queue[0].inScope(h.applied[key]) {
				wantTombstones = append(wantTombstones, fmt.Sprintf("%s@%s", key, h.applied[key].ResourceVersion))
			}
		}
		var gotTombstones []string
		for _, d := range tombstones {
			if d.Type != Deleted || !d.FinalStateUnknown || d.Key != object.Key(d.Object) {
				return fmt.Errorf("tombstone %+v", d)
			}
			gotTombstones = append(gotTombstones, fmt.Sprintf("%s@%s", d.Key, d.Object.ResourceVersion))
		}
		if d := cmp.Diff(wantTombstones, gotTombstones); d != "" {
			return fmt.Errorf("tombstones of a relist (-want +got):\n%s", d)
		}
		if len(replaced) != len(it.Replace.Objects) {
			return fmt.Errorf("%d replaced deltas for %d listed objects", len(replaced), len(it.Replace.Objects))
		}
		for i, d := range replaced {
			if d.Type != Replaced || d.Object != it.Replace.Objects[i] {
				return fmt.Errorf("replaced delta %d is %+v, not the listed object", i, d)
			}
		}
		if it.Replace.Scope != nil {
			return h.cache.ReplaceWithin(it.Replace.Scope, it.Replace.Objects, it.Replace.ResourceVersion)
		}
		return h.cache.Replace(it.Replace.Objects, it.Replace.ResourceVersion)
	case it.Bookmark != "":
		h.cache.Bookmark(it.Bookmark)
	case it.Delta.Type == Deleted:
		h.cache.Delete(it.Delta.Object)
	default:
		return h.cache.Update(it.Delta.Object)
	}
	return nil
}

func sameItem(got *Item[*object.Pod], want *entry) error {
	ok := false
	switch {
	case want.bookmark != "":
		ok = got.Bookmark == want.bookmark && got.Replace == nil && !got.Resync
	case want.resync:
		ok = got.Resync && got.Replace == nil
	case want.delta == "":
		r := got.Replace
		ok = r != nil && !got.Resync && slices.Equal(r.Objects, want.replace) && r.ResourceVersion == want.rv && r.Initial == want.initial &&
			(r.Scope == nil) == (want.scope == "")
		for _, ns := range []string{"a", "b"} {
			probe := &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: ns}}
			ok = ok && (r.Scope == nil || r.Scope(probe) == want.inScope(probe))
		}
	default:
		d := got.Delta
		ok = got.Replace == nil && !got.Resync && d.Type == want.delta && d.Object == want.obj && d.Key == object.Key(want.obj) && !d.FinalStateUnknown
	}
	if !ok {
		return fmt.Errorf("popped %s, want %s", describe(got), describeEntry(want))
	}
	return nil
}

// check compares the FIFO's and the cache's state with the model's.
func (h *fifoHarness) check() error {
	if got := h.fifo.Len(); got != len(h.queue) {
		return fmt.Errorf("Len() = %d, the model has %d queued", got, len(h.queue))
	}
	if got := h.fifo.HasSynced(); got != h.synced {
		return fmt.Errorf("HasSynced() = %v, want %v", got, h.synced)
	}
	if err := sameContent("the cache", h.cache, h.applied); err != nil {
		return err
	}
	if got := h.cache.LastStoreSyncResourceVersion(); got != h.appliedRV {
		return fmt.Errorf("the cache claims resourceVersion %q, the newest state applied is %q", got, h.appliedRV)
	}
	if len(h.queue) == 0 && !maps.Equal(h.applied, h.accepted) {
		return fmt.Errorf("with nothing queued, the cache holds %s, but applying every accepted operation gives %s",
			keysRV(h.applied), keysRV(h.accepted))
	}
	for name, fn := range h.funcs {
		want := map[string][]string{}
		for key, p := range h.applied {
			vals, _ := fn(p)
			for _, v := range vals {
				want[v] = append(want[v], key)
			}
		}
		got := map[string][]string{}
		for _, v := range h.cache.ListIndexFuncValues(name) {
			got[v], _ = h.cache.IndexKeys(name, v)
		}
		for _, keys := range want {
			slices.Sort(keys)
		}
		if !maps.EqualFunc(want, got, slices.Equal) {
			return fmt.Errorf("index %q (-model +cache):\n%s", name, cmp.Diff(want, got))
		}
	}
	return nil
}

func (h *fifoHarness) checkByIndex(name, value string) error {
	got, err := h.cache.ByIndex(name, value)
	fn, exists := h.funcs[name]
	if !exists {
		if err == nil {
			return fmt.Errorf("ByIndex of the missing index %q answered %v", name, got)
		}
		return nil
	}
	if err != nil {
		return err
	}
	var want []*object.Pod
	for _, key := range slices.Sorted(maps.Keys(h.applied)) {
		if vals, _ := fn(h.applied[key]); slices.Contains(vals, value) {
			want = append(want, h.applied[key])
		}
	}
	slices.SortFunc(got, func(a, b *object.Pod) int { return strings.Compare(object.Key(a), object.Key(b)) })
	if !slices.Equal(got, want) {
		return fmt.Errorf("ByIndex(%s, %s) = %s, want %s", name, value, keys(got), keys(want))
	}
	return nil
}

func sameContent(what string, cache *indexer.Indexer[*object.Pod], want map[string]*object.Pod) error {
	if got := cache.ListKeys(); !slices.Equal(got, slices.Sorted(maps.Keys(want))) {
		return fmt.Errorf("%s has keys %v, want %s", what, got, keysRV(want))
	}
	for key, p := range want {
		if got, ok := cache.Get(key); !ok || got != p {
			return fmt.Errorf("%s holds another state of %s than %s", what, key, p.ResourceVersion)
		}
	}
	return nil
}

func (h *fifoHarness) history() string {
	var s string
	for i, step := range h.steps {
		s += fmt.Sprintf("  %d: %s\n", i, step)
	}
	return s
}

func keys(objs []*object.Pod) string {
	var out []string
	for _, p := range objs {
		out = append(out, object.Key(p)+"@"+p.ResourceVersion)
	}
	return fmt.Sprint(out)
}

func keysRV(m map[string]*object.Pod) string {
	var objs []*object.Pod
	for _, key := range slices.Sorted(maps.Keys(m)) {
		objs = append(objs, m[key])
	}
	return keys(objs)
}

func describe(it *Item[*object.Pod]) string {
	switch {
	case it == nil:
		return "nothing"
	case it.Resync:
		return "Resync"
	case it.Bookmark != "":
		return "Bookmark " + it.Bookmark
	case it.Replace != nil && it.Replace.Scope != nil:
		return fmt.Sprintf("ReplaceWithin %s", keys(it.Replace.Objects))
	case it.Replace != nil:
		return fmt.Sprintf("Replace %s (initial %v)", keys(it.Replace.Objects), it.Replace.Initial)
	}
	return fmt.Sprintf("%s %s@%s", it.Delta.Type, it.Delta.Key, it.Delta.Object.ResourceVersion)
}

func describeEntry(e *entry) string {
	switch {
	case e.resync:
		return "Resync"
	case e.bookmark != "":
		return "Bookmark " + e.bookmark
	case e.delta == "" && e.scope != "":
		return fmt.Sprintf("ReplaceWithin %s %s", e.scope, keys(e.replace))
	case e.delta == "":
		return fmt.Sprintf("Replace %s (initial %v)", keys(e.replace), e.initial)
	}
	return fmt.Sprintf("%s %s@%s", e.delta, object.Key(e.obj), e.obj.ResourceVersion)
}
