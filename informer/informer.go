package informer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/deltafifo"
	"github.com/kinformer/kinformer/indexer"
	"github.com/kinformer/kinformer/internal/notify"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
	"github.com/kinformer/kinformer/shard"
	"github.com/kinformer/kinformer/trace"
)

// Options configure an informer.
type Options[T object.Object] struct {
	// Name identifies the informer in errors and metrics (e.g. "pods").
	Name string
	// Reflector configures listing and watching.
	Reflector reflector.Options
	// Shard keeps the informer to one part of the hash space (see package shard): only
	// the objects it selects are listed, watched and cached, which is how several
	// processes share a resource too large for one. The server filters when it has the
	// ShardedListAndWatch feature gate (alpha, off by default in kube-apiserver 1.36);
	// without it the informer filters by itself by the same hash, so its cache still
	// holds exactly the shard, but every object is still sent and decoded. It says so
	// once in its log (a warning), in Status().ShardFiltering (reflector.ShardFilteringClient)
	// and in kinformer_informer_shard_filtered_on_client. Reflector.Shard, when set, takes
	// its place. New refuses a shard that fails shard.Selector.Validate; the zero Selector
	// is no shard.
	Shard shard.Selector
	// ConsistentLists makes the informer's first list read the newest state rather than
	// the apiserver's watch cache as it is (see reflector.Options.ConsistentLists, which
	// it sets): for a process that takes over objects another one was writing, as a
	// member of a sharded controller manager does, and must see the other's last writes.
	// Off by default, as in client-go: a list from the watch cache is cheaper. The list
	// of a part that SetShard adds reads the newest state either way.
	ConsistentLists bool
	// Transform changes each object before it is stored. The default, StripManagedFields,
	// drops metadata.managedFields, which no controller reads and which is often the
	// largest part of an object; with it the reflector also asks for objects decoded
	// without them, so they are never built, and with labels and annotations from the
	// informer's own map table (object.MapTable: equal maps are one map, which is sound
	// because the cache's objects are read-only and this transform leaves the maps
	// alone). Your own transform gets objects with maps of their own, which it may
	// change; what it returns is then shared through the same table. NoTransform keeps
	// objects as received.
	Transform func(T) T
	// Indexers are added before the informer starts (more can be added later).
	Indexers map[string]indexer.IndexFunc[T]
	// Metrics exports the informer (see NewMetrics); nil exports nothing.
	Metrics *Metrics
	// Clock is the time the informer reads (resync, metrics), and its reflector's unless
	// Reflector.Clock is set [clock.Real].
	Clock clock.Clock
	// Logger hears what an operator needs: the reflector's relists, fallbacks, backoffs
	// and broken watches (unless Reflector.Logger is set), and each handler buffer that
	// starts coalescing and catches up again. Nothing per event. nil is silent.
	Logger *slog.Logger
	// Tracer follows sampled watch events (see package trace) through the reflector,
	// which it is handed to, and marks trace.Stored once an event is in the cache. A
	// handler marks trace.Delivered when its HandlerOptions.Tracer is set. nil is off.
	Tracer trace.Tracer
	// MutationDetector finds code that changes cached objects in place (see
	// MutationDetector). Off unless enabled here or by the environment.
	MutationDetector MutationDetector
}

// StripManagedFields is the default transform: it drops metadata.managedFields, a JSON
// member or, for an object read in protobuf, ObjectMeta's field 17.
func StripManagedFields[T object.Object](obj T) T {
	obj.Meta().Unknown.Delete("managedFields")
	obj.Meta().Unknown.DeleteProtobufField(object.ManagedFieldsNumber)
	return obj
}

// NoTransform keeps objects as received.
func NoTransform[T object.Object](obj T) T { return obj }

// HandlerOptions configure one handler.
type HandlerOptions struct {
	// Name labels the handler's metrics.
	Name string
	// BufferSize bounds the notifications waiting for the handler [1024]; beyond it they
	// are coalesced per object (see the package doc).
	BufferSize int
	// ResyncPeriod, when set, re-delivers every cached object to this handler as an
	// update (old == new) that often, without contacting the server.
	ResyncPeriod time.Duration
	// Tracer marks trace.Delivered as each notification leaves the buffer, just before
	// the handler is called (usually the informer's Options.Tracer). nil is off.
	Tracer trace.Tracer
}

// Informer is a shared informer: one reflector, one queue and one cache per resource,
// fanned out to any number of handlers.
type Informer[T object.Object] struct {
	name      string
	fifo      *deltafifo.FIFO[T]
	cache     *indexer.Indexer[T]
	reflector *reflector.Reflector[T]
	transform func(T) T
	clock     clock.Clock
	epoch     time.Time // of the notifications' stamps
	metrics   *informerMetrics
	tracer    trace.Tracer
	log       *slog.Logger
	statusFns notify.List[SyncStatus]
	// maps shares equal label and annotation maps between the cache's objects: the
	// decoder's table with the default transform, or the one process shares a custom
	// transform's results through (customTransform).
	maps            *object.MapTable
	customTransform bool
	failures        failures           // objects the cache could not take, handlers that panicked
	mutations       *mutationDetector  // nil unless enabled
	replaces        replaceTracker     // the reflector's AfterReplace functions (SetShard's channels)
	encoding        listwatch.Encoding // what the ListerWatcher's reads ask for, if it says (encoder)

	// mu serialises the processing of one item with handler registration, so a late
	// handler's replay and the events after it line up exactly.
	mu         sync.Mutex
	listeners  []*listener[T]
	notes      []note[T] // notifications not yet handed to the listeners (see notify)
	running    bool
	stopping   bool
	wg         sync.WaitGroup // listener goroutines
	synced     chan struct{}  // closed once the initial list has been processed
	resyncKick chan struct{}
}

// New builds an informer over lw. Run starts it. It fails when an option is wrong: an
// index named like one the cache has (indexer.NamespaceIndex is built in), an invalid
// shard.
func New[T object.Object](lw reflector.ListerWatcher[T], opts Options[T]) (*Informer[T], error) {
	if err := object.CheckProjection[T](); err != nil {
		return nil, fmt.Errorf("informer: %w", err)
	}
	maps := object.NewMapTable()
	custom := opts.Transform != nil
	if !custom {
		opts.Transform = StripManagedFields[T]
		opts.Reflector.Decode = object.DecodeOptions{DropManagedFields: true, Maps: maps}
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Reflector.Name == "" {
		opts.Reflector.Name = opts.Name
	}
	if opts.Reflector.Shard.IsZero() {
		opts.Reflector.Shard = opts.Shard
	}
	if opts.ConsistentLists {
		opts.Reflector.ConsistentLists = true
	}
	if err := opts.Reflector.Shard.Validate(); err != nil {
		// A server would refuse it on every request, and a cache that never syncs says
		// less than an error here.
		return nil, fmt.Errorf("informer %s: %w", opts.Name, err)
	}
	if opts.Reflector.Clock == nil {
		opts.Reflector.Clock = opts.Clock
	}
	if opts.Tracer != nil {
		opts.Reflector.Tracer = opts.Tracer
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Reflector.Logger == nil {
		opts.Reflector.Logger = opts.Logger
	}
	inf := &Informer[T]{name: opts.Name, fifo: deltafifo.New[T](), cache: indexer.New[T](),
		transform: opts.Transform, clock: opts.Clock, epoch: opts.Clock.Now(), tracer: opts.Tracer, synced: make(chan struct{}),
		resyncKick: make(chan struct{}, 1), log: opts.Logger.With("informer", opts.Name),
		maps: maps, customTransform: custom}
	if e, ok := lw.(encoder); ok {
		inf.encoding = e.Encoding()
	}
	if len(opts.Indexers) > 0 {
		if err := inf.cache.AddIndexers(opts.Indexers); err != nil {
			return nil, fmt.Errorf("informer %s: %w", opts.Name, err)
		}
	}
	if opts.Metrics != nil {
		inf.metrics = opts.Metrics.forInformer(opts.Name, inf)
		opts.Reflector.Metrics = inf.metrics
	}
	inf.mutations = newMutationDetector(opts.MutationDetector, opts.Clock, inf.log, inf.metrics, inf.mutationFound)
	inf.reflector = reflector.New[T](lw, relistStore[T]{inf.fifo, inf.cache, &inf.replaces}, opts.Reflector)
	inf.reflector.OnStatus(func(rs reflector.Status) {
		inf.statusFns.Notify(inf.status(rs)) // this transition, not a later one
	})
	return inf, nil
}

// The informer's parts, checked where they are put together.
var (
	_ reflector.Store[*object.Pod]          = relistStore[*object.Pod]{}
	_ reflector.Reuser[*object.Pod]         = relistStore[*object.Pod]{}
	_ reflector.Bookmarker                  = relistStore[*object.Pod]{}
	_ reflector.Applier                     = relistStore[*object.Pod]{}
	_ reflector.ScopedReplacer[*object.Pod] = relistStore[*object.Pod]{}
	_ reflector.ListedMetrics               = (*informerMetrics)(nil)
	_ reflector.ListerWatcher[*object.Pod]  = (*listwatch.Resource[*object.Pod])(nil)
	_ reflector.Metrics                     = (*informerMetrics)(nil)
	_ reflector.ShardMetrics                = (*informerMetrics)(nil)
	_ Syncer                                = (*Informer[*object.Pod])(nil)
	_ Syncer                                = (*Registration[*object.Pod])(nil)
	_ statuser                              = (*Informer[*object.Pod])(nil)
	_ encoder                               = (*listwatch.Resource[*object.Pod])(nil)
	_ deltafifo.Known[*object.Pod]          = (*indexer.Indexer[*object.Pod])(nil)
)

// relistStore is the reflector's view of the informer: the FIFO, plus the cache for
// reflector.Reuser, so a relisted object that has not changed is the cached one, and the
// replaceTracker for reflector.Applier, so SetShard's channel waits for the cache.
type relistStore[T object.Object] struct {
	*deltafifo.FIFO[T]
	cache    *indexer.Indexer[T]
	replaces *replaceTracker
}

// Replace queues a relist, counted so that AfterReplace knows when the cache has it.
func (s relistStore[T]) Replace(objs []T, resourceVersion string) {
	s.replaces.queued()
	s.FIFO.Replace(objs, resourceVersion)
}

// ReplaceWithin queues the relist of a part, counted as Replace is.
func (s relistStore[T]) ReplaceWithin(scope func(T) bool, objs []T, resourceVersion string) {
	s.replaces.queued()
	s.FIFO.ReplaceWithin(scope, objs, resourceVersion)
}

// AfterReplace runs f once the processing loop has applied every Replace and
// ReplaceWithin queued so far, or once the informer has stopped.
func (s relistStore[T]) AfterReplace(f func()) { s.replaces.after(f) }

// replaceTracker runs the functions handed to AfterReplace once the processing loop has
// applied the Replace they follow (or once the informer stops, which applies no more).
// The FIFO keeps Replaces in order, so counting them is enough.
type replaceTracker struct {
	mu      sync.Mutex
	queue   uint64 // Replaces handed to the FIFO
	applied uint64 // Replaces the cache has applied
	stopped bool
	waiting []afterReplace
}

// afterReplace is a function to run once n Replaces have been applied.
type afterReplace struct {
	n uint64
	f func()
}

// queued counts a Replace, before the FIFO has it: so applied never overtakes it.
func (t *replaceTracker) queued() {
	t.mu.Lock()
	t.queue++
	t.mu.Unlock()
}

func (t *replaceTracker) after(f func()) {
	t.mu.Lock()
	if t.stopped || t.applied >= t.queue {
		t.mu.Unlock()
		f()
		return
	}
	t.waiting = append(t.waiting, afterReplace{n: t.queue, f: f})
	t.mu.Unlock()
}

// done counts a Replace applied, and runs what waited for it.
func (t *replaceTracker) done() {
	t.mu.Lock()
	t.applied++
	var run []func()
	kept := t.waiting[:0]
	for _, w := range t.waiting {
		if w.n <= t.applied {
			run = append(run, w.f)
		} else {
			kept = append(kept, w)
		}
	}
	clear(t.waiting[len(kept):])
	t.waiting = kept
	t.mu.Unlock()
	for _, f := range run {
		f()
	}
}

// stop runs everything still waiting: no Replace will be applied any more.
func (t *replaceTracker) stop() {
	t.mu.Lock()
	t.stopped = true
	run := t.waiting
	t.waiting = nil
	t.mu.Unlock()
	for _, w := range run {
		w.f()
	}
}

// Reuse returns the cached object when it is obj's state (same resourceVersion). The
// cache may lag the FIFO, which does not matter: a resourceVersion names one state.
func (s relistStore[T]) Reuse(obj T) T {
	if s.cache.Len() == 0 {
		return obj // the first list: no key to make (a million of them, for nothing)
	}
	m := obj.Meta()
	if cached, ok := s.cache.Get(object.Key(obj)); ok && m.ResourceVersion != "" && cached.Meta().ResourceVersion == m.ResourceVersion {
		return cached
	}
	return obj
}

// Registration is a handler's handle: its own HasSynced, and Remove.
type Registration[T object.Object] struct {
	inf *Informer[T]
	l   *listener[T]
}

// HasSynced reports whether the handler has received every object of the initial list
// (or, for a handler added later, of the replay of the cache at that time).
func (r *Registration[T]) HasSynced() bool { return r.l.hasSynced() }

// Synced is closed when HasSynced becomes true.
func (r *Registration[T]) Synced() <-chan struct{} { return r.l.synced }

// Stopped is closed when the handler has been stopped by a panic (see HandlerPanic).
func (r *Registration[T]) Stopped() <-chan struct{} { return r.l.failed }

// Err returns the *HandlerPanic that stopped the handler, or nil while it runs.
func (r *Registration[T]) Err() error {
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	if r.l.err == nil {
		return nil // not a typed nil
	}
	return r.l.err
}

// Remove stops deliveries to the handler (a call in progress finishes).
func (r *Registration[T]) Remove() {
	r.inf.mu.Lock()
	defer r.inf.mu.Unlock()
	for i, l := range r.inf.listeners {
		if l == r.l {
			r.inf.listeners = append(r.inf.listeners[:i], r.inf.listeners[i+1:]...)
			break
		}
	}
	r.l.stop()
}

// AddEventHandler registers h. If the informer has already synced, h first receives the
// current cache as initial adds; either way it then receives every change after that.
func (inf *Informer[T]) AddEventHandler(h Handler[T], opts HandlerOptions) (*Registration[T], error) {
	if opts.BufferSize <= 0 {
		opts.BufferSize = 1024
	}
	inf.mu.Lock()
	defer inf.mu.Unlock()
	if inf.stopping {
		return nil, errors.New("informer: AddEventHandler after shutdown")
	}
	l := newListener(h, opts, inf.log, inf.handlerFailed)
	if opts.ResyncPeriod > 0 {
		l.nextResync = inf.clock.Now().Add(opts.ResyncPeriod)
		select {
		case inf.resyncKick <- struct{}{}:
		default:
		}
	}
	if inf.HasSynced() {
		at := inf.stampOf(inf.clock.Now())
		for _, obj := range inf.cache.List() {
			l.add(note[T]{kind: noteAdd, obj: obj, initial: true, at: at})
		}
		l.markSynced()
	}
	inf.listeners = append(inf.listeners, l)
	if inf.running {
		inf.startListener(l)
	}
	return &Registration[T]{inf: inf, l: l}, nil
}

func (inf *Informer[T]) startListener(l *listener[T]) {
	inf.wg.Add(1)
	go func() {
		defer inf.wg.Done()
		l.run()
	}()
}

// Run runs the informer until ctx ends, then stops every handler and returns once all
// its goroutines have exited. An informer runs once.
func (inf *Informer[T]) Run(ctx context.Context) {
	inf.mu.Lock()
	if inf.running || inf.stopping {
		inf.mu.Unlock()
		return
	}
	inf.running = true
	for _, l := range inf.listeners {
		inf.startListener(l)
	}
	inf.mu.Unlock()

	var loops sync.WaitGroup
	loops.Add(3)
	go func() { defer loops.Done(); inf.reflector.Run(ctx) }()
	go func() { defer loops.Done(); inf.processLoop(ctx) }()
	go func() { defer loops.Done(); inf.resyncLoop(ctx) }()
	if inf.mutations != nil {
		loops.Add(1)
		go func() { defer loops.Done(); inf.mutations.run(ctx) }()
	}
	<-ctx.Done()
	inf.fifo.Close()
	loops.Wait()
	inf.replaces.stop()

	inf.mu.Lock()
	inf.stopping = true
	for _, l := range inf.listeners {
		l.stop()
	}
	inf.mu.Unlock()
	inf.wg.Wait()
}

// processLoop applies the FIFO's items until it is closed. An item the cache cannot
// take does not stop it (see process): one bad object must not freeze the whole cache.
func (inf *Informer[T]) processLoop(ctx context.Context) {
	for {
		synced := inf.HasSynced()
		if err := inf.fifo.PopBatch(ctx, maxProcessBatch, inf.process); err != nil {
			return // closed, or ctx ended: process never fails
		}
		if !synced && inf.HasSynced() {
			// Told here, outside inf.mu, so a subscriber may call back into the informer.
			inf.statusFns.Notify(inf.Status())
		}
	}
}

// maxProcessBatch bounds the queue items applied under one hold of inf.mu: a handler
// registering meanwhile waits for at most that many.
const maxProcessBatch = 256

// process applies queue items to the cache and notifies the handlers. An object an
// index function fails on is left out (its key keeps its previous state, which handlers
// already know) and reported (see failures); the rest goes on. The items' notifications
// go to each handler together, at the end (see notify).
func (inf *Informer[T]) process(items []*deltafifo.Item[T]) error {
	changed, replaces := false, 0
	inf.mu.Lock()
	for _, it := range items {
		if inf.processLocked(it) {
			changed = true
		}
		if it.Replace != nil {
			replaces++
		}
	}
	inf.flushNotes()
	inf.mu.Unlock()
	for range replaces {
		inf.replaces.done()
	}
	if changed {
		inf.statusFns.Notify(inf.Status())
	}
	return nil
}

// processLocked is process under inf.mu; it reports whether the store failures changed.
func (inf *Informer[T]) processLocked(it *deltafifo.Item[T]) (failuresChanged bool) {
	now := inf.clock.Now()
	switch {
	case it.Replace != nil:
		return inf.processReplace(it.Replace, now)
	case it.Resync:
		inf.processResync(now)
		return false
	case it.Bookmark != "":
		inf.cache.Bookmark(it.Bookmark)
		return false
	}
	d := it.Delta
	switch d.Type {
	case deltafifo.Added, deltafifo.Updated:
		obj := inf.prepare(d.Object)
		old, existed := inf.cache.Get(d.Key)
		if err := inf.cache.Update(obj); err != nil {
			// The cache stays as it was, and so do the handlers' views; the cache has
			// still followed the server this far.
			inf.cache.Bookmark(obj.Meta().ResourceVersion)
			return inf.storeFailed(d.Key, obj, err)
		}
		inf.mutations.stored(d.Key, obj)
		inf.traceStored(obj)
		notes, n := changeNotes(old, existed, obj, false, inf.stampOf(now))
		for _, note := range notes[:n] {
			inf.notify(note)
		}
		return inf.storeRecovered(d.Key)
	case deltafifo.Deleted:
		obj := inf.transform(d.Object)
		if _, existed := inf.cache.Get(d.Key); !existed {
			// Never seen (e.g. created and deleted during a relist): nothing to undo, but
			// the cache has followed the server this far.
			inf.cache.Bookmark(d.Object.Meta().ResourceVersion)
			return inf.storeRecovered(d.Key)
		}
		inf.cache.Delete(d.Object)
		inf.mutations.removed(d.Key)
		inf.traceStored(obj)
		inf.notify(note[T]{kind: noteDelete, obj: obj, finalStateUnknown: d.FinalStateUnknown, at: inf.stampOf(now)})
		return inf.storeRecovered(d.Key)
	}
	return false
}

// prepare transforms an object on its way into the cache. The default transform's
// objects come from the decoder with shared maps already; a custom transform's are
// shared here, once it has had its way with them.
func (inf *Informer[T]) prepare(obj T) T {
	obj = inf.transform(obj)
	if inf.customTransform {
		m := obj.Meta()
		m.Labels, m.Annotations = inf.maps.Share(m.Labels), inf.maps.Share(m.Annotations)
	}
	return obj
}

// traceStored marks trace.Stored: the event is in the cache. The handlers are told after
// it, so no Delivered mark can come first.
func (inf *Informer[T]) traceStored(obj T) {
	if inf.tracer != nil {
		inf.tracer.Mark(trace.Stored, obj)
	}
}

// processReplace applies a relist atomically: the cache switches to the listed state in
// one step, then handlers hear what changed: adds (initial ones for the first list),
// updates for objects whose resourceVersion moved, and tombstones for objects gone.
// Objects the cache could not take keep their previous state and are not announced. The
// relist of a part (r.Scope: the part of a shard that SetShard added or took away) does
// the same within it, and leaves the rest of the cache alone.
func (inf *Informer[T]) processReplace(r *deltafifo.Replace[T], now time.Time) (failuresChanged bool) {
	at := inf.stampOf(now)
	var notes []note[T]
	var tombstones []deltafifo.Delta[T]
	if inf.cache.Len() == 0 {
		// A first list, into an empty cache: an add for each object, and nothing to
		// compare with, so no deltas and no keys (for a million objects, tens of
		// megabytes of garbage at the moment the heap is largest).
		notes = make([]note[T], 0, len(r.Objects))
		var none T
		for i, obj := range r.Objects {
			obj = inf.prepare(obj)
			r.Objects[i] = obj
			add, _ := changeNotes(none, false, obj, r.Initial, at)
			notes = append(notes, add[0])
		}
	} else {
		var replaced []deltafifo.Delta[T]
		replaced, tombstones = deltafifo.ReplaceDeltas[T](r, inf.cache)
		for i, d := range replaced { // replaced[i] is r.Objects[i]
			old, existed := inf.cache.Get(d.Key)
			if existed && old.Meta() == d.Object.Meta() {
				continue // reused by the reflector: the stored object, already transformed
			}
			obj := inf.prepare(d.Object)
			r.Objects[i] = obj
			if existed && old.Meta().ResourceVersion == obj.Meta().ResourceVersion {
				continue // unchanged: a relist is not news
			}
			change, n := changeNotes(old, existed, obj, r.Initial, at)
			notes = append(notes, change[:n]...)
		}
	}
	for _, d := range tombstones {
		notes = append(notes, note[T]{kind: noteDelete, obj: d.Object, finalStateUnknown: true, at: at})
	}
	var err error
	if r.Scope != nil {
		err = inf.cache.ReplaceWithin(r.Scope, r.Objects, r.ResourceVersion)
	} else {
		err = inf.cache.Replace(r.Objects, r.ResourceVersion)
	}
	failed := map[string]failure{}
	var rerr *indexer.ReplaceError
	if errors.As(err, &rerr) {
		for _, f := range rerr.Failed {
			failed[f.Key] = failure{err: f}
		}
		for _, obj := range r.Objects { // the last of a key is the one that failed
			if f, bad := failed[object.Key(obj)]; bad {
				f.obj = obj
				failed[object.Key(obj)] = f
			}
		}
	}
	kept := notes
	if len(failed) > 0 {
		kept = notes[:0]
		for _, n := range notes {
			if _, bad := failed[object.Key(n.obj)]; !bad {
				kept = append(kept, n)
			}
		}
		clear(notes[len(kept):]) // the objects refused are not held by what is left
	}
	// A relist's notifications go to the handlers as they are, after the batch's earlier
	// ones: not through inf.notes, which would hold a second copy of a large list's.
	inf.flushNotes()
	for i, l := range inf.listeners {
		if i == len(inf.listeners)-1 && len(kept) == len(notes) {
			// The others have copied it. (After refusals its array is larger than what
			// it holds, which a handler's buffer must not keep.)
			l.adoptAll(kept)
		} else {
			l.addAll(kept)
		}
	}
	failuresChanged = inf.replaceFailures(failed, r.Scope)
	if inf.mutations != nil {
		for _, d := range tombstones {
			inf.mutations.removed(d.Key)
		}
		for _, obj := range r.Objects {
			if key := object.Key(obj); failed[key].err == nil {
				inf.mutations.stored(key, obj)
			}
		}
	}
	if r.Initial {
		inf.flushNotes() // a handler's sync point is after the initial list's notifications
		for _, l := range inf.listeners {
			l.markSynced()
		}
		close(inf.synced)
	}
	return failuresChanged
}

// changeNotes says how handlers hear that a key now holds obj: an add if it held nothing,
// an update if it held an earlier state of the same object, and if it held another object
// (deleted and recreated under the same name while the informer was not watching, so
// only a relist saw it) a FinalStateUnknown delete of that one, then an add.
// (An array, not a slice: this runs for every event and must not allocate.)
func changeNotes[T object.Object](old T, existed bool, obj T, initial bool, at stamp) (notes [2]note[T], n int) {
	switch {
	case !existed:
		notes[0] = note[T]{kind: noteAdd, obj: obj, initial: initial, at: at}
		return notes, 1
	case !sameObject(old, obj):
		notes[0] = note[T]{kind: noteDelete, obj: old, finalStateUnknown: true, at: at}
		notes[1] = note[T]{kind: noteAdd, obj: obj, at: at}
		return notes, 2
	}
	notes[0] = note[T]{kind: noteUpdate, old: old, obj: obj, at: at}
	return notes, 1
}

// notify queues a notification for every handler. It is held in inf.notes until
// flushNotes, with inf.mu held all along: handed over per batch of queue items, each
// handler takes one lock and one wake-up for all of them, not one per event.
func (inf *Informer[T]) notify(n note[T]) {
	inf.notes = append(inf.notes, n)
	if len(inf.notes) >= maxHeldNotes {
		inf.flushNotes()
	}
}

// maxHeldNotes bounds the notifications held back in a batch: a handler gets the first
// of a long batch's events before the rest are applied, and a small handler buffer
// (HandlerOptions.BufferSize) is not overrun by one hand-off.
const maxHeldNotes = 64

// flushNotes hands the held notifications to the handlers. Called with inf.mu held.
func (inf *Informer[T]) flushNotes() {
	if len(inf.notes) == 0 {
		return
	}
	for _, l := range inf.listeners {
		l.addAll(inf.notes)
	}
	clear(inf.notes)
	inf.notes = inf.notes[:0]
	if cap(inf.notes) > maxKeptNotes {
		inf.notes = nil // an initial list's worth would stay allocated for nothing
	}
}

// maxKeptNotes is the most notifications whose room the informer keeps between batches:
// enough for a full batch of events.
const maxKeptNotes = 2 * maxProcessBatch

// resyncLoop queues a resync marker whenever a handler's resync period is due.
func (inf *Informer[T]) resyncLoop(ctx context.Context) {
	for {
		wait := time.Duration(-1)
		inf.mu.Lock()
		now := inf.clock.Now()
		for _, l := range inf.listeners {
			if l.resync > 0 {
				if d := l.nextResync.Sub(now); wait < 0 || d < wait {
					wait = max(d, 0)
				}
			}
		}
		inf.mu.Unlock()
		var fire <-chan struct{}
		var timer clock.Timer
		if wait >= 0 {
			ch := make(chan struct{})
			timer = inf.clock.AfterFunc(wait, func() { close(ch) })
			fire = ch
		}
		select {
		case <-ctx.Done():
		case <-inf.resyncKick:
		case <-fire:
			inf.fifo.Resync()
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// stampOf returns the stamp of a notification queued at now.
func (inf *Informer[T]) stampOf(now time.Time) stamp { return stamp(now.Sub(inf.epoch)) }

// processResync re-delivers the cache to each handler whose period is due.
func (inf *Informer[T]) processResync(now time.Time) {
	inf.flushNotes() // the batch's earlier events come first
	var due []*listener[T]
	for _, l := range inf.listeners {
		if l.resync > 0 && !now.Before(l.nextResync) {
			l.nextResync = now.Add(l.resync)
			due = append(due, l)
		}
	}
	if len(due) == 0 || !inf.HasSynced() {
		return
	}
	at := inf.stampOf(now)
	for _, obj := range inf.cache.List() {
		for _, l := range due {
			l.add(note[T]{kind: noteUpdate, old: obj, obj: obj, at: at})
		}
	}
}

// SetShard changes the informer's shard (Options.Shard, or Reflector.Shard) to sel,
// while it runs or before Run, from any goroutine: a sharded controller manager calls it
// when members join or leave and its part of the cluster grows or shrinks. It refuses a
// selector that fails shard.Selector.Validate; the zero Selector is no shard. See
// reflector.Reflector.SetShard for what the reflector does: in short, nothing outside
// sel enters the cache's queue once SetShard returns, and the change costs only the
// difference while the informer watches: the objects of the part the shard lost leave
// the cache at once, with no request, and the part it gained is listed alone, fresh (a
// consistent read, so with every write answered before the call), and merged into the
// cache in one step (each a relist of that part, applied atomically); the watch then
// resumes from the cache's resourceVersion, passing over the events of the part gained
// that the list already reflects, so no handler sees an object of it go back to an older
// state. Before the first list, or while one is under way, the informer lists the newest
// state with sel. Either way handlers hear what a relist shows: a delete
// (finalStateUnknown) for each object that left the shard, an add for each that joined
// it, nothing for those that stayed, which keep their cached objects.
// kinformer_informer_listed_objects_total says what the change listed.
// Status().ShardFiltering is reflector.ShardFilteringUnknown until the new shard's first
// list tells (a shrink, which lists nothing, keeps what the server was found to do).
//
// The channel is closed once the cache holds the whole new shard (or that of a shard set
// later): the moment to start acting on the part the shard gained, which the cache then
// holds as of a read made after the call (a previous owner's last writes there included).
// When the change cost the difference, the part the shard kept is as of the
// resourceVersion the cache was at; the watch brings what changed since. It is also closed
// when the informer stops, whichever comes first, so a waiter never hangs (an informer
// that has stopped answers a SetShard with a closed channel at once; Status().State is
// then reflector.StateStopped and the cache is frozen as it was); it is never closed for
// an informer that never runs. SetShard with the current shard changes nothing: its
// channel is that shard's, closed already unless the shard's first list is still to come.
func (inf *Informer[T]) SetShard(sel shard.Selector) (<-chan struct{}, error) {
	return inf.reflector.SetShard(sel)
}

// Cache returns the informer's indexer (read-only objects; see package indexer).
func (inf *Informer[T]) Cache() *indexer.Indexer[T] { return inf.cache }

// Lister returns a typed lister over the cache.
func (inf *Informer[T]) Lister() Lister[T] { return Lister[T]{cache: inf.cache} }

// Name returns the informer's name.
func (inf *Informer[T]) Name() string { return inf.name }
