package replicaset

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/kinformer/kinformer/controllers"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// conditionReplicaFailure is set while pods cannot be created or deleted.
const conditionReplicaFailure = "ReplicaFailure"

// calculateStatus derives the status from the owned active pods, and returns how long
// until the next ready pod becomes available (0: none is waiting).
func (rc *Controller) calculateStatus(rs *object.ReplicaSet, pods, terminating []*object.Pod, manageErr error) (object.ReplicaSetStatus, time.Duration) {
	now := rc.now()
	st := object.ReplicaSetStatus{Replicas: int32(len(pods)), ObservedGeneration: rs.Generation}
	var next time.Duration
	for _, p := range pods {
		if fullyLabeled(p, rs.Spec.Template.Labels) {
			st.FullyLabeledReplicas++
		}
		if p.IsReady() {
			st.ReadyReplicas++
		}
		available, wait := availableIn(p, rs.Spec.MinReadySeconds, now)
		if available {
			st.AvailableReplicas++
		} else if wait > 0 && (next == 0 || wait < next) {
			next = wait
		}
	}
	n := int32(len(terminating))
	st.TerminatingReplicas = &n

	st.Conditions = slices.Clone(rs.Status.Conditions)
	failure := slices.IndexFunc(st.Conditions, func(c object.ReplicaSetCondition) bool { return c.Type == conditionReplicaFailure })
	switch {
	case manageErr != nil && failure < 0:
		reason := "FailedDelete"
		if len(pods) < int(replicas(rs)) {
			reason = "FailedCreate"
		}
		st.Conditions = append(st.Conditions, object.ReplicaSetCondition{Type: conditionReplicaFailure, Status: "True",
			LastTransitionTime: object.NewTime(now.UTC().Truncate(time.Second)), Reason: reason, Message: manageErr.Error()})
	case manageErr == nil && failure >= 0:
		st.Conditions = slices.Delete(st.Conditions, failure, failure+1)
	}
	if next > 0 {
		next += 100 * time.Millisecond // land just after the moment, not just before it
	}
	return st, next
}

// writeStatus patches /status when anything the controller owns changed. Fields it does
// not model stay as they are: the patch names only its own.
func (rc *Controller) writeStatus(ctx context.Context, rs *object.ReplicaSet, st object.ReplicaSetStatus) error {
	cur := rs.Status
	if cur.Replicas == st.Replicas && cur.FullyLabeledReplicas == st.FullyLabeledReplicas &&
		cur.ReadyReplicas == st.ReadyReplicas && cur.AvailableReplicas == st.AvailableReplicas &&
		equalPtr(cur.TerminatingReplicas, st.TerminatingReplicas) && cur.ObservedGeneration == st.ObservedGeneration &&
		slices.EqualFunc(cur.Conditions, st.Conditions, sameCondition) {
		return nil
	}
	body := map[string]any{
		"replicas": st.Replicas, "fullyLabeledReplicas": st.FullyLabeledReplicas,
		"readyReplicas": st.ReadyReplicas, "availableReplicas": st.AvailableReplicas,
		"terminatingReplicas": st.TerminatingReplicas, "observedGeneration": st.ObservedGeneration,
		"conditions": st.Conditions,
	}
	if len(st.Conditions) == 0 {
		body["conditions"] = nil // removes the member
	}
	// Conditional on the resourceVersion read, as kube-controller-manager's UpdateStatus
	// is: a write that lands late (a process frozen mid-request, whose namespace another
	// member has taken since) fails with a conflict instead of overwriting.
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": rs.ResourceVersion}, "status": body})
	if err != nil {
		return err
	}
	written, err := rc.replicaSetsIn(rs.Namespace).Patch(ctx, rs.Name, listwatch.MergePatch, patch, "status")
	if err != nil {
		return fmt.Errorf("updating the status of %s: %w", object.Key(rs), controllers.OutdatedIfConflict(resourceReplicaSets, err))
	}
	rc.wrote(rs, resourceReplicaSets, written.ResourceVersion)
	return nil
}

func equalPtr(a, b *int32) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func sameCondition(a, b object.ReplicaSetCondition) bool {
	return a.Type == b.Type && a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message &&
		a.LastTransitionTime.Equal(b.LastTransitionTime)
}
