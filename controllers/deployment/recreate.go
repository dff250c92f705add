package deployment

import "github.com/kinformer/kinformer/object"

// rolloutRecreate replaces all pods at once: after the revision step, every old
// ReplicaSet goes to zero, and only when none of their pods is left does the new
// ReplicaSet (created only then) scale up, so old and new pods never run together.
func (r *rollout) rolloutRecreate() error {
	if err := r.syncRevision(); err != nil {
		return err
	}
	newRS, olds := r.newRS, r.olds
	all := withNew(olds, newRS)
	scaledDown := false
	for _, rs := range active(olds) {
		if _, _, err := r.scaleRS(rs, 0); err != nil {
			return err
		}
		scaledDown = true
	}
	if scaledDown || r.oldPodsRunning(newRS, olds) {
		return r.syncRolloutStatus(all, newRS)
	}
	if newRS == nil {
		if err := r.createNewRS(); err != nil {
			return err
		}
		newRS = r.newRS
		all = withNew(olds, newRS)
	}
	if _, _, err := r.scaleRS(newRS, replicasOf(r.d)); err != nil {
		return err
	}
	if complete(r.d, &r.d.Status) {
		if err := r.cleanupHistory(olds); err != nil {
			return err
		}
	}
	return r.syncRolloutStatus(all, newRS)
}

// oldPodsRunning: an old ReplicaSet still reports pods, or a pod of one (being deleted
// included) has not reached a terminal phase.
func (r *rollout) oldPodsRunning(newRS *object.ReplicaSet, olds []*object.ReplicaSet) bool {
	if sumStatus(olds) > 0 {
		return true
	}
	oldUIDs := map[string]bool{}
	for _, rs := range olds {
		oldUIDs[rs.UID] = true
	}
	for _, p := range r.dc.cachedPods(r.d.Namespace) {
		ref := object.ControllerRef(&p.ObjectMeta)
		if ref == nil || !oldUIDs[ref.UID] || newRS != nil && ref.UID == newRS.UID {
			continue
		}
		if p.Status.Phase != object.PodSucceeded && p.Status.Phase != object.PodFailed {
			return true
		}
	}
	return false
}
