package indexer

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/kinformer/kinformer/object"
)

// IndexFunc returns the index values of an object (an object may have several, or none).
type IndexFunc[T any] func(obj T) ([]string, error)

// NamespaceIndex is the name of the built-in index of objects by namespace.
const NamespaceIndex = "namespace"

// ByNamespace is the built-in namespace index function.
func ByNamespace[T object.Object](obj T) ([]string, error) {
	return []string{obj.Meta().Namespace}, nil
}

// IndexError is an index function's failure on one object. The store keeps that key's
// previous state (or none), so every index stays consistent with the objects.
type IndexError struct {
	Index, Key string
	Err        error
}

func (e *IndexError) Error() string {
	return fmt.Sprintf("indexer: index %q of %s: %v", e.Index, e.Key, e.Err)
}

func (e *IndexError) Unwrap() error { return e.Err }

// ReplaceError lists the objects a Replace left out because an index function failed
// on them, sorted by key.
type ReplaceError struct {
	Failed []*IndexError
}

func (e *ReplaceError) Error() string {
	msg := fmt.Sprintf("indexer: %d object(s) not replaced: ", len(e.Failed))
	for i, f := range e.Failed {
		if i == 3 {
			return msg + fmt.Sprintf("; and %d more", len(e.Failed)-3)
		}
		if i > 0 {
			msg += "; "
		}
		msg += f.Error()
	}
	return msg
}

// Unwrap exposes each failure to errors.Is and errors.As.
func (e *ReplaceError) Unwrap() []error {
	errs := make([]error, len(e.Failed))
	for i, f := range e.Failed {
		errs[i] = f
	}
	return errs
}

// Indexer is a thread-safe store of objects by key, with named indexes.
//
// Objects handed out (Get, List, ByIndex) are the stored ones, shared with every other
// reader: treat them as read-only, and use object.DeepCopy to change one.
type Indexer[T object.Object] struct {
	mu    sync.RWMutex
	items store[T] // by namespace and name: also the namespace index (store.go)
	funcs map[string]IndexFunc[T]
	// indices and values are those of the indexes added with AddIndexers: the namespace
	// index is items itself, and keeps nothing of its own.
	indices map[string]map[string]map[string]struct{} // index → value → keys
	// values keeps each key's index values as computed when it was stored, so an update
	// or delete removes exactly what was added even if the index function is not pure.
	values map[string]map[string][]string // index → key → values
	rv     string                         // see LastStoreSyncResourceVersion
	// changes counts the changes to items, so that ReplaceWithin knows whether what it
	// found under the read lock still holds under the write lock.
	changes uint64
}

// New returns an empty indexer with the namespace index.
func New[T object.Object]() *Indexer[T] {
	ix := &Indexer[T]{items: newStore[T](), funcs: map[string]IndexFunc[T]{},
		indices: map[string]map[string]map[string]struct{}{}, values: map[string]map[string][]string{}}
	_ = ix.AddIndexers(map[string]IndexFunc[T]{NamespaceIndex: ByNamespace[T]})
	return ix
}

// AddIndexers adds indexes, at any time: existing objects are indexed at once. It adds
// all of them or, when a name is taken or a function fails on a stored object, none.
func (ix *Indexer[T]) AddIndexers(funcs map[string]IndexFunc[T]) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for name := range funcs {
		if _, dup := ix.funcs[name]; dup {
			return fmt.Errorf("indexer: index %q already exists", name)
		}
	}
	// Build the new indexes aside, so a failure leaves the indexer as it was.
	staged := &Indexer[T]{funcs: funcs, indices: map[string]map[string]map[string]struct{}{}, values: map[string]map[string][]string{}}
	for name := range funcs {
		staged.addIndex(name)
		for key, obj := range ix.items.all() {
			if err := staged.indexOne(name, key, obj); err != nil {
				return err
			}
		}
	}
	for name, f := range funcs {
		ix.funcs[name], ix.indices[name], ix.values[name] = f, staged.indices[name], staged.values[name]
	}
	return nil
}

// Add stores obj (inserting or replacing) under its key.
func (ix *Indexer[T]) Add(obj T) error { return ix.Update(obj) }

// Update stores obj under its key, re-indexing it. It is all or nothing: when an index
// function fails (an *IndexError), the key keeps its previous state and index entries,
// so no reader ever sees an object indexed under some indexes and not others.
func (ix *Indexer[T]) Update(obj T) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	key := ix.keyFor(obj)
	var buf [4]indexValues // on the stack for the usual few indexes
	staged, err := ix.stage(buf[:0], key, obj)
	if err != nil {
		return err
	}
	ix.unindex(key)
	ix.items.put(obj)
	for _, s := range staged {
		ix.addValues(s.index, key, s.values)
	}
	ix.noteRV(obj.Meta().ResourceVersion)
	ix.changes++
	return nil
}

// keyFor is obj's key for the indexes added with AddIndexers, which hold keys; "" when
// there are none (the store holds objects by their namespace and name, and making the
// key was an allocation on every update of a cache without indexes of its own).
func (ix *Indexer[T]) keyFor(obj T) string {
	if len(ix.values) == 0 {
		return ""
	}
	return object.Key(obj)
}

// indexValues is one index's values for the object being stored.
type indexValues struct {
	index  string
	values []string
}

// stage computes obj's values under every index, changing nothing.
func (ix *Indexer[T]) stage(staged []indexValues, key string, obj T) ([]indexValues, error) {
	for name, f := range ix.funcs {
		if name == NamespaceIndex {
			continue // the store is that index
		}
		vals, err := f(obj)
		if err != nil {
			return nil, &IndexError{Index: name, Key: key, Err: err}
		}
		staged = append(staged, indexValues{name, vals})
	}
	return staged, nil
}

// Delete removes the object with obj's key, and records obj's resourceVersion (the
// deletion's) as the store's.
func (ix *Indexer[T]) Delete(obj T) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.unindex(ix.keyFor(obj))
	ix.items.deleteAt(place(obj))
	ix.noteRV(obj.Meta().ResourceVersion)
	ix.changes++
}

// DeleteKey removes the object stored under key, if any.
func (ix *Indexer[T]) DeleteKey(key string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.unindex(key)
	ix.items.delete(key)
	ix.changes++
}

// Bookmark records that the store holds the resource's state at resourceVersion: a
// watch bookmark, or an event the store took no object from.
func (ix *Indexer[T]) Bookmark(resourceVersion string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.noteRV(resourceVersion)
}

// LastStoreSyncResourceVersion is the resourceVersion of the newest state the store
// holds: the last object stored or deleted, relist or bookmark. It moves under the same
// lock as the objects, so a reader never sees a version newer than the content (client-go
// 1.36 has the same method; controllers compare it with their own writes to know whether
// the cache has seen them).
func (ix *Indexer[T]) LastStoreSyncResourceVersion() string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.rv
}

func (ix *Indexer[T]) noteRV(rv string) {
	if rv != "" {
		ix.rv = rv
	}
}

// Replace swaps the whole content for objs, stored at resourceVersion, at once: readers
// see the old content or the new one, never a mix. The new maps are built before the
// swap, so a relist holds at most two copies of the indexes (the objects themselves are
// shared, not copied). Indexes may be added while it runs: it builds from a copy of the
// index functions taken at the start, and indexes the new content by any function added
// meanwhile at the swap.
//
// An object an index function fails on does not stop the rest: its key keeps its
// previous state (or stays absent), and the error is a *ReplaceError naming each one.
func (ix *Indexer[T]) Replace(objs []T, resourceVersion string) error {
	ix.mu.RLock()
	funcs := maps.Clone(ix.funcs)
	ix.mu.RUnlock()
	// The new content is built outside the lock, so readers are not held up by a relist.
	next := staging(funcs)
	failed := next.storeAll(objs)
	// What depends on the live indexer (its index functions now, its failed keys' state)
	// is settled under the same lock as the swap, so that readers see it all at once.
	ix.mu.Lock()
	defer ix.mu.Unlock()
	next.addLateIndexes(ix.funcs, failed)
	next.keepFailedFrom(ix, failed)
	ix.items, ix.indices, ix.values = next.items, next.indices, next.values
	ix.noteRV(resourceVersion)
	ix.changes++
	return replaceError(failed)
}

// ReplaceWithin replaces the part of the content that scope selects, at resourceVersion:
// every stored object scope selects is removed, and objs (which scope selects) are
// stored, at once, so readers see the part as it was or as it is now, never a mix; what
// scope does not select is left as it is. A sharded informer takes the part its shard
// gained, or drops the part it lost, this way, without rebuilding the rest. scope must be
// pure: it is called under the indexer's lock, and more than once for an object.
//
// As for Replace, the new objects are indexed outside the lock, an object an index
// function fails on keeps its key's previous state (or stays absent) and is named in a
// *ReplaceError, the rest is stored, and a key listed twice keeps its last object.
func (ix *Indexer[T]) ReplaceWithin(scope func(T) bool, objs []T, resourceVersion string) error {
	ix.mu.RLock()
	funcs := maps.Clone(ix.funcs)
	changes := ix.changes
	inScope := ix.keysWhere(scope)
	ix.mu.RUnlock()
	staged, failed := stageEach(funcs, objs)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.changes != changes {
		inScope = ix.keysWhere(scope) // the content moved meanwhile
	}
	for name, f := range ix.funcs {
		if _, built := funcs[name]; built {
			continue
		}
		// Added while the objects were being indexed.
		for key, st := range staged {
			vals, err := f(st.obj)
			if err != nil {
				delete(staged, key)
				failed[key] = &IndexError{Index: name, Key: key, Err: err}
				continue
			}
			st.values = append(st.values, indexValues{name, vals})
			staged[key] = st
		}
	}
	for _, key := range inScope {
		_, listed := staged[key]
		if _, bad := failed[key]; !listed && !bad {
			ix.unindex(key)
			ix.items.delete(key)
		}
	}
	for key, st := range staged {
		ix.unindex(key)
		ix.items.put(st.obj)
		for _, v := range st.values {
			ix.addValues(v.index, key, v.values)
		}
	}
	ix.noteRV(resourceVersion)
	ix.changes++
	return replaceError(failed)
}

// keysWhere returns the keys of the stored objects that scope selects. ix.mu is held.
func (ix *Indexer[T]) keysWhere(scope func(T) bool) []string {
	var keys []string
	for key, obj := range ix.items.all() {
		if scope(obj) {
			keys = append(keys, key)
		}
	}
	return keys
}

// stagedObject is an object on its way into the indexer, with its index values.
type stagedObject[T any] struct {
	obj    T
	values []indexValues
}

// stageEach computes every object's values under funcs, the last object of each key: by
// key, those that every function took, and the failures. It takes no lock.
func stageEach[T object.Object](funcs map[string]IndexFunc[T], objs []T) (map[string]stagedObject[T], map[string]*IndexError) {
	staged := make(map[string]stagedObject[T], len(objs))
	failed := map[string]*IndexError{}
	probe := &Indexer[T]{funcs: funcs}
	for _, obj := range objs {
		key := object.Key(obj)
		delete(staged, key)
		delete(failed, key)
		values, err := probe.stage(make([]indexValues, 0, len(funcs)), key, obj)
		if err != nil {
			failed[key] = err.(*IndexError)
			continue
		}
		staged[key] = stagedObject[T]{obj: obj, values: values}
	}
	return staged, failed
}

// staging returns an empty indexer with the indexes of funcs, in which Replace builds
// the new content before the swap (storeAll makes its maps at their sizes).
func staging[T object.Object](funcs map[string]IndexFunc[T]) *Indexer[T] {
	next := &Indexer[T]{items: newStore[T](), funcs: funcs,
		indices: map[string]map[string]map[string]struct{}{}, values: map[string]map[string][]string{}}
	for name := range funcs {
		next.addIndex(name)
	}
	return next
}

// storeAll stores objs in a staging indexer, each all or nothing, and returns the
// failures by key. It takes no lock: no reader sees a staging indexer.
func (ix *Indexer[T]) storeAll(objs []T) map[string]*IndexError {
	failed := map[string]*IndexError{}
	if len(objs) > 1024 {
		ix.items.sizes = map[string]int{}
		for _, obj := range objs {
			ns, _ := place(obj)
			ix.items.sizes[ns]++
		}
		defer func() { ix.items.sizes = nil }()
	}
	if len(ix.funcs) == 1 && ix.funcs[NamespaceIndex] != nil {
		// The namespace index alone, which the store is: nothing to compute, nothing
		// can fail, and no key to make (a key listed twice keeps its last object).
		for _, obj := range objs {
			ix.items.put(obj)
		}
		return failed
	}
	buf := make([]indexValues, 0, len(ix.funcs))
	for _, obj := range objs {
		key := object.Key(obj)
		if ix.items.has(obj) {
			// A key listed twice keeps its last object, as the store does; the index
			// entries of the earlier one must go with it.
			ix.unindex(key)
		}
		delete(failed, key)
		staged, err := ix.stage(buf[:0], key, obj)
		if err != nil {
			ix.items.delete(key)
			failed[key] = err.(*IndexError)
			continue
		}
		ix.items.put(obj)
		for _, s := range staged {
			ix.addValues(s.index, key, s.values)
		}
	}
	return failed
}

// addLateIndexes adds to a staging indexer the indexes of live it was not built with:
// those added while Replace built it. An object one of them fails on is dropped, its
// failure added to failed.
func (ix *Indexer[T]) addLateIndexes(live map[string]IndexFunc[T], failed map[string]*IndexError) {
	for name, f := range live {
		if _, built := ix.funcs[name]; built {
			continue
		}
		ix.funcs[name] = f
		ix.addIndex(name)
		for key, obj := range ix.items.all() {
			if err := ix.indexOne(name, key, obj); err != nil {
				ix.unindex(key)
				ix.items.delete(key)
				failed[key] = err
			}
		}
	}
}

// keepFailedFrom gives a staging indexer's failed keys their state in old, the indexer
// it replaces. Failed keys keep what the store had: the object and its entries, under
// every index (or stay absent).
func (ix *Indexer[T]) keepFailedFrom(old *Indexer[T], failed map[string]*IndexError) {
	for key := range failed {
		if obj, ok := old.items.get(key); ok {
			ix.items.put(obj)
			for name := range ix.funcs {
				ix.addValues(name, key, old.storedValues(name, key))
			}
		}
	}
}

// replaceError is the *ReplaceError of failed, sorted by key, or nil when none failed.
func replaceError(failed map[string]*IndexError) error {
	if len(failed) == 0 {
		return nil
	}
	rerr := &ReplaceError{}
	for _, key := range slices.Sorted(maps.Keys(failed)) {
		rerr.Failed = append(rerr.Failed, failed[key])
	}
	return rerr
}

func (ix *Indexer[T]) addIndex(name string) {
	if name == NamespaceIndex {
		return // the store is that index
	}
	ix.indices[name] = map[string]map[string]struct{}{}
	ix.values[name] = map[string][]string{}
}

func (ix *Indexer[T]) indexOne(name, key string, obj T) *IndexError {
	if name == NamespaceIndex {
		return nil
	}
	vals, err := ix.funcs[name](obj)
	if err != nil {
		return &IndexError{Index: name, Key: key, Err: err}
	}
	ix.addValues(name, key, vals)
	return nil
}

func (ix *Indexer[T]) addValues(name, key string, vals []string) {
	if len(vals) == 0 || name == NamespaceIndex {
		return
	}
	ix.values[name][key] = vals
	idx := ix.indices[name]
	for _, v := range vals {
		set := idx[v]
		if set == nil {
			set = map[string]struct{}{}
			idx[v] = set
		}
		set[key] = struct{}{}
	}
}

// storedValues returns the values key was indexed under in index name.
func (ix *Indexer[T]) storedValues(name, key string) []string {
	return ix.values[name][key]
}

// unindex removes key from every index, dropping sets that become empty. It is called
// before the key's object is replaced or deleted.
func (ix *Indexer[T]) unindex(key string) {
	for name, byKey := range ix.values {
		idx := ix.indices[name]
		for _, v := range byKey[key] {
			if set := idx[v]; set != nil {
				delete(set, key)
				if len(set) == 0 {
					delete(idx, v)
				}
			}
		}
		delete(byKey, key)
	}
}

// Get returns the object stored under key.
func (ix *Indexer[T]) Get(key string) (T, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.items.get(key)
}

// List returns every object, in no particular order.
func (ix *Indexer[T]) List() []T {
	objs, _ := ix.Snapshot()
	return objs
}

// Snapshot returns every object and LastStoreSyncResourceVersion, read at once: the
// objects are the server's state at that resourceVersion (for the selection the cache
// was listed with), which a list at exactly that version can be compared with.
func (ix *Indexer[T]) Snapshot() ([]T, string) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	out := make([]T, 0, ix.items.len())
	for obj := range ix.items.objects() {
		out = append(out, obj)
	}
	return out, ix.rv
}

// ListKeys returns every key, sorted.
func (ix *Indexer[T]) ListKeys() []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	keys := make([]string, 0, ix.items.len())
	for k := range ix.items.all() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Len returns the number of objects.
func (ix *Indexer[T]) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.items.len()
}

// ByIndex returns the objects whose index `name` has value.
func (ix *Indexer[T]) ByIndex(name, value string) ([]T, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if _, ok := ix.funcs[name]; !ok {
		return nil, fmt.Errorf("indexer: no index %q", name)
	}
	if name == NamespaceIndex {
		names := ix.items.byNamespace[value]
		out := make([]T, 0, len(names))
		for _, obj := range names {
			out = append(out, obj)
		}
		return out, nil
	}
	keys := ix.indices[name][value]
	out := make([]T, 0, len(keys))
	for k := range keys {
		obj, _ := ix.items.get(k)
		out = append(out, obj)
	}
	return out, nil
}

// IndexKeys returns the keys whose index `name` has value, sorted.
func (ix *Indexer[T]) IndexKeys(name, value string) ([]string, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if _, ok := ix.funcs[name]; !ok {
		return nil, fmt.Errorf("indexer: no index %q", name)
	}
	var keys []string
	if name == NamespaceIndex {
		names := ix.items.byNamespace[value]
		keys = make([]string, 0, len(names))
		for n := range names {
			keys = append(keys, object.KeyFor(value, n))
		}
	} else {
		set := ix.indices[name][value]
		keys = make([]string, 0, len(set))
		for k := range set {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

// ListIndexFuncValues returns the values index `name` currently holds, sorted.
func (ix *Indexer[T]) ListIndexFuncValues(name string) []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var vals []string
	if name == NamespaceIndex && ix.funcs[name] != nil {
		vals = slices.Collect(maps.Keys(ix.items.byNamespace))
	} else {
		vals = slices.Collect(maps.Keys(ix.indices[name]))
	}
	slices.Sort(vals)
	return vals
}
