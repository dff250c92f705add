package reflector

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/internal/notify"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
	"github.com/kinformer/kinformer/trace"
)

// ListerWatcher is the source of a reflector; *listwatch.Resource satisfies it. An
// embedder can feed a reflector (and so an informer) from any other source by
// implementing it: Watch returns any listwatch.Stream, whose contract is documented there.
// A List that hands opts.OnContinue its page's token before it returns (as
// *listwatch.Resource does) gets the call for the next page while it still runs (see
// pages.go): such a source, or a wrapper of one, must take concurrent calls, or clear
// OnContinue to be called one page at a time.
type ListerWatcher[T object.Object] interface {
	List(ctx context.Context, opts listwatch.ListOptions) (*object.List[T], error)
	Watch(ctx context.Context, opts listwatch.WatchOptions) (listwatch.Stream[T], error)
}

// Store receives what the reflector learns; *deltafifo.FIFO satisfies it.
type Store[T any] interface {
	Add(obj T)
	Update(obj T)
	Delete(obj T)
	Replace(objs []T, resourceVersion string)
}

// Reuser is an optional Store method. During a relist the reflector offers it each
// listed object; it returns the object it already holds in the same state (same key and
// resourceVersion), or obj. Unchanged objects are then not held twice while the rest
// of the list arrives, which keeps a relist's peak memory near the store's size.
type Reuser[T any] interface {
	Reuse(obj T) T
}

// ScopedReplacer is an optional Store method, which lets a shard change cost only the
// difference (see SetShard). ReplaceWithin is a Replace of one part of the store: every
// object it holds that scope selects is dropped, and objs (all of which scope selects)
// are stored instead, at once, as one step; objects outside scope are left as they are.
// scope is pure and cheap (a hash of the namespace or uid). Without the method, every
// shard change fetches the whole state again.
type ScopedReplacer[T any] interface {
	ReplaceWithin(scope func(T) bool, objs []T, resourceVersion string)
}

// Applier is an optional Store method, for a store that applies what it is handed later
// than the call returns (a queue in front of a cache, as the informer's). After a
// Replace or a ReplaceWithin, or a shard change that needed neither, the reflector may
// call AfterReplace with a function that the store must call once every Replace and
// ReplaceWithin it was handed before the call has been applied, or once the store knows
// it never will be (it has stopped): that is when the channel SetShard returned is
// closed. Without it, the channel is closed as the store call returns.
type Applier interface {
	AfterReplace(f func())
}

// Bookmarker is an optional Store method. The reflector hands it each watch bookmark's
// resourceVersion, so the store can tell how far it has followed the server even when
// nothing changed (see indexer.Indexer.LastStoreSyncResourceVersion).
type Bookmarker interface {
	Bookmark(resourceVersion string)
}

// Batcher is an optional Store method, for a store with a consumer on another goroutine
// (the informer's queue). The reflector holds the store while it hands it events that
// arrived together, and releases it after the last of them (or every maxHeld), so the
// consumer is woken once for them: see deltafifo.FIFO.Hold.
type Batcher interface {
	Hold()
	Release()
}

// Buffered is an optional Stream method: whether Next has an event ready that it would
// return without waiting for the connection (*listwatch.Watch has it).
type Buffered interface {
	Buffered() bool
}

// maxHeld is the most events the reflector hands a held store before releasing it, so a
// long burst does not leave the consumer idle while it is decoded.
const maxHeld = 64

// Metrics receives the reflector's counts; nil records nothing.
type Metrics interface {
	List()
	Watch()
	Relist()
	Event(t listwatch.EventType)
	ResourceVersion(rv string)
}

// ListedMetrics is an optional Metrics method: Listed hears how many objects each list
// page, or a streaming list, delivered (n > 0), before any is dropped as outside the
// shard. Compared with the objects that a shard change moved, it says what the change
// cost: a growth lists only the part gained from a server that filters, and a shrink
// lists nothing.
type ListedMetrics interface {
	Listed(n int)
}

// noMetrics is the Metrics of a reflector given none.
type noMetrics struct{}

func (noMetrics) List()                     {}
func (noMetrics) Watch()                    {}
func (noMetrics) Relist()                   {}
func (noMetrics) Event(listwatch.EventType) {}
func (noMetrics) ResourceVersion(string)    {}

// Options configure a reflector. Zero values pick the defaults in brackets.
type Options struct {
	// Name identifies the reflector in errors and metrics.
	Name string
	// LabelSelector and FieldSelector restrict what is listed and watched.
	LabelSelector, FieldSelector string
	// Shard restricts the store to one part of the hash space (see package shard). Every
	// request carries it as shardSelector: the first list and each of its pages, every
	// relist, watch, resumed watch and streaming list (the list of the part a SetShard
	// added carries that part). And the reflector drops, itself,
	// every listed object and watch event outside it before the store sees it, because a
	// server may not filter: kube-apiserver 1.36 without the ShardedListAndWatch feature
	// gate ignores the parameter without a word. Status.ShardFiltering says whether the
	// server filters (see ShardFiltering); the store holds exactly the shard either way.
	// The zero Selector filters nothing. New does not check it (informer.New does): one
	// that fails shard.Selector.Validate is refused by a server on every request.
	// SetShard changes it while the reflector runs.
	Shard shard.Selector
	// PageSize is the list page size [500].
	PageSize int64
	// WatchTimeoutMin/Max bound the random timeoutSeconds asked of each watch
	// [5 min, 10 min]; spreading them keeps many reflectors from re-watching together.
	WatchTimeoutMin, WatchTimeoutMax time.Duration
	// IdleMargin is added to the watch timeout to form the idle deadline after which a
	// silent stream is presumed dead [30 s]; bookmarks count as activity.
	IdleMargin time.Duration
	// Backoff is the wait after failures (see Backoff).
	Backoff Backoff
	// StreamingList fetches the initial state with a streaming list (sendInitialEvents),
	// falling back to list+watch for good when the server refuses it, sends anything but
	// ADDED before the initial-events-end bookmark (it ignored the parameter), or lets
	// InitialEventsTimeout [1 min] pass without that bookmark.
	StreamingList        bool
	InitialEventsTimeout time.Duration
	// ConsistentLists makes the first list ask for the newest state (resourceVersion "",
	// a consistent read, which kube-apiserver serves from etcd or from a watch cache it
	// has first brought up to etcd's revision) instead of any state (resourceVersion "0",
	// the watch cache as it is, which may lag behind writes already answered). A
	// streaming list always reads the newest state, and a relist after a 410 asks for at
	// least the newest resourceVersion the store holds, either way. Off by default: "0"
	// is what client-go asks for, and is cheaper. A process that takes over objects
	// another one was writing (a member of a sharded controller manager) sets it, so
	// that what it first sees includes the other's last writes.
	ConsistentLists bool
	// WebSocket carries watches over websockets.
	WebSocket bool
	Metrics   Metrics
	// Clock is the time the reflector reads, and hands to its watches [clock.Real].
	Clock clock.Clock
	// Logger hears what an operator needs and nothing per event: each relist and why,
	// the streaming-list fallback, each backoff with its error and wait, and watches that
	// broke. Lists and clean watch ends are logged at debug level. nil is silent.
	Logger *slog.Logger
	// Tracer follows sampled watch events (see package trace): the reflector hands it to
	// its watches and marks trace.Queued as it hands an event to the store. nil is off.
	Tracer trace.Tracer
	// MaxFrameSize bounds one object, in bytes, as a watch event or in a list page
	// [listwatch.DefaultMaxFrameSize]: it is what a broken or hostile server can make the
	// client hold beyond the cache. A larger object fails with an error wrapping
	// listwatch.ErrFrameTooLarge in Status, and the reflector relists (the event is lost,
	// a resumed watch would meet it again) until the object fits.
	MaxFrameSize int
	// Decode is how the ListerWatcher decodes every object it lists and watches
	// (listwatch.ListOptions.Decode). An informer whose transform is the default asks for
	// objects without metadata.managedFields, which the transform would strip anyway,
	// and with labels and annotations from its cache's own map table.
	Decode object.DecodeOptions
}

// State is where the reflector's loop is; the package doc's table says how it moves.
type State string

// The states a Status reports.
const (
	StateStarting      State = "Starting" // before Run
	StateListing       State = "Listing"
	StateListingAdded  State = "ListingAdded" // the part SetShard added, at the store's resourceVersion
	StateStreamingList State = "StreamingList"
	StateWatching      State = "Watching"
	StateBackingOff    State = "BackingOff"
	StateStopped       State = "Stopped" // Run has returned
)

// Status is a snapshot of the reflector.
type Status struct {
	State State
	// Listed is true once a list (or streaming list) has been handed to the store.
	Listed bool
	// LastSyncResourceVersion is the newest resourceVersion seen (the list of the whole
	// state, an event or a bookmark): where the watch resumes. The list of a part that
	// SetShard added does not move it, though that list is newer (see SetShard).
	LastSyncResourceVersion string
	// LastError is the most recent failure, cleared by the next successful list or event:
	// it says why a cache is not synced (403 on list, resource not found, ...).
	LastError error
	// StreamingFallback is set when the streaming list was given up for list+watch, for
	// the reason in StreamingFallbackReason (kept after LastError moves on).
	StreamingFallback       bool
	StreamingFallbackReason error
	// Relists counts the lists after the first one (a 410, a lost event); not those that
	// follow a SetShard (the list of the part it added, or of the whole new shard), which
	// are no failure.
	Relists int
	// Backoff is the wait under way while State is BackingOff.
	Backoff time.Duration
	// ShardFiltering says, when Options.Shard is set, whether the server filters by it or
	// the reflector alone does (see ShardFiltering); "" without a shard. SetShard sets it
	// back to ShardFilteringUnknown ("" for the zero Selector) until a request with the
	// new shard tells; a change that needs no list (the shard only shrank while the loop
	// watched) takes the answer the server gave about the shard before, as the same
	// server serves both.
	ShardFiltering ShardFiltering
	// ShardDropped counts the listed objects and watch events dropped as outside the
	// shard of the request that brought them: 0 while the server filters. (Events that a
	// watch opened before SetShard brings from the part the shard just lost are dropped
	// too, and not counted: the server did nothing wrong.) Like LastSyncResourceVersion,
	// its moves alone are no transition.
	ShardDropped int
}

// transition reports whether s differs from old in what a status subscriber is told
// about: everything but the resourceVersion and ShardDropped, which move with events. Errors count
// by what they say: comparing error values with == panics when an error's dynamic type
// is not comparable (a struct holding a slice), and a new error saying the same thing is
// not news.
func (s Status) transition(old Status) bool {
	return s.State != old.State || s.Listed != old.Listed || s.StreamingFallback != old.StreamingFallback ||
		s.Relists != old.Relists || s.Backoff != old.Backoff || s.ShardFiltering != old.ShardFiltering ||
		!sameError(s.LastError, old.LastError) || !sameError(s.StreamingFallbackReason, old.StreamingFallbackReason)
}

// sameError reports whether a and b say the same (both nil, or the same message).
func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Error() == b.Error()
}

// Reflector keeps a Store in step with the apiserver by list and watch.
type Reflector[T object.Object] struct {
	lw    ListerWatcher[T]
	store Store[T]
	opts  Options
	clock clock.Clock
	log   *slog.Logger

	// shard is the current shard (Options.Shard, then each SetShard's). It is replaced
	// only with storeMu and mu held, so it may be read with either held, or with neither
	// for a snapshot to make a request with.
	shard atomic.Pointer[shardState]
	// storeMu is held by the loop from deciding that an object is in the current shard
	// until the store has it, and by SetShard while it changes the shard: so once
	// SetShard returns, nothing outside the new shard reaches the store.
	storeMu sync.Mutex

	mu          sync.Mutex
	status      Status
	subscribers notify.List[Status]
	// storedGen is the generation (shardState.gen) of the shard whose whole state the
	// store was last handed (by a list, or by the changes of a SetShard), -1 before the
	// first: the store holds that shard, and only a watch of the same generation may
	// follow it.
	storedGen int64
	// appliedGen is the generation of the last whole state the store has applied (which
	// an Applier does after the Replace), -1 before the first.
	appliedGen int64
	// waiters are the channels of SetShard waiting for a whole state of their generation
	// (or a later one) to be applied.
	waiters []shardWaiter
	// stream is the stream open in the loop (a streaming list's or a watch's), which
	// SetShard closes; nil between streams.
	stream listwatch.Stream[T]

	// held is the part of the hash space whose objects the store holds, all of them, at
	// LastSyncResourceVersion (its parts in fresh, at their list's): the shard of
	// storedGen, less what a SetShard took away since. Only the loop reads and writes it,
	// with storeMu held to write.
	held span
	// fresh are the parts that SetShard added whose list is newer than the watch's
	// position (see freshPart). Only the loop reads and writes it.
	fresh []freshPart[T]
}

// New returns a reflector from lw into store.
func New[T object.Object](lw ListerWatcher[T], store Store[T], opts Options) *Reflector[T] {
	if opts.PageSize == 0 {
		opts.PageSize = 500
	}
	if opts.WatchTimeoutMin == 0 {
		opts.WatchTimeoutMin = 5 * time.Minute
	}
	if opts.WatchTimeoutMax < opts.WatchTimeoutMin {
		opts.WatchTimeoutMax = 2 * opts.WatchTimeoutMin
	}
	if opts.IdleMargin == 0 {
		opts.IdleMargin = 30 * time.Second
	}
	if opts.InitialEventsTimeout == 0 {
		opts.InitialEventsTimeout = time.Minute
	}
	opts.Backoff = opts.Backoff.withDefaults()
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Metrics == nil {
		opts.Metrics = noMetrics{}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	st := Status{State: StateStarting}
	if !opts.Shard.IsZero() {
		st.ShardFiltering = ShardFilteringUnknown
	}
	r := &Reflector[T]{lw: lw, store: store, opts: opts, clock: opts.Clock,
		log: log.With("reflector", opts.Name), status: st, storedGen: -1, appliedGen: -1}
	r.shard.Store(newShardState(opts.Shard, 0))
	return r
}

// OnStatus calls f with the new status on every transition: a change of State, Listed,
// LastError, the streaming fallback, Relists, Backoff or ShardFiltering (not of the
// resourceVersion or ShardDropped alone, which move with events). It may be called at any time, from any
// goroutine; f runs on the reflector's goroutine (or on SetShard's caller, for the
// ShardFiltering that SetShard resets), so it must be quick. The returned function
// unregisters f.
func (r *Reflector[T]) OnStatus(f func(Status)) (remove func()) { return r.subscribers.Add(f) }

// Status returns the current status.
func (r *Reflector[T]) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

// LastSyncResourceVersion returns the newest resourceVersion the reflector has seen.
func (r *Reflector[T]) LastSyncResourceVersion() string { return r.Status().LastSyncResourceVersion }

// Shard is the reflector's current shard (Options.Shard, or the last SetShard's): what
// its requests ask for and its filter lets through from the moment SetShard returned.
// The zero Selector is no shard.
func (r *Reflector[T]) Shard() shard.Selector { return r.shard.Load().sel }

func (r *Reflector[T]) update(f func(*Status)) {
	r.mu.Lock()
	old := r.status
	f(&r.status)
	s := r.status
	r.mu.Unlock()
	if s.transition(old) {
		r.subscribers.Notify(s)
	}
}

func (r *Reflector[T]) setState(s State) { r.update(func(st *Status) { st.State = s }) }

func (r *Reflector[T]) fail(err error) {
	r.update(func(st *Status) { st.LastError = fmt.Errorf("%s: %w", r.opts.Name, err) })
}
