package deployment

import (
	"maps"

	"github.com/kinformer/kinformer/controllers/consistency"
	"github.com/kinformer/kinformer/object"
)

func (dc *Controller) addDeployment(d *object.Deployment, _ bool) { dc.enqueue(d) }

func (dc *Controller) updateDeployment(old, cur *object.Deployment) {
	if old.UID != cur.UID {
		// Deleted and created again under the same name: the old object's pending writes
		// will never be observed for the new one.
		dc.written.Clear(consistency.OwnerOf(&old.ObjectMeta))
	}
	dc.enqueue(cur)
}

func (dc *Controller) deleteDeployment(d *object.Deployment, _ bool) {
	dc.written.Clear(consistency.OwnerOf(&d.ObjectMeta))
	dc.enqueue(d)
}

// addRS: a ReplicaSet created (by this controller, or adopted) changes its owner's rollout.
func (dc *Controller) addRS(rs *object.ReplicaSet, _ bool) {
	if rs.DeletionTimestamp != nil {
		dc.deleteRS(rs, false)
		return
	}
	if ref := object.ControllerRef(&rs.ObjectMeta); ref != nil {
		if d, ok := dc.owners.Resolve(rs.Namespace, ref); ok {
			dc.enqueue(d)
		}
		return
	}
	for _, d := range dc.owners.Selecting(rs.Namespace, rs.Labels) {
		dc.enqueue(d)
	}
}

// updateRS enqueues the old and new owner, or for an orphan every Deployment that now
// selects it. Status changes of owned ReplicaSets (pods becoming available) arrive here.
func (dc *Controller) updateRS(old, cur *object.ReplicaSet) {
	if old.ResourceVersion == cur.ResourceVersion {
		return
	}
	curRef, oldRef := object.ControllerRef(&cur.ObjectMeta), object.ControllerRef(&old.ObjectMeta)
	refChanged := (curRef == nil) != (oldRef == nil) || curRef != nil && oldRef != nil && curRef.UID != oldRef.UID
	if refChanged && oldRef != nil {
		if d, ok := dc.owners.Resolve(old.Namespace, oldRef); ok {
			dc.enqueue(d)
		}
	}
	if curRef != nil {
		if d, ok := dc.owners.Resolve(cur.Namespace, curRef); ok {
			dc.enqueue(d)
		}
		return
	}
	if refChanged || !maps.Equal(old.Labels, cur.Labels) {
		for _, d := range dc.owners.Selecting(cur.Namespace, cur.Labels) {
			dc.enqueue(d)
		}
	}
}

func (dc *Controller) deleteRS(rs *object.ReplicaSet, _ bool) {
	if ref := object.ControllerRef(&rs.ObjectMeta); ref != nil {
		if d, ok := dc.owners.Resolve(rs.Namespace, ref); ok {
			dc.enqueue(d)
		}
	}
}

// deletePod: a Recreate rollout waits for the old pods to be gone, and only a pod's
// deletion says they are.
func (dc *Controller) deletePod(p *object.Pod, _ bool) {
	ref := object.ControllerRef(&p.ObjectMeta)
	if ref == nil || ref.Kind != "ReplicaSet" {
		return
	}
	rs, ok := dc.rsLister.Get(object.KeyFor(p.Namespace, ref.Name))
	if !ok || rs.UID != ref.UID {
		return
	}
	if dref := object.ControllerRef(&rs.ObjectMeta); dref != nil {
		if d, ok := dc.owners.Resolve(rs.Namespace, dref); ok && isRecreate(d) {
			dc.enqueue(d)
		}
	}
}
