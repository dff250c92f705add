package deployment

import (
	"slices"

	"github.com/kinformer/kinformer/object"
)

// rolloutRolling moves one step of a rolling update: bring the revisions up to date and
// create the new ReplicaSet if there is none; scale it up as far as maxSurge allows; if
// it could not grow, scale old ones down as far as maxUnavailable allows (unhealthy
// replicas first); once complete, clean up history; write the status.
func (r *rollout) rolloutRolling() error {
	if err := r.syncRevision(); err != nil {
		return err
	}
	if r.newRS == nil {
		if err := r.createNewRS(); err != nil {
			return err
		}
	}
	newRS, olds := r.newRS, r.olds
	all := withNew(olds, newRS)
	scaledUp, err := r.reconcileNewRS(all, newRS)
	if err != nil {
		return err
	}
	if scaledUp {
		return r.syncRolloutStatus(all, newRS)
	}
	scaledDown, err := r.reconcileOldRSs(all, active(olds), newRS)
	if err != nil {
		return err
	}
	if scaledDown {
		return r.syncRolloutStatus(all, newRS)
	}
	if complete(r.d, &r.d.Status) {
		if err := r.cleanupHistory(olds); err != nil {
			return err
		}
	}
	return r.syncRolloutStatus(all, newRS)
}

// newRSReplicas is the size the new ReplicaSet may have now: for a rolling update, up
// to maxSurge above the desired total but never above the desired count; for Recreate,
// the desired count.
func (r *rollout) newRSReplicas(all []*object.ReplicaSet, newRS *object.ReplicaSet) int32 {
	d := r.d
	if isRecreate(d) {
		return replicasOf(d)
	}
	maxTotal := replicasOf(d) + maxSurge(d)
	current := sumSpec(all)
	if current >= maxTotal {
		return rsReplicas(newRS)
	}
	return rsReplicas(newRS) + min(maxTotal-current, replicasOf(d)-rsReplicas(newRS))
}

func (r *rollout) reconcileNewRS(all []*object.ReplicaSet, newRS *object.ReplicaSet) (bool, error) {
	want := replicasOf(r.d)
	switch {
	case rsReplicas(newRS) == want:
		return false, nil
	case rsReplicas(newRS) > want:
		scaled, _, err := r.scaleRS(newRS, want)
		return scaled, err
	}
	scaled, _, err := r.scaleRS(newRS, r.newRSReplicas(all, newRS))
	return scaled, err
}

// reconcileOldRSs scales old ReplicaSets down while at least replicas − maxUnavailable
// pods stay available, counting the new ReplicaSet's unavailable pods against the budget.
func (r *rollout) reconcileOldRSs(all, olds []*object.ReplicaSet, newRS *object.ReplicaSet) (bool, error) {
	d := r.d
	if sumSpec(olds) == 0 {
		return false, nil
	}
	minAvailable := replicasOf(d) - maxUnavailable(d)
	newUnavailable := rsReplicas(newRS) - newRS.Status.AvailableReplicas
	maxScaledDown := sumSpec(all) - minAvailable - newUnavailable
	if maxScaledDown <= 0 {
		return false, nil
	}
	cleaned, err := r.scaleDownUnhealthy(olds, maxScaledDown)
	if err != nil {
		return false, err
	}
	scaled, err := r.scaleDownOld(withNew(olds, newRS), olds)
	if err != nil {
		return false, err
	}
	return cleaned+scaled > 0, nil
}

// scaleDownUnhealthy removes old replicas that are not available, oldest ReplicaSet
// first, up to limit: they cost no availability, and left alone they would block the
// rollout until it times out. olds is updated with the ReplicaSets as written.
func (r *rollout) scaleDownUnhealthy(olds []*object.ReplicaSet, limit int32) (int32, error) {
	slices.SortFunc(olds, byAge)
	var total int32
	for i, rs := range olds {
		if total >= limit {
			break
		}
		unhealthy := rsReplicas(rs) - rs.Status.AvailableReplicas
		if rsReplicas(rs) == 0 || unhealthy <= 0 {
			continue
		}
		n := min(limit-total, unhealthy)
		_, updated, err := r.scaleRS(rs, rsReplicas(rs)-n)
		if err != nil {
			return total, err
		}
		olds[i] = updated
		total += n
	}
	return total, nil
}

// scaleDownOld removes available old replicas, oldest ReplicaSet first, as long as
// the available pods stay above replicas − maxUnavailable.
func (r *rollout) scaleDownOld(all, olds []*object.ReplicaSet) (int32, error) {
	d := r.d
	minAvailable := replicasOf(d) - maxUnavailable(d)
	available := sumAvailable(all)
	if available <= minAvailable {
		return 0, nil
	}
	slices.SortFunc(olds, byAge)
	want := available - minAvailable
	var total int32
	for _, rs := range olds {
		if total >= want {
			break
		}
		if rsReplicas(rs) == 0 {
			continue
		}
		n := min(rsReplicas(rs), want-total)
		if _, _, err := r.scaleRS(rs, rsReplicas(rs)-n); err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}
