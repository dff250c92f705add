package apisim

import (
	"context"
	"time"
)

// collector is the simulator's garbage collector: the part of kube-controller-manager that
// carries out cascading deletion through metadata.ownerReferences.
//
//   - An object whose owners are all gone is deleted, in the background: unless it carries
//     a finalizer asking otherwise, its own dependents follow it the same way, so deleting
//     a Deployment takes its ReplicaSets and their pods. An object with another owner
//     left only loses its references to the gone ones.
//   - An owner in a foreground deletion (marked, with the foregroundDeletion finalizer)
//     has its dependents deleted first, in the foreground when they have dependents of
//     their own; once no dependent with blockOwnerDeletion is left, the finalizer goes,
//     and with it the owner.
//   - An owner in an orphaning deletion (marked, with the orphan finalizer) has the
//     references to it removed from its dependents, then the finalizer goes.
//
// Its deletes are the API's (deleteObject), so a running pod it deletes is deleted
// gracefully and waits for its kubelet, and its writes go through the store's commits, so
// watchers see them in order among everyone else's.
//
// The REST handlers never wait for it: the store tells it of each commit (observe), it
// queues what the change calls for, and its own goroutine does the work, one queued object
// at a time under the store's lock. It reacts to the commit, not to a poll.
type collector struct {
	store *store
	now   func() time.Time
	wake  chan struct{} // holds a token while there may be queued work

	// Guarded by store.mu, which every commit, and so every call of observe, holds.
	graph  ownership
	queue  []objectID
	queued map[objectID]bool
}

func newCollector(st *store, now func() time.Time) *collector {
	return &collector{store: st, now: now, wake: make(chan struct{}, 1),
		graph: newOwnership(), queued: map[objectID]bool{}}
}

// run works until ctx ends.
func (g *collector) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-g.wake:
		}
		for ctx.Err() == nil && g.step() {
		}
	}
}

// step attends to the next queued object. It reports false when the queue was empty.
func (g *collector) step() bool {
	g.store.mu.Lock()
	defer g.store.mu.Unlock()
	if len(g.queue) == 0 {
		return false
	}
	id := g.queue[0]
	g.queue = g.queue[1:]
	delete(g.queued, id)
	g.attend(id)
	return true
}

func (g *collector) enqueue(id objectID) {
	if g.queued[id] {
		return
	}
	g.queued[id] = true
	g.queue = append(g.queue, id)
	select {
	case g.wake <- struct{}{}:
	default: // a token is waiting already
	}
}

// observe follows one committed change (the store holds its lock) and queues the objects
// it may have given work: the change's object itself, its dependents, or its owners.
func (g *collector) observe(c change) {
	var id objectID
	var was, is []ownerRef
	if c.prev != nil {
		id, was = idOf(c.resource, c.key, c.prev), ownerRefs(c.prev.obj)
	}
	if c.next != nil {
		id, is = idOf(c.resource, c.key, c.next), ownerRefs(c.next.obj)
	}
	g.graph.update(id, was, is, c.next == nil)

	switch {
	case c.next == nil:
		// Gone: its dependents may have lost their last owner.
		if len(g.graph.dependentsOf(id)) > 0 {
			g.enqueue(id)
		}
	case orphaning(c.next.obj) || deletingDependents(c.next.obj):
		g.enqueue(id) // a deletion that waits for the collector
	default:
		// Its owners may be gone already (a dependent created from a stale cache), or be
		// deleting their dependents (one created under an owner in a foreground deletion).
		for _, r := range is {
			owner, ok := g.graph.owner(id, r.uid)
			if !ok && g.graph.gone.owned(id, r.uid) || ok && g.deletingDependents(owner) {
				g.enqueue(id)
				break
			}
		}
	}
	// An owner in a foreground deletion waits for its blocking dependents: this one, gone
	// or no longer blocking it, may have been the last.
	for _, r := range was {
		if owner, ok := g.graph.owner(id, r.uid); ok && r.block && !blocks(is, r.uid) && g.deletingDependents(owner) {
			g.enqueue(owner)
		}
	}
}

// current is the stored record of id, or nil when that incarnation is gone.
func (g *collector) current(id objectID) *record {
	rec := g.store.objects[id.resource][id.key]
	if rec == nil || str(meta(rec.obj), "uid") != id.uid {
		return nil
	}
	return rec
}

func (g *collector) deletingDependents(id objectID) bool {
	rec := g.current(id)
	return rec != nil && deletingDependents(rec.obj)
}

// attend does what id's state calls for.
func (g *collector) attend(id objectID) {
	rec := g.current(id)
	switch {
	case rec == nil:
		for _, d := range g.graph.dependentsOf(id) {
			g.enqueue(d)
		}
	case orphaning(rec.obj):
		g.orphanDependents(id, rec)
	case deletingDependents(rec.obj):
		g.deleteDependents(id, rec)
	case meta(rec.obj)["deletionTimestamp"] == nil:
		g.collectIfOwnerless(id, rec)
	}
	// Otherwise it is on its way out already; its dependents are attended once it is gone.
}

// collectIfOwnerless deletes a dependent none of whose owners remains, or removes the
// references to owners gone or going from one that keeps another.
func (g *collector) collectIfOwnerless(id objectID, rec *record) {
	drop := map[string]bool{}
	solid, waiting := 0, 0
	for _, r := range ownerRefs(rec.obj) {
		owner, ok := g.graph.owner(id, r.uid)
		switch {
		case !ok:
			drop[r.uid] = true
		case g.deletingDependents(owner):
			drop[r.uid] = true
			waiting++
		default:
			solid++
		}
	}
	switch {
	case len(drop) == 0:
	case solid > 0:
		// An owner remains. Forgetting the ones in a foreground deletion also lets them
		// go: they would otherwise wait for this object for ever.
		g.store.commit(id.resource, id.key, rec, withoutOwners(rec.obj, drop), commitPut)
	case waiting > 0 && len(g.graph.dependentsOf(id)) > 0:
		// An owner waits in the foreground, so this object's own dependents go before it.
		g.delete(id, rec, propagateForeground)
	default:
		// No owner is waiting: the object's own finalizers choose, else Background.
		g.delete(id, rec, "")
	}
}

// deleteDependents works on an owner in a foreground deletion: its dependents are queued
// for deletion, and once none blocks it any more its foregroundDeletion finalizer goes.
func (g *collector) deleteDependents(id objectID, rec *record) {
	blocked := false
	for _, d := range g.graph.dependentsOf(id) {
		drec := g.current(d)
		if drec == nil {
			continue
		}
		blocked = blocked || blocks(ownerRefs(drec.obj), id.uid)
		if meta(drec.obj)["deletionTimestamp"] == nil {
			g.enqueue(d)
		}
	}
	if !blocked {
		g.store.commit(id.resource, id.key, rec, withoutFinalizer(rec.obj, finalizerForeground), commitPut)
	}
}

// orphanDependents works on an owner in an orphaning deletion: the references to it go
// from its dependents, then its orphan finalizer goes.
func (g *collector) orphanDependents(id objectID, rec *record) {
	for _, d := range g.graph.dependentsOf(id) {
		if drec := g.current(d); drec != nil {
			g.store.commit(d.resource, d.key, drec, withoutOwners(drec.obj, map[string]bool{id.uid: true}), commitPut)
		}
	}
	g.store.commit(id.resource, id.key, rec, withoutFinalizer(rec.obj, finalizerOrphan), commitPut)
}

// delete deletes id as a client's DELETE with propagation policy p would ("": none given).
func (g *collector) delete(id objectID, rec *record, p propagation) {
	var opts deleteOptions
	if p != "" {
		policy := string(p)
		opts.PropagationPolicy = &policy
	}
	deleteObject(g.store, id.resource, id.key, rec, opts, g.now().UTC())
}
