package deployment

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/kinformer/kinformer/controllers"
	"github.com/kinformer/kinformer/object"
)

// calculateStatus derives the status from the ReplicaSets, keeping the conditions and
// setting Available from the availability budget.
func (r *rollout) calculateStatus(all []*object.ReplicaSet, newRS *object.ReplicaSet) object.DeploymentStatus {
	d := r.d
	available := sumAvailable(all)
	st := object.DeploymentStatus{
		ObservedGeneration:  d.Generation,
		Replicas:            sumStatus(all),
		UpdatedReplicas:     sumStatus([]*object.ReplicaSet{newRS}),
		ReadyReplicas:       sumReady(all),
		AvailableReplicas:   available,
		UnavailableReplicas: max(0, sumSpec(all)-available),
		TerminatingReplicas: sumTerminating(all),
		CollisionCount:      d.Status.CollisionCount,
		Conditions:          slices.Clone(d.Status.Conditions),
		Unknown:             d.Status.Unknown,
	}
	if available >= replicasOf(d)-maxUnavailable(d) {
		setCondition(&st, r.newCondition(condAvailable, "True", reasonMinAvailable, messageMinAvailable))
	} else {
		setCondition(&st, r.newCondition(condAvailable, "False", reasonMinUnavailable, messageMinUnavailable))
	}
	return st
}

// complete: every desired pod is updated and available, and the spec was observed.
func complete(d *object.Deployment, st *object.DeploymentStatus) bool {
	n := replicasOf(d)
	return st.UpdatedReplicas == n && st.Replicas == n && st.AvailableReplicas == n && st.ObservedGeneration >= d.Generation
}

// progressing: this sync saw progress since the status last written.
func progressing(d *object.Deployment, st *object.DeploymentStatus) bool {
	old := d.Status
	return st.UpdatedReplicas > old.UpdatedReplicas ||
		st.Replicas-st.UpdatedReplicas < old.Replicas-old.UpdatedReplicas ||
		st.ReadyReplicas > old.ReadyReplicas || st.AvailableReplicas > old.AvailableReplicas
}

// timedOut: no progress for progressDeadlineSeconds since the Progressing condition was
// last updated (by progress, a new ReplicaSet, or a resume).
func (r *rollout) timedOut(st *object.DeploymentStatus) bool {
	c := condition(st.Conditions, condProgressing)
	switch {
	case !hasProgressDeadline(r.d) || c == nil || c.Reason == reasonNewRSAvailable:
		return false
	case c.Reason == reasonTimedOut:
		return true
	}
	deadline := c.LastUpdateTime.Time().Add(time.Duration(progressDeadline(r.d)) * time.Second)
	return deadline.Before(r.dc.now())
}

// syncStatus writes the status computed from the ReplicaSets, when it changed.
func (r *rollout) syncStatus(all []*object.ReplicaSet, newRS *object.ReplicaSet) error {
	st := r.calculateStatus(all, newRS)
	if equalStatus(r.d.Status, st) {
		return nil
	}
	return r.dc.writeStatus(r.ctx, r.d, st)
}

// syncRolloutStatus is syncStatus during a rollout: it also moves the Progressing
// condition (progress, completion, deadline exceeded), copies a ReplicaSet's
// ReplicaFailure, and, when nothing changed, makes sure the Deployment is looked at again
// when its progress deadline passes.
func (r *rollout) syncRolloutStatus(all []*object.ReplicaSet, newRS *object.ReplicaSet) error {
	d := r.d
	st := r.calculateStatus(all, newRS)
	if !hasProgressDeadline(d) {
		removeCondition(&st, condProgressing)
	}
	cur := condition(d.Status.Conditions, condProgressing)
	done := st.Replicas == st.UpdatedReplicas && cur != nil && cur.Reason == reasonNewRSAvailable
	if hasProgressDeadline(d) && !done {
		subject := fmt.Sprintf("Deployment %q", d.Name)
		if newRS != nil {
			subject = fmt.Sprintf("ReplicaSet %q", newRS.Name)
		}
		switch {
		case complete(d, &st):
			setCondition(&st, r.newCondition(condProgressing, "True", reasonNewRSAvailable, subject+" has successfully progressed."))
		case progressing(d, &st):
			c := r.newCondition(condProgressing, "True", reasonRSUpdated, subject+" is progressing.")
			// Progress refreshes the update time even when status and reason stay, which
			// setCondition alone would not do: that time is what the deadline counts from.
			if cur != nil {
				if cur.Status == "True" {
					c.LastTransitionTime = cur.LastTransitionTime
				}
				removeCondition(&st, condProgressing)
			}
			setCondition(&st, c)
		case r.timedOut(&st):
			setCondition(&st, r.newCondition(condProgressing, "False", reasonTimedOut, subject+" has timed out progressing."))
		}
	}
	if failure := replicaFailure(all, newRS); failure != nil {
		setCondition(&st, *failure)
	} else {
		removeCondition(&st, condReplicaFailure)
	}
	if equalStatus(d.Status, st) {
		r.requeueAtDeadline(st)
		return nil
	}
	return r.dc.writeStatus(r.ctx, d, st)
}

// requeueAtDeadline looks at a rollout without progress again when its deadline passes:
// nothing else would wake it to report ProgressDeadlineExceeded.
func (r *rollout) requeueAtDeadline(st object.DeploymentStatus) {
	d := r.d
	cur := condition(d.Status.Conditions, condProgressing)
	if !hasProgressDeadline(d) || cur == nil || complete(d, &st) || cur.Reason == reasonTimedOut {
		return
	}
	after := cur.LastUpdateTime.Time().Add(time.Duration(progressDeadline(d)) * time.Second).Sub(r.dc.now())
	key := object.Key(d)
	if after < time.Second {
		r.dc.Queue().AddRateLimited(key)
		return
	}
	r.dc.Queue().AddAfter(key, after+time.Second)
}

// equalStatus compares the fields of a status the controller owns.
func equalStatus(a, b object.DeploymentStatus) bool {
	return a.ObservedGeneration == b.ObservedGeneration && a.Replicas == b.Replicas &&
		a.UpdatedReplicas == b.UpdatedReplicas && a.ReadyReplicas == b.ReadyReplicas &&
		a.AvailableReplicas == b.AvailableReplicas && a.UnavailableReplicas == b.UnavailableReplicas &&
		equalPtr(a.TerminatingReplicas, b.TerminatingReplicas) && equalPtr(a.CollisionCount, b.CollisionCount) &&
		slices.EqualFunc(a.Conditions, b.Conditions, func(x, y object.DeploymentCondition) bool {
			return x.Type == y.Type && x.Status == y.Status && x.Reason == y.Reason && x.Message == y.Message &&
				x.LastUpdateTime.Equal(y.LastUpdateTime) && x.LastTransitionTime.Equal(y.LastTransitionTime)
		})
}

func equalPtr(a, b *int32) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// writeStatus patches the Deployment's /status with the fields the controller owns, and
// records the written status as the rollout's own for the rest of the sync.
func (dc *Controller) writeStatus(ctx context.Context, d *object.Deployment, st object.DeploymentStatus) error {
	body := map[string]any{
		"observedGeneration": st.ObservedGeneration, "replicas": st.Replicas, "updatedReplicas": st.UpdatedReplicas,
		"readyReplicas": st.ReadyReplicas, "availableReplicas": st.AvailableReplicas,
		"unavailableReplicas": st.UnavailableReplicas, "conditions": st.Conditions,
	}
	if st.TerminatingReplicas != nil {
		body["terminatingReplicas"] = *st.TerminatingReplicas
	}
	if st.CollisionCount != nil {
		body["collisionCount"] = *st.CollisionCount
	}
	if len(st.Conditions) == 0 {
		body["conditions"] = nil
	}
	// Conditional on the resourceVersion read, as kube-controller-manager's UpdateStatus
	// is: a write that lands late (a process frozen mid-request, whose namespace another
	// member has taken since) fails with a conflict instead of overwriting.
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": d.ResourceVersion}, "status": body})
	if err != nil {
		return err
	}
	if err := dc.w.patchDeployment(ctx, d, "status", patch); err != nil {
		return fmt.Errorf("updating the status of %s: %w", object.Key(d), controllers.OutdatedIfConflict(resourceDeployments, err))
	}
	d.Status = st
	return nil
}
