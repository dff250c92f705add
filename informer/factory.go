package informer

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
	"github.com/kinformer/kinformer/shard"
	"github.com/kinformer/kinformer/trace"
)

// Factory shares one informer per resource, namespace, selectors and object type
// between all the code that asks for it, and starts and stops them together.
type Factory struct {
	client *listwatch.Client
	opts   FactoryOptions

	mu        sync.Mutex
	informers map[string]runnable
	order     []string
	running   map[string]*started // the started informers, by key
	ctx       context.Context     // set by Start
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	// shard is the factory's shard: FactoryOptions.Shard (or Reflector.Shard), then
	// SetShard's.
	shard shard.Selector
	// follows holds the keys of the informers that take the factory's shard (no
	// Selectors.Shard of their own), each with whether its resource is namespaced.
	follows map[string]bool
	// shut is closed by Shutdown: SetShard's waits end.
	shut     chan struct{}
	shutDown bool
}

// started is one running informer: Remove stops it alone.
type started struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// FactoryOptions apply to every informer of a factory.
type FactoryOptions struct {
	Reflector reflector.Options
	Metrics   *Metrics
	// Shard is the shard (see Options.Shard) of every informer of the factory that
	// Selectors.Shard gives none of its own; when it is zero, Reflector.Shard is. A
	// shard by namespace (shard.Namespace) is not applied to cluster-scoped resources:
	// their objects all have the namespace "", so they would all fall in the one shard
	// that owns Hash("") and every other process would see none. Each process caches
	// them whole instead, as a controller sharded by namespace needs its Nodes or
	// Namespaces. Factory.SetShard changes it.
	Shard shard.Selector
	// ConsistentLists is every informer's Options.ConsistentLists: their first lists read
	// the newest state, not the watch cache as it is. A sharded controller manager sets
	// it, so that a member that takes a part over sees the last writes there of the
	// member that had it.
	ConsistentLists bool
	// Tracer is every informer's Options.Tracer (see package trace); handlers that are to
	// mark trace.Delivered take it in their HandlerOptions.
	Tracer trace.Tracer
	// Logger is every informer's Options.Logger: relists and why, fallbacks, backoffs,
	// broken watches, coalescing handlers. nil is silent.
	Logger *slog.Logger
	// MutationDetector is every informer's (see MutationDetector).
	MutationDetector MutationDetector
}

type runnable interface {
	Run(ctx context.Context)
	Name() string
	SetShard(sel shard.Selector) (<-chan struct{}, error)
	Syncer
	statuser
	forgetMetrics()
}

// NewFactory returns a factory over client.
func NewFactory(client *listwatch.Client, opts FactoryOptions) *Factory {
	sh := opts.Shard
	if sh.IsZero() {
		sh = opts.Reflector.Shard
	}
	return &Factory{client: client, opts: opts, informers: map[string]runnable{}, running: map[string]*started{},
		shard: sh, follows: map[string]bool{}, shut: make(chan struct{})}
}

// Selectors restrict an informer.
type Selectors struct {
	Namespace     string // "" for all namespaces
	LabelSelector string
	FieldSelector string
	// MetadataOnly caches PartialObjectMetadata (names, labels, owners, ...) instead of
	// whole objects; use it with T = *object.Raw.
	MetadataOnly bool
	// Shard is this informer's own shard (see Options.Shard), in place of the factory's
	// (FactoryOptions.Shard); it applies to cluster-scoped resources too, and
	// Factory.SetShard leaves it alone. Informers of the same resource with different
	// shards are different informers, and an informer with a shard of its own is never
	// one that takes the factory's, even while the two are equal: the factory's may
	// change.
	Shard shard.Selector
}

// shardFor is the shard of the factory's informer for sel on a resource that is
// namespaced or not (see FactoryOptions.Shard); f.mu is held.
func (f *Factory) shardFor(sel Selectors, namespaced bool) shard.Selector {
	if !sel.Shard.IsZero() {
		return sel.Shard
	}
	if f.shard.Field == shard.Namespace && !namespaced {
		return shard.Selector{}
	}
	return f.shard
}

// For returns the factory's informer of T for resource (a name as kubectl takes it:
// "pods", "deployments.apps", a CRD's plural.group) and selectors, creating it on first
// use. An informer requested after Start is started at once.
//
// T is one of the model's types, *object.Raw for any resource, or a projection of the
// embedder's own that holds only the members they read (see object.CheckProjection).
//
// What it can tell is wrong fails here, not in the informer's retries: a selector that
// does not parse, a resource whose kind is not T's (object.KindOf: For[*object.Pod] of
// "configmaps" would cache ConfigMaps as empty Pods; *object.Raw takes any kind), and a
// projection that embeds ObjectMeta.
func For[T object.Object](ctx context.Context, f *Factory, resource string, sel Selectors) (*Informer[T], error) {
	var zero T
	if err := object.CheckProjection[T](); err != nil {
		return nil, fmt.Errorf("informer.For %s: %w", resource, err)
	}
	if _, err := object.ParseSelector(sel.LabelSelector); err != nil {
		return nil, fmt.Errorf("informer.For %s: %w", resource, err)
	}
	if err := object.CheckFieldSelector(sel.FieldSelector); err != nil {
		return nil, fmt.Errorf("informer.For %s: %w", resource, err)
	}
	info, err := f.client.Discover(ctx, resource)
	if err != nil {
		return nil, err
	}
	if want := object.KindOf[T](); want != "" && !sel.MetadataOnly && info.Kind != want {
		return nil, fmt.Errorf("informer.For[%T] of %q: the resource holds %s objects, not %s: use the type of its kind, or *object.Raw for any", zero, resource, info.Kind, want)
	}
	// The informers that take the factory's shard share one key whatever that shard is
	// now; one with its own shard is keyed by it.
	shardKey := "factory's shard"
	if !sel.Shard.IsZero() {
		shardKey = "own shard " + sel.Shard.Normalize().String()
	}
	key := fmt.Sprintf("%s|%s|%s|%s|%v|%T|%s", info.GroupVersionResource, sel.Namespace, sel.LabelSelector, sel.FieldSelector, sel.MetadataOnly, zero, shardKey)
	f.mu.Lock()
	defer f.mu.Unlock()
	sh := f.shardFor(sel, info.Namespaced)
	if existing, ok := f.informers[key]; ok {
		inf, ok := existing.(*Informer[T])
		if !ok {
			return nil, fmt.Errorf("informer %s exists with another object type", key)
		}
		return inf, nil
	}
	ropts := f.opts.Reflector
	ropts.LabelSelector, ropts.FieldSelector, ropts.Shard = sel.LabelSelector, sel.FieldSelector, sh
	name := info.Resource
	if info.Group != "" {
		name += "." + info.Group
	}
	if sel.Namespace != "" {
		name = sel.Namespace + "/" + name
	}
	if sel.LabelSelector != "" || sel.FieldSelector != "" {
		name += "{" + strings.Trim(sel.LabelSelector+";"+sel.FieldSelector, ";") + "}"
	}
	lw := listwatch.For[T](f.client, info, sel.Namespace)
	if sel.MetadataOnly {
		lw = lw.MetadataOnly()
		name += "(metadata)"
	}
	inf, err := New[T](lw, Options[T]{Name: name, Reflector: ropts, Metrics: f.opts.Metrics, Tracer: f.opts.Tracer,
		Logger: f.opts.Logger, MutationDetector: f.opts.MutationDetector, ConsistentLists: f.opts.ConsistentLists})
	if err != nil {
		return nil, err
	}
	f.informers[key] = inf
	f.order = append(f.order, key)
	if sel.Shard.IsZero() {
		f.follows[key] = info.Namespaced
	}
	if f.ctx != nil {
		f.start(key)
	}
	return inf, nil
}

// Remove takes inf out of the factory: it stops it, waits until its goroutines have
// exited, and unregisters its metrics. Its cache stays readable, frozen; a later For
// with the same arguments builds a new informer. It reports whether inf was the
// factory's.
func Remove[T object.Object](f *Factory, inf *Informer[T]) bool {
	f.mu.Lock()
	key := ""
	for k, existing := range f.informers {
		if existing == runnable(inf) {
			key = k
		}
	}
	if key == "" {
		f.mu.Unlock()
		return false
	}
	delete(f.informers, key)
	delete(f.follows, key)
	for i, k := range f.order {
		if k == key {
			f.order = append(f.order[:i], f.order[i+1:]...)
			break
		}
	}
	r := f.running[key]
	delete(f.running, key)
	f.mu.Unlock()
	if r != nil {
		r.cancel()
		<-r.done
	}
	inf.forgetMetrics()
	return true
}

// Start runs every informer not yet running, until Shutdown or ctx's end.
func (f *Factory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ctx != nil {
		return
	}
	f.ctx, f.cancel = context.WithCancel(ctx)
	for _, k := range f.order {
		f.start(k)
	}
}

// start runs the informer under key; f.mu is held.
func (f *Factory) start(key string) {
	ctx, cancel := context.WithCancel(f.ctx)
	r := &started{cancel: cancel, done: make(chan struct{})}
	f.running[key] = r
	inf := f.informers[key]
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer close(r.done)
		defer cancel()
		inf.Run(ctx)
	}()
}

// WaitForSync waits until every informer of the factory has synced (see WaitForSync),
// whose error names each informer not synced and why. Before Start it fails at once,
// saying so: no informer of a factory not started ever syncs.
func (f *Factory) WaitForSync(ctx context.Context) error {
	f.mu.Lock()
	syncers := make([]Syncer, 0, len(f.order))
	var names []string
	for _, k := range f.order {
		syncers = append(syncers, f.informers[k])
		names = append(names, f.informers[k].Name())
	}
	started := f.ctx != nil
	f.mu.Unlock()
	if !started && len(syncers) > 0 {
		// Nothing would ever sync: fail now rather than when ctx ends (if it does).
		return fmt.Errorf("informer factory: WaitForSync before Start: call Factory.Start(ctx) first (not started: %s)", strings.Join(names, ", "))
	}
	return WaitForSync(ctx, syncers...)
}

// SetShard changes the factory's shard (FactoryOptions.Shard) to sel, for the informers
// it has made and those it makes later, as a sharded controller manager does when
// members join or leave: each informer that takes the factory's shard gets sel, by the
// same rule as at its making (a shard by namespace leaves cluster-scoped resources
// whole), through Informer.SetShard; informers with a Selectors.Shard of their own keep
// it. It refuses a selector that fails shard.Selector.Validate, changing nothing.
//
// The channel is closed once every informer whose shard changed holds its new shard in
// its cache (or has stopped: see Informer.SetShard, which also says what the change
// costs), or once the factory is shut down; at once when no informer's shard changed.
// Informers not started yet apply it with their first list.
func (f *Factory) SetShard(sel shard.Selector) (<-chan struct{}, error) {
	if err := sel.Validate(); err != nil {
		return nil, fmt.Errorf("informer factory: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shard = sel
	var waits []<-chan struct{}
	for _, key := range f.order {
		namespaced, ok := f.follows[key]
		if !ok {
			continue
		}
		done, err := f.informers[key].SetShard(f.shardFor(Selectors{}, namespaced))
		if err != nil {
			return nil, err // cannot be: sel is valid, and so is no shard
		}
		select {
		case <-done:
		default:
			waits = append(waits, done)
		}
	}
	all := make(chan struct{})
	if len(waits) == 0 || f.shutDown {
		close(all)
		return all, nil
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer close(all)
		for _, done := range waits {
			select {
			case <-done:
			case <-f.shut:
				return
			}
		}
	}()
	return all, nil
}

// Shutdown stops every informer and waits until all their goroutines have exited.
func (f *Factory) Shutdown() {
	f.mu.Lock()
	if f.cancel != nil {
		f.cancel()
	}
	if !f.shutDown {
		f.shutDown = true
		close(f.shut)
	}
	f.mu.Unlock()
	f.wg.Wait()
}
