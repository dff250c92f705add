package controllers

import (
	"context"
	"log/slog"
	"maps"
	"time"

	"github.com/kinformer/kinformer/controllers/consistency"
	"github.com/kinformer/kinformer/controllers/events"
	"github.com/kinformer/kinformer/controllers/expectations"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/object"
)

// Config describes a controller to NewBase: the objects its work-queue keys name, and
// what it records about them.
type Config[T object.Object] struct {
	// Name is the controller's ("replicaset"): it labels the metrics and the handlers.
	Name string
	// Sync syncs the object of one key (see WorkerPool.Sync).
	Sync func(ctx context.Context, key string) error
	// APIVersion and Kind are the objects' ("apps/v1", "ReplicaSet"): what their events
	// and the ControllerRefs of their dependents name.
	APIVersion, Kind string
	// Lister reads the objects' cache.
	Lister informer.Lister[T]
	// Selector returns an object's label selector: which orphans it may adopt.
	Selector func(T) *object.LabelSelector
	// Expectations are the controller's, by object key; nil when it keeps none.
	Expectations *expectations.Expectations
	// Written is the controller's read-your-writes guard; nil when it has none.
	Written *consistency.Store
}

// Base is what a controller shares with the others, generic over the type T of the
// objects its work-queue keys name (the ReplicaSet controller's ReplicaSets, the
// Deployment controller's Deployments): its Runner; the event handlers that turn changes
// of those objects and of their dependents into keys and settle the records kept per
// object (expectations, read-your-writes); its events; and what a sharded controller
// manager calls when namespaces come (Requeue) and go (Forget). A controller embeds a
// *Base, registers its handlers with WatchObjects, WatchDependents and Watch, and keeps
// only what is its own: how it syncs a key, and handlers no other controller needs.
type Base[T object.Object] struct {
	Runner

	owners     Owners[T]
	apiVersion string
	recorder   *events.Recorder
	exp        *expectations.Expectations
	written    *consistency.Store
	log        *slog.Logger
	// removes are the handlers registered so far, undone if a later one fails.
	removes []func()
}

// NewBase returns the Base of a controller whose workers call cfg.Sync (see NewRunner for
// the queue, metrics and logs opts configures).
func NewBase[T object.Object](cfg Config[T], opts Options) *Base[T] {
	log := opts.Logger
	if log != nil {
		log = log.With("controller", cfg.Name)
	}
	return &Base[T]{
		Runner:     NewRunner(cfg.Name, cfg.Sync, opts),
		owners:     Owners[T]{Lister: cfg.Lister, Group: apiGroup(cfg.APIVersion), Kind: cfg.Kind, Selector: cfg.Selector},
		apiVersion: cfg.APIVersion, recorder: opts.Recorder, exp: cfg.Expectations, written: cfg.Written, log: log,
	}
}

// Owners finds the controller's objects that own (or may adopt) a dependent.
func (b *Base[T]) Owners() Owners[T] { return b.owners }

// Enqueue adds obj's key to the work queue.
func (b *Base[T]) Enqueue(obj T) { b.Queue().Add(object.Key(obj)) }

// Event records an event about obj (nothing without Options.Recorder), for `kubectl
// describe` to show.
func (b *Base[T]) Event(obj T, typ, reason, format string, args ...any) {
	if b.recorder != nil {
		b.recorder.Eventf(events.Ref{APIVersion: b.apiVersion, Kind: b.owners.Kind, Meta: obj.Meta()}, typ, reason, format, args...)
	}
}

// Requeue adds every cached object whose namespace owns accepts to the queue: what a
// sharded controller manager does with namespaces it has just taken over, whose objects
// may have changed while another process owned them without an event saying so here.
func (b *Base[T]) Requeue(owns func(namespace string) bool) {
	for _, obj := range b.owners.Lister.List(object.Everything()) {
		if owns(obj.Meta().Namespace) {
			b.Enqueue(obj)
		}
	}
}

// Forget drops the expectations and the read-your-writes records of every object in the
// namespaces gone accepts: what a sharded controller manager does with namespaces it has
// handed to another process, once its Gate no longer lets syncs in there (after
// Gate.Drain), so that no sync of this process records anew. This process will not
// observe what the other one writes there: kept, the records would hold back the syncs
// of a namespace that comes back (until the expectations' TTL, or until the cache shows
// a write long superseded), and would never go otherwise.
func (b *Base[T]) Forget(gone func(namespace string) bool) {
	exps := 0
	if b.exp != nil {
		exps = b.exp.ForgetNamespaces(gone)
	}
	writes := b.written.ClearNamespaces(gone)
	if b.log != nil && exps+writes > 0 {
		b.log.Debug("forgot the records of namespaces handed away", "expectations", exps, "writes", writes)
	}
}

// forgetObject drops what is recorded for obj, which was deleted, or replaced by another
// object of the same name: no event will ever settle the old object's records.
func (b *Base[T]) forgetObject(obj T) {
	if b.exp != nil {
		b.exp.Forget(object.Key(obj))
	}
	b.written.Clear(consistency.OwnerOf(obj.Meta()))
}

// WatchObjects registers on inf, the informer of the controller's own objects, the
// handlers that enqueue each object that appears, changes or goes, forgetting first what
// was recorded for one deleted or replaced by a new object of the same name (another
// UID). resync (Options.ResyncPeriod) re-delivers every object that often.
func WatchObjects[T object.Object](b *Base[T], inf *informer.Informer[T], resync time.Duration) error {
	return watch(b, inf, informer.HandlerFuncs[T]{
		AddFunc: func(obj T, _ bool) { b.Enqueue(obj) },
		UpdateFunc: func(old, cur T) {
			if old.Meta().UID != cur.Meta().UID {
				b.forgetObject(old)
			}
			b.Enqueue(cur)
		},
		DeleteFunc: func(obj T, _ bool) {
			b.forgetObject(obj)
			b.Enqueue(obj)
		},
	}, resync)
}

// DependentOptions say how a controller reads the changes of its objects' dependents.
type DependentOptions struct {
	// TerminatingIsDeleted counts a dependent as deleted as soon as its deletion starts
	// (deletionTimestamp set), not when it is gone: a terminating pod stops counting
	// toward its ReplicaSet's replicas at once, and its owner must know then, not when
	// the kubelet finally removes it.
	TerminatingIsDeleted bool
}

// WatchDependents registers on inf, the informer of the objects that the controller's
// objects control (a ReplicaSet's pods, a Deployment's ReplicaSets), the handlers that
// enqueue a dependent's owner when the dependent appears, changes or goes: the object its
// ControllerRef names, or, for an orphan, every object whose selector matches it (any
// may adopt it); both the old and the new owner when the ControllerRef changes. The
// appearance of an owned dependent settles one of its owner's expected creations, and
// its deletion an expected deletion of it (when the controller keeps expectations).
func WatchDependents[T, D object.Object](b *Base[T], inf *informer.Informer[D], opts DependentOptions) error {
	d := dependents[T, D]{b: b, terminatingIsDeleted: opts.TerminatingIsDeleted}
	return watch(b, inf, informer.HandlerFuncs[D]{AddFunc: d.add, UpdateFunc: d.update, DeleteFunc: d.delete}, 0)
}

// Watch registers h, a handler of the controller's own, on inf.
func Watch[T, D object.Object](b *Base[T], inf *informer.Informer[D], h informer.Handler[D]) error {
	return watch(b, inf, h, 0)
}

// watch registers h on inf under the controller's name, and adds both to what must sync
// before the workers start. If that fails, it removes every handler registered before,
// so that a constructor that gives up leaves no handler feeding a queue nobody works.
func watch[T, D object.Object](b *Base[T], inf *informer.Informer[D], h informer.Handler[D], resync time.Duration) error {
	reg, err := inf.AddEventHandler(h, informer.HandlerOptions{Name: b.pool.Name, ResyncPeriod: resync})
	if err != nil {
		for _, remove := range b.removes {
			remove()
		}
		b.removes = nil
		return err
	}
	b.removes = append(b.removes, reg.Remove)
	b.AddSyncers(inf, reg)
	return nil
}

// dependents are the handlers of the dependents (D) of a controller's objects (T).
type dependents[T, D object.Object] struct {
	b                    *Base[T]
	terminatingIsDeleted bool
}

// add: a created dependent lowers its owner's pending creations. An orphan may be
// adopted by any owner that selects it.
func (d dependents[T, D]) add(dep D, _ bool) {
	m := dep.Meta()
	if m.DeletionTimestamp != nil {
		// Seen for the first time already being deleted (after a restart, or a relist):
		// for the owner it is a deletion, not a creation.
		d.delete(dep, false)
		return
	}
	if ref := object.ControllerRef(m); ref != nil {
		if owner, ok := d.b.owners.Resolve(m.Namespace, ref); ok {
			if d.b.exp != nil {
				d.b.exp.CreationObservedOf(object.Key(owner), object.Key(dep))
			}
			d.b.Enqueue(owner)
		}
		return
	}
	for _, owner := range d.b.owners.Selecting(m.Namespace, m.Labels) {
		d.b.Enqueue(owner)
	}
}

// update enqueues every owner whose view of the dependent may have changed: the new and
// the old owner, or, for an orphan, every owner that now selects it.
func (d dependents[T, D]) update(oldDep, curDep D) {
	old, cur := oldDep.Meta(), curDep.Meta()
	if old.ResourceVersion == cur.ResourceVersion {
		return // a resync: nothing changed
	}
	labelsChanged := !maps.Equal(old.Labels, cur.Labels)
	if d.terminatingIsDeleted && cur.DeletionTimestamp != nil {
		d.delete(curDep, false)
		if labelsChanged {
			d.delete(oldDep, false)
		}
		return
	}
	curRef, oldRef := object.ControllerRef(cur), object.ControllerRef(old)
	refChanged := !sameRef(curRef, oldRef)
	if refChanged && oldRef != nil {
		if owner, ok := d.b.owners.Resolve(old.Namespace, oldRef); ok {
			d.b.Enqueue(owner)
		}
	}
	if curRef != nil {
		if owner, ok := d.b.owners.Resolve(cur.Namespace, curRef); ok {
			d.b.Enqueue(owner)
		}
		return
	}
	if labelsChanged || refChanged {
		for _, owner := range d.b.owners.Selecting(cur.Namespace, cur.Labels) {
			d.b.Enqueue(owner)
		}
	}
}

// delete lowers the owner's pending deletions (only for dependents it deleted itself).
func (d dependents[T, D]) delete(dep D, _ bool) {
	m := dep.Meta()
	ref := object.ControllerRef(m)
	if ref == nil {
		return // an orphan's deletion changes no owner's count
	}
	if owner, ok := d.b.owners.Resolve(m.Namespace, ref); ok {
		if d.b.exp != nil {
			d.b.exp.DeletionObserved(object.Key(owner), object.Key(dep))
		}
		d.b.Enqueue(owner)
	}
}

// sameRef reports whether two ControllerRefs name the same owner.
func sameRef(a, b *object.OwnerReference) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.UID == b.UID && a.Kind == b.Kind && a.APIVersion == b.APIVersion && a.Name == b.Name
}
