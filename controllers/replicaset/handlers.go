package replicaset

import (
	"maps"
	"strings"

	"github.com/kinformer/kinformer/controllers/consistency"
	"github.com/kinformer/kinformer/object"
)

// byControllerUID indexes a pod under its ControllerRef's UID.
func byControllerUID(p *object.Pod) ([]string, error) {
	if ref := object.ControllerRef(&p.ObjectMeta); ref != nil {
		return []string{ref.UID}, nil
	}
	return nil, nil
}

func (rc *Controller) addRS(rs *object.ReplicaSet, _ bool) { rc.enqueue(rs) }

func (rc *Controller) updateRS(old, cur *object.ReplicaSet) {
	if old.UID != cur.UID {
		// Deleted and recreated under the same name: the old object's pending writes
		// will never be observed for the new one.
		rc.exp.Forget(object.Key(old))
		rc.written.Clear(consistency.OwnerOf(&old.ObjectMeta))
	}
	rc.enqueue(cur)
}

func (rc *Controller) deleteRS(rs *object.ReplicaSet, _ bool) {
	rc.exp.Forget(object.Key(rs))
	rc.written.Clear(consistency.OwnerOf(&rs.ObjectMeta))
	rc.enqueue(rs)
}

// addPod: a created pod lowers its owner's pending creations. An orphan may be adopted
// by any ReplicaSet that selects it.
func (rc *Controller) addPod(p *object.Pod, _ bool) {
	if p.DeletionTimestamp != nil {
		// Seen for the first time already being deleted (after a restart, or a relist):
		// for the owner it is a deletion, not a creation.
		rc.deletePod(p, false)
		return
	}
	if ref := object.ControllerRef(&p.ObjectMeta); ref != nil {
		if rs := rc.resolve(p.Namespace, ref); rs != nil {
			rc.exp.CreationObservedOf(object.Key(rs), object.Key(p))
			rc.enqueue(rs)
		}
		return
	}
	for _, rs := range rc.selecting(p) {
		rc.enqueue(rs)
	}
}

// updatePod enqueues every ReplicaSet whose view of the pod may have changed: the new
// and the old owner, or, for an orphan, every ReplicaSet that now selects it.
func (rc *Controller) updatePod(old, cur *object.Pod) {
	if old.ResourceVersion == cur.ResourceVersion {
		return // a resync: nothing changed
	}
	labelsChanged := !maps.Equal(old.Labels, cur.Labels)
	if cur.DeletionTimestamp != nil {
		// A graceful deletion starts: the pod stops counting now, and the owner must know
		// at once rather than when the kubelet finally removes it.
		rc.deletePod(cur, false)
		if labelsChanged {
			rc.deletePod(old, false)
		}
		return
	}
	curRef, oldRef := object.ControllerRef(&cur.ObjectMeta), object.ControllerRef(&old.ObjectMeta)
	refChanged := !sameRef(curRef, oldRef)
	if refChanged && oldRef != nil {
		if rs := rc.resolve(old.Namespace, oldRef); rs != nil {
			rc.enqueue(rs)
		}
	}
	if curRef != nil {
		rs := rc.resolve(cur.Namespace, curRef)
		if rs == nil {
			return
		}
		rc.enqueue(rs)
		return
	}
	if labelsChanged || refChanged {
		for _, rs := range rc.selecting(cur) {
			rc.enqueue(rs)
		}
	}
}

// deletePod lowers the owner's pending deletions (only for pods it deleted itself).
func (rc *Controller) deletePod(p *object.Pod, _ bool) {
	ref := object.ControllerRef(&p.ObjectMeta)
	if ref == nil {
		return // an orphan's deletion changes no ReplicaSet's count
	}
	rs := rc.resolve(p.Namespace, ref)
	if rs == nil {
		return
	}
	key := object.Key(rs)
	rc.exp.DeletionObserved(key, object.Key(p))
	rc.enqueue(rs)
}

// resolve returns the cached ReplicaSet a ControllerRef points to, or nil when the ref
// names another kind or a ReplicaSet that no longer exists (same name, other UID).
func (rc *Controller) resolve(ns string, ref *object.OwnerReference) *object.ReplicaSet {
	group, _, _ := strings.Cut(ref.APIVersion, "/")
	if ref.Kind != "ReplicaSet" || group != "apps" {
		return nil
	}
	rs, ok := rc.rsLister.Get(object.KeyFor(ns, ref.Name))
	if !ok || rs.UID != ref.UID {
		return nil
	}
	return rs
}

// selecting returns the ReplicaSets of p's namespace whose selector matches p. A nil or
// empty selector selects nothing: it must never adopt every pod of a namespace.
func (rc *Controller) selecting(p *object.Pod) []*object.ReplicaSet {
	var out []*object.ReplicaSet
	for _, rs := range rc.rsLister.Namespace(p.Namespace).List(object.Everything()) {
		sel, err := rs.Spec.Selector.AsSelector()
		if err != nil || sel.Empty() || !sel.Matches(p.Labels) {
			continue
		}
		out = append(out, rs)
	}
	return out
}

func sameRef(a, b *object.OwnerReference) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.UID == b.UID && a.Kind == b.Kind && a.APIVersion == b.APIVersion && a.Name == b.Name
}
