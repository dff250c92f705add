package deployment

import (
	"slices"

	"github.com/kinformer/kinformer/object"
)

// cleanup deletes the oldest old ReplicaSets beyond revisionHistoryLimit, only those
// fully scaled down and settled (no replicas, no pods, status caught up): what `kubectl
// rollout undo` can still return to is exactly what is kept.
func (r *rollout) cleanup(olds []*object.ReplicaSet) error {
	d := r.d
	var alive []*object.ReplicaSet
	for _, rs := range olds {
		if rs.DeletionTimestamp == nil {
			alive = append(alive, rs)
		}
	}
	excess := len(alive) - int(revisionHistoryLimit(d))
	if excess <= 0 {
		return nil
	}
	slices.SortFunc(alive, byRevision)
	for _, rs := range alive[:excess] {
		if rs.Status.Replicas != 0 || rsReplicas(rs) != 0 || rs.Generation > rs.Status.ObservedGeneration {
			continue
		}
		err := r.dc.w.deleteRS(r.ctx, rs.Namespace, rs.Name, rs.UID)
		if err != nil && !object.IsNotFound(err) && !object.IsConflict(err) {
			return err
		}
	}
	return nil
}
