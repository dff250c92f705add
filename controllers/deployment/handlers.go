package deployment

import (
	"github.com/kinformer/kinformer/object"
)

// deletePod: a Recreate rollout waits for the old pods to be gone, and only a pod's
// deletion says they are. The Deployment's own and its ReplicaSets' events are
// controllers.Base's (WatchObjects, WatchDependents).
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
		if d, ok := dc.Owners().Resolve(rs.Namespace, dref); ok && isRecreate(d) {
			dc.Enqueue(d)
		}
	}
}
