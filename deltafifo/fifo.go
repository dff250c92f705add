package deltafifo

import (
	"context"
	"errors"
	"sync"

	"github.com/kinformer/kinformer/object"
)

// DeltaType says what happened to an object.
type DeltaType string

// The delta types.
const (
	Added    DeltaType = "Added"
	Updated  DeltaType = "Updated"
	Deleted  DeltaType = "Deleted"
	Replaced DeltaType = "Replaced" // an object seen in a relist
	Sync     DeltaType = "Sync"     // a resync: nothing changed, handlers get it again
)

// Delta is one change to one object. A Deleted delta with FinalStateUnknown carries the
// last state the cache knew: the object vanished during a relist and its real final
// state was never seen (client-go's DeletedFinalStateUnknown tombstone).
type Delta[T any] struct {
	Type              DeltaType
	Key               string
	Object            T
	FinalStateUnknown bool
}

// Item is one entry of the FIFO: a single delta, a whole relist (or the relist of a
// part), a resync marker or a bookmark.
type Item[T any] struct {
	Delta Delta[T]
	// Replace is set for a relist: every listed object, to be applied at once.
	Replace *Replace[T]
	// Resync is set for a resync marker.
	Resync bool
	// Bookmark is set for a watch bookmark: the server's state has reached this
	// resourceVersion with no change to the resource beyond the items queued before it.
	// It travels through the queue, not around it, so the cache claims that version
	// only once it holds everything before it.
	Bookmark string
}

// Replace is a relist: the complete state of the resource at ResourceVersion, or, when
// Scope is set, of the part of it that Scope selects (see FIFO.ReplaceWithin).
type Replace[T any] struct {
	Objects         []T
	ResourceVersion string
	// Initial is true for the first population of the cache.
	Initial bool
	// Scope, when set, limits the relist to the objects it selects: those the cache holds
	// outside it stay as they are. Objects are all in it.
	Scope func(T) bool
}

// ErrClosed is returned by Pop once the FIFO is closed.
var ErrClosed = errors.New("deltafifo: closed")

// FIFO is the queue between the reflector and the informer's processing loop.
//
// Order: items come out in the order they went in, across keys. A relist is one item
// that the consumer applies atomically, at its place in the stream. So the cache moves
// through states the server really had, one event at a time, and a handler that reacts
// to object B after object A's change sees A's change already in the cache. (The classic
// DeltaFIFO queues keys and pops all of a key's deltas at once, which reorders events
// across keys; client-go 1.33 moved to an in-order FIFO for this reason.)
//
// Dedup: a Deleted delta for a key whose newest pending delta is already Deleted, with
// no relist queued since, is dropped (keeping the one that knows the final state).
type FIFO[T object.Object] struct {
	mu      sync.Mutex
	cond    *sync.Cond
	items   []*Item[T]
	head    int
	last    map[string]*Item[T] // newest pending single delta per key
	closed  bool
	popping sync.Mutex // one consumer at a time
	// wakeCtx is the context whose end wakes a waiting Pop, and wakeStop unregisters
	// that (see wakeOnDone); both guarded by popping.
	wakeCtx  context.Context
	wakeStop func() bool
	batch    []*Item[T] // PopBatch's slice, reused; guarded by popping

	synced    bool
	populated bool // a Replace (or any delta) was ever queued
	// holding defers the consumer's wake-up (see Hold); held says one is owed.
	holding, held bool
}

// New returns an empty FIFO.
func New[T object.Object]() *FIFO[T] {
	f := &FIFO[T]{last: map[string]*Item[T]{}}
	f.cond = sync.NewCond(&f.mu)
	return f
}

func (f *FIFO[T]) push(it *Item[T]) {
	f.items = append(f.items, it)
	if f.holding {
		f.held = true
		return
	}
	f.cond.Signal()
}

// Hold defers waking the consumer: items queued from now on are handed over together at
// Release. A producer that has several items in hand (the watch events of one read)
// holds around them, so a consumer that was waiting wakes once for all of them, not once
// each; a consumer that is busy takes them as they come either way.
func (f *FIFO[T]) Hold() {
	f.mu.Lock()
	f.holding = true
	f.mu.Unlock()
}

// Release ends Hold, waking the consumer if anything was queued meanwhile.
func (f *FIFO[T]) Release() {
	f.mu.Lock()
	f.holding = false
	if f.held {
		f.held = false
		f.cond.Signal()
	}
	f.mu.Unlock()
}

func (f *FIFO[T]) addDelta(t DeltaType, obj T) {
	key := object.Key(obj)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	if t == Deleted {
		if prev := f.last[key]; prev != nil && prev.Delta.Type == Deleted {
			return // a trailing duplicate of a delete still queued
		}
	}
	it := &Item[T]{Delta: Delta[T]{Type: t, Key: key, Object: obj}}
	f.last[key] = it
	f.populated = true
	f.push(it)
}

// Add queues an Added delta.
func (f *FIFO[T]) Add(obj T) { f.addDelta(Added, obj) }

// Update queues an Updated delta.
func (f *FIFO[T]) Update(obj T) { f.addDelta(Updated, obj) }

// Delete queues a Deleted delta carrying the object's final state.
func (f *FIFO[T]) Delete(obj T) { f.addDelta(Deleted, obj) }

// Replace queues a relist. The first one is the initial population: HasSynced turns true
// once it has been processed.
func (f *FIFO[T]) Replace(objs []T, resourceVersion string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	initial := !f.populated
	f.populated = true
	// The relist is now every key's newest pending news: a Delete after it must not be
	// deduplicated against one before it, or an object the relist brings back and the
	// watch then deletes would stay in the cache.
	clear(f.last)
	f.push(&Item[T]{Replace: &Replace[T]{Objects: objs, ResourceVersion: resourceVersion, Initial: initial}})
}

// ReplaceWithin queues the relist of a part of the resource, the objects scope selects:
// objs (all in scope) are that part's complete state at resourceVersion. It is one item,
// applied atomically by the consumer like a relist, which turns it into Replaced deltas
// and tombstones for the cached objects in scope that objs lack (ReplaceDeltas), and
// leaves the rest of the cache alone. An empty objs drops the part. A sharded reflector
// hands the part its shard gained, or lost, this way. It is never the initial
// population: HasSynced waits for a Replace.
func (f *FIFO[T]) ReplaceWithin(scope func(T) bool, objs []T, resourceVersion string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	// For the keys in scope, the relist is now the newest pending news (see Replace);
	// the others' pending deltas are untouched by it, and their dedup stands.
	for key, it := range f.last {
		if scope(it.Delta.Object) {
			delete(f.last, key)
		}
	}
	for _, obj := range objs {
		delete(f.last, object.Key(obj))
	}
	f.push(&Item[T]{Replace: &Replace[T]{Objects: objs, ResourceVersion: resourceVersion, Scope: scope}})
}

// Bookmark queues a bookmark at resourceVersion. A bookmark right behind another one
// still queued replaces it: only the newest version matters.
func (f *FIFO[T]) Bookmark(resourceVersion string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || resourceVersion == "" {
		return
	}
	if n := len(f.items); n > f.head && f.items[n-1].Bookmark != "" {
		f.items[n-1].Bookmark = resourceVersion
		return
	}
	f.push(&Item[T]{Bookmark: resourceVersion})
}

// Resync queues a resync marker, ordered with the events around it.
func (f *FIFO[T]) Resync() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.push(&Item[T]{Resync: true})
	}
}

// Pop waits for the next item and calls process with it. The item counts as popped
// (for HasSynced) once process returns. It returns ErrClosed after Close, or ctx's error.
func (f *FIFO[T]) Pop(ctx context.Context, process func(*Item[T]) error) error {
	return f.PopBatch(ctx, 1, func(items []*Item[T]) error { return process(items[0]) })
}

// PopBatch waits for at least one item, then calls process with the queued items, the
// oldest first, at most limit of them (at least 1): a consumer that fell behind catches
// up with one call, one lock, and its own per-batch costs paid once. The slice is only
// valid during the call. The items count as popped once process returns.
func (f *FIFO[T]) PopBatch(ctx context.Context, limit int, process func([]*Item[T]) error) error {
	f.popping.Lock()
	defer f.popping.Unlock()
	f.wakeOnDone(ctx)
	f.mu.Lock()
	for f.head == len(f.items) && !f.closed && ctx.Err() == nil {
		f.cond.Wait()
	}
	if f.closed {
		f.mu.Unlock()
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		f.mu.Unlock()
		return err
	}
	n := min(len(f.items)-f.head, max(limit, 1))
	batch := append(f.batch[:0], f.items[f.head:f.head+n]...)
	clear(f.items[f.head : f.head+n])
	f.head += n
	if f.head > 1024 && f.head*2 > len(f.items) {
		live := copy(f.items, f.items[f.head:])
		clear(f.items[live:])
		f.items, f.head = f.items[:live], 0
	}
	initial := false
	for _, it := range batch {
		if it.Replace == nil && !it.Resync && it.Bookmark == "" && f.last[it.Delta.Key] == it {
			delete(f.last, it.Delta.Key)
		}
		initial = initial || it.Replace != nil && it.Replace.Initial
	}
	f.mu.Unlock()

	err := process(batch)
	clear(batch)
	f.batch = batch // popping is held: the next PopBatch reuses the array
	if initial {
		f.mu.Lock()
		f.synced = true
		f.mu.Unlock()
	}
	return err
}

// wakeOnDone makes ctx's end wake a Pop waiting on it. A consumer pops with one context
// for its whole life, so the registration is kept from one Pop to the next (one per
// context, not one allocation per Pop) and replaced when another context comes. Called
// with f.popping held.
func (f *FIFO[T]) wakeOnDone(ctx context.Context) {
	if ctx == f.wakeCtx {
		return
	}
	if f.wakeStop != nil {
		f.wakeStop()
	}
	f.wakeCtx = ctx
	f.wakeStop = context.AfterFunc(ctx, func() {
		f.mu.Lock()
		f.cond.Broadcast()
		f.mu.Unlock()
	})
}

// HasSynced reports whether the initial population has been popped and processed.
func (f *FIFO[T]) HasSynced() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.synced
}

// Len returns the number of queued items.
func (f *FIFO[T]) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.items) - f.head
}

// Close wakes Pop and makes every later call a no-op.
func (f *FIFO[T]) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.cond.Broadcast()
}

// Known is what ReplaceDeltas needs of the cache: the objects it holds.
type Known[T any] interface {
	Get(key string) (T, bool)
	ListKeys() []string
}

// ReplaceDeltas turns a relist into per-object deltas against what the cache knows:
// Replaced for every listed object (replaced[i] is r.Objects[i]), and
// a FinalStateUnknown Deleted tombstone, carrying the last known state, for every cached
// object the relist no longer has (in its Scope, for the relist of a part). Because the
// consumer computes them when it pops the relist, "known" already includes every delta
// queued before it.
func ReplaceDeltas[T object.Object](r *Replace[T], known Known[T]) (replaced []Delta[T], tombstones []Delta[T]) {
	replaced = make([]Delta[T], len(r.Objects))
	for i, obj := range r.Objects {
		replaced[i] = Delta[T]{Type: Replaced, Key: object.Key(obj), Object: obj}
	}
	// A first list, into an empty cache, deletes nothing: no set of the listed keys,
	// which a million objects would make tens of megabytes of garbage.
	keys := known.ListKeys()
	if len(keys) == 0 {
		return replaced, nil
	}
	listed := make(map[string]struct{}, len(replaced))
	for _, d := range replaced {
		listed[d.Key] = struct{}{}
	}
	for _, key := range keys {
		if _, ok := listed[key]; ok {
			continue
		}
		if last, ok := known.Get(key); ok && (r.Scope == nil || r.Scope(last)) {
			tombstones = append(tombstones, Delta[T]{Type: Deleted, Key: key, Object: last, FinalStateUnknown: true})
		}
	}
	return replaced, tombstones
}
