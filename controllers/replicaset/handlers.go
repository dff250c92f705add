package replicaset

import (
	"maps"

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
		if rs, ok := rc.owners.Resolve(p.Namespace, ref); ok {
			rc.exp.CreationObservedOf(object.Key(rs), object.Key(p))
			rc.enqueue(rs)
		}
		return
	}
	for _, rs := range rc.owners.Selecting(p.Namespace, p.Labels) {
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
		if rs, ok := rc.owners.Resolve(old.Namespace, oldRef); ok {
			rc.enqueue(rs)
		}
	}
	if curRef != nil {
		if rs, ok := rc.owners.Resolve(cur.Namespace, curRef); ok {
			rc.enqueue(rs)
		}
		return
	}
	if labelsChanged || refChanged {
		for _, rs := range rc.owners.Selecting(cur.Namespace, cur.Labels) {
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
	if rs, ok := rc.owners.Resolve(p.Namespace, ref); ok {
		rc.exp.DeletionObserved(object.Key(rs), object.Key(p))
		rc.enqueue(rs)
	}
}

func sameRef(a, b *object.OwnerReference) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.UID == b.UID && a.Kind == b.Kind && a.APIVersion == b.APIVersion && a.Name == b.Name
}
