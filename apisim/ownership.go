package apisim

import (
	"cmp"
	"slices"
)

// An object names its owners in metadata.ownerReferences, by uid. The garbage collector
// needs the other direction, from an owner to the objects that name it, and needs it at
// once when the owner goes; so it keeps an ownership graph, updated by every commit as
// kube-controller-manager's collector keeps one from its informers.

// objectID names one incarnation of a stored object: where it is stored, and its uid, so
// that an object created again under the same name is never taken for the one before.
type objectID struct {
	resource  string // typeKey of its resource
	namespace string // "" when cluster-scoped
	key       string
	uid       string
}

func idOf(resource, key string, rec *record) objectID {
	m := meta(rec.obj)
	return objectID{resource: resource, namespace: str(m, "namespace"), key: key, uid: str(m, "uid")}
}

// mayOwn reports whether owner can own dependent. Ownership does not cross namespaces: a
// namespaced dependent's owners are in its namespace or cluster-scoped, and a reference
// that resolves elsewhere is a reference to an owner that does not exist.
func mayOwn(owner, dependent objectID) bool {
	return owner.namespace == "" || owner.namespace == dependent.namespace
}

// ownerRef is what the collector reads of an ownerReferences entry.
type ownerRef struct {
	uid string
	// block is blockOwnerDeletion: a foreground deletion of the owner waits for this
	// dependent to be gone.
	block bool
}

func ownerRefs(obj map[string]any) []ownerRef {
	raw, _ := meta(obj)["ownerReferences"].([]any)
	refs := make([]ownerRef, 0, len(raw))
	for _, r := range raw {
		m, _ := r.(map[string]any)
		if uid := str(m, "uid"); uid != "" {
			block, _ := m["blockOwnerDeletion"].(bool)
			refs = append(refs, ownerRef{uid: uid, block: block})
		}
	}
	return refs
}

// blocks reports whether refs hold a blocking reference to the owner with uid.
func blocks(refs []ownerRef, uid string) bool {
	return slices.ContainsFunc(refs, func(r ownerRef) bool { return r.uid == uid && r.block })
}

// withoutOwners is a copy of obj whose ownerReferences no longer name the given uids.
func withoutOwners(obj map[string]any, uids map[string]bool) map[string]any {
	out := copyObject(obj)
	m := meta(out)
	raw, _ := m["ownerReferences"].([]any)
	kept := slices.DeleteFunc(raw, func(r any) bool {
		ref, _ := r.(map[string]any)
		return uids[str(ref, "uid")]
	})
	if len(kept) == 0 {
		delete(m, "ownerReferences")
	} else {
		m["ownerReferences"] = kept
	}
	return out
}

func hasFinalizer(obj map[string]any, f string) bool {
	return slices.Contains(finalizers(obj), any(f))
}

// withoutFinalizer is a copy of obj without the finalizer f.
func withoutFinalizer(obj map[string]any, f string) map[string]any {
	out := copyObject(obj)
	m := meta(out)
	setFinalizers(m, slices.DeleteFunc(finalizers(out), func(x any) bool { return x == f }))
	return out
}

// deletingDependents reports an owner in a foreground deletion: marked, and held by the
// foregroundDeletion finalizer until its blocking dependents are gone.
func deletingDependents(obj map[string]any) bool {
	return meta(obj)["deletionTimestamp"] != nil && hasFinalizer(obj, finalizerForeground)
}

// orphaning reports an owner in an orphaning deletion: marked, and held by the orphan
// finalizer until no dependent names it.
func orphaning(obj map[string]any) bool {
	return meta(obj)["deletionTimestamp"] != nil && hasFinalizer(obj, finalizerOrphan)
}

// ownership is the graph the collector works from.
type ownership struct {
	live       map[string]objectID              // every stored object, by uid
	dependents map[string]map[objectID]struct{} // by owner uid: the objects naming it
	gone       recentlyGone
}

func newOwnership() ownership {
	return ownership{live: map[string]objectID{}, dependents: map[string]map[objectID]struct{}{}}
}

// update follows one change of the object id: its owner references were was and are now
// is (nil once it is deleted).
func (o *ownership) update(id objectID, was, is []ownerRef, deleted bool) {
	for _, r := range was {
		if deps := o.dependents[r.uid]; deps != nil {
			delete(deps, id)
			if len(deps) == 0 {
				delete(o.dependents, r.uid)
			}
		}
	}
	for _, r := range is {
		deps := o.dependents[r.uid]
		if deps == nil {
			deps = map[objectID]struct{}{}
			o.dependents[r.uid] = deps
		}
		deps[id] = struct{}{}
	}
	if deleted {
		delete(o.live, id.uid)
		o.gone.add(id)
	} else {
		o.live[id.uid] = id
	}
}

// owner resolves dependent's reference to uid: the owner, when it exists where it may own
// dependent.
func (o *ownership) owner(dependent objectID, uid string) (objectID, bool) {
	id, ok := o.live[uid]
	return id, ok && mayOwn(id, dependent)
}

// dependentsOf lists the objects owner owns, in a stable order. An object naming itself is
// not its own dependent: it would wait for itself.
func (o *ownership) dependentsOf(owner objectID) []objectID {
	var out []objectID
	for d := range o.dependents[owner.uid] {
		if d != owner && mayOwn(owner, d) {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b objectID) int {
		return cmp.Or(cmp.Compare(a.resource, b.resource), cmp.Compare(a.key, b.key))
	})
	return out
}

// goneMemory is how many deleted objects the collector remembers.
const goneMemory = 4096

// recentlyGone remembers the last goneMemory deleted objects. A controller acting on a
// stale cache may create a dependent of an owner deleted a moment ago; kube-controller-
// manager's collector finds such a dependent's owner missing and deletes it. The simulator
// collects only dependents of owners it saw go: tests create references to owners they
// never made, and those must stay.
type recentlyGone struct {
	ids  map[string]objectID // by uid
	ring []string            // uids, oldest at next once full
	next int
}

func (r *recentlyGone) add(id objectID) {
	if r.ids == nil {
		r.ids = map[string]objectID{}
	}
	if len(r.ring) < goneMemory {
		r.ring = append(r.ring, id.uid)
	} else {
		delete(r.ids, r.ring[r.next])
		r.ring[r.next] = id.uid
		r.next = (r.next + 1) % goneMemory
	}
	r.ids[id.uid] = id
}

// owned reports whether dependent's reference to uid names an owner recently deleted.
func (r *recentlyGone) owned(dependent objectID, uid string) bool {
	id, ok := r.ids[uid]
	return ok && mayOwn(id, dependent)
}
