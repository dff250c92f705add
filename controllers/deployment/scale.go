package deployment

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/kinformer/kinformer/controllers/events"
	"github.com/kinformer/kinformer/object"
)

// scale sizes the ReplicaSets for the Deployment's replica count without rolling: one
// active ReplicaSet takes the whole count; a saturated new one leaves the old ones at
// zero; mid-rollout, every active ReplicaSet grows or shrinks in proportion.
func (r *rollout) scale(newRS *object.ReplicaSet, olds []*object.ReplicaSet) error {
	d := r.d
	if only := activeOrLatest(newRS, olds); only != nil {
		if rsReplicas(only) == replicasOf(d) {
			return nil
		}
		_, _, err := r.scaleRS(only, replicasOf(d))
		return err
	}
	if saturated(d, newRS) {
		for _, old := range active(olds) {
			if _, _, err := r.scaleRS(old, 0); err != nil {
				return err
			}
		}
		return nil
	}
	if isRecreate(d) {
		return nil
	}
	sizes := proportionalSizes(d, active(withNew(olds, newRS)))
	for _, s := range sizes {
		if _, _, err := r.scaleRS(s.rs, s.size); err != nil {
			return err
		}
	}
	return nil
}

type sized struct {
	rs   *object.ReplicaSet
	size int32
}

// proportionalSizes spreads a change of the Deployment's size over its active
// ReplicaSets in proportion to the size each was given for the previous Deployment
// size (the max-replicas annotation), so a rollout in progress keeps its old/new ratio.
// Rounding leftovers go to the largest; when growing, ties favour the newer ReplicaSet,
// when shrinking, the older one gives first.
func proportionalSizes(d *object.Deployment, rss []*object.ReplicaSet) []sized {
	rss = slices.Clone(rss)
	allowed := int32(0)
	if replicasOf(d) > 0 {
		allowed = replicasOf(d) + maxSurge(d)
	}
	toAdd := allowed - sumSpec(rss)
	switch {
	case toAdd > 0:
		slices.SortStableFunc(rss, bySizeNewerFirst)
	case toAdd < 0:
		slices.SortStableFunc(rss, bySizeOlderFirst)
	}
	out := make([]sized, len(rss))
	added := int32(0)
	for i, rs := range rss {
		p := proportion(d, rs, toAdd, added)
		out[i] = sized{rs: rs, size: rsReplicas(rs) + p}
		added += p
	}
	if len(out) > 0 && toAdd != 0 {
		out[0].size = max(0, out[0].size+toAdd-added)
	}
	return out
}

// proportion is how many replicas rs gains (or loses) of toAdd, never more than what is
// left to distribute.
func proportion(d *object.Deployment, rs *object.ReplicaSet, toAdd, added int32) int32 {
	if rsReplicas(rs) == 0 || toAdd == 0 || toAdd == added {
		return 0
	}
	f := fraction(d, rs)
	left := toAdd - added
	if toAdd > 0 {
		return min(f, left)
	}
	return max(f, left)
}

// fraction is rs's share of the Deployment's new size minus its current size.
func fraction(d *object.Deployment, rs *object.ReplicaSet) int32 {
	if replicasOf(d) == 0 {
		return -rsReplicas(rs)
	}
	total := replicasOf(d) + maxSurge(d)
	annotated, ok := intAnnotation(rs, MaxReplicasAnnotation)
	if !ok || annotated == 0 {
		annotated = d.Status.Replicas // no record of the old size: the best guess there is
	}
	if annotated == 0 {
		return 0
	}
	size := float64(rsReplicas(rs)*total) / float64(annotated)
	return int32(math.Round(size)) - rsReplicas(rs)
}

// activeOrLatest returns the only active ReplicaSet, or the newest when none is active,
// or nil when several are active.
func activeOrLatest(newRS *object.ReplicaSet, olds []*object.ReplicaSet) *object.ReplicaSet {
	if newRS == nil && len(olds) == 0 {
		return nil
	}
	acts := active(withNew(olds, newRS))
	switch len(acts) {
	case 0:
		if newRS != nil {
			return newRS
		}
		newest := slices.MaxFunc(olds, byAge)
		return newest
	case 1:
		return acts[0]
	}
	return nil
}

// saturated: the new ReplicaSet runs the whole Deployment, available.
func saturated(d *object.Deployment, rs *object.ReplicaSet) bool {
	if rs == nil {
		return false
	}
	desired, ok := intAnnotation(rs, DesiredReplicasAnnotation)
	return ok && desired == replicasOf(d) && rsReplicas(rs) == replicasOf(d) && rs.Status.AvailableReplicas == replicasOf(d)
}

// scaleRS sets a ReplicaSet's size (and the replica annotations that record for what
// Deployment size it was set), with its resourceVersion as precondition, and records a
// ScalingReplicaSet event. It returns whether the size changed and the ReplicaSet as
// written; rs itself is never changed (it is the informer's, shared and read-only), and
// neither are the rollout's new and old ReplicaSets: like kube-controller-manager, a
// step goes on with the sizes it started from.
func (r *rollout) scaleRS(rs *object.ReplicaSet, size int32) (bool, *object.ReplicaSet, error) {
	d := r.d
	a := maps.Clone(rs.Annotations)
	if a == nil {
		a = map[string]string{}
	}
	annotationsChanged := setReplicasAnnotations(a, replicasOf(d), replicasOf(d)+maxSurge(d))
	from := rsReplicas(rs)
	if from == size && !annotationsChanged {
		return false, rs, nil
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": rs.ResourceVersion,
			"annotations": map[string]string{DesiredReplicasAnnotation: a[DesiredReplicasAnnotation], MaxReplicasAnnotation: a[MaxReplicasAnnotation]}},
		"spec": map[string]any{"replicas": size},
	})
	if err != nil {
		return false, nil, err
	}
	updated, err := r.dc.w.patchRS(r.ctx, rs.Namespace, rs.Name, patch)
	if err != nil {
		return false, nil, err
	}
	if from == size {
		return false, updated, nil
	}
	op := "down"
	if from < size {
		op = "up"
	}
	r.dc.Event(d, events.Normal, "ScalingReplicaSet", "Scaled %s replica set %s from %d to %d", op, rs.Name, from, size)
	return true, updated, nil
}

// setReplicasAnnotations records for what Deployment size (and surge) a ReplicaSet was
// sized: proportional scaling reads it back.
func setReplicasAnnotations(a map[string]string, desired, maxReplicas int32) bool {
	ds, ms := strconv.Itoa(int(desired)), strconv.Itoa(int(maxReplicas))
	if a[DesiredReplicasAnnotation] == ds && a[MaxReplicasAnnotation] == ms {
		return false
	}
	a[DesiredReplicasAnnotation], a[MaxReplicasAnnotation] = ds, ms
	return true
}
