package deployment

import (
	"slices"
	"time"

	"github.com/kinformer/kinformer/object"
)

// Condition types and reasons, as kube-controller-manager writes them and `kubectl
// rollout status` reads them.
const (
	condProgressing    = "Progressing"
	condAvailable      = "Available"
	condReplicaFailure = "ReplicaFailure"

	reasonNewRSCreated      = "NewReplicaSetCreated"
	reasonFoundNewRS        = "FoundNewReplicaSet"
	reasonRSUpdated         = "ReplicaSetUpdated"
	reasonNewRSAvailable    = "NewReplicaSetAvailable"
	reasonTimedOut          = "ProgressDeadlineExceeded"
	reasonPaused            = "DeploymentPaused"
	reasonResumed           = "DeploymentResumed"
	reasonFailedRSCreate    = "ReplicaSetCreateError"
	reasonMinAvailable      = "MinimumReplicasAvailable"
	reasonMinUnavailable    = "MinimumReplicasUnavailable"
	messageMinAvailable     = "Deployment has minimum availability."
	messageMinUnavailable   = "Deployment does not have minimum availability."
	conditionTimeResolution = time.Second
)

func condition(conds []object.DeploymentCondition, typ string) *object.DeploymentCondition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

func (r *rollout) newCondition(typ, status, reason, message string) object.DeploymentCondition {
	now := object.NewTime(r.dc.now().UTC().Truncate(conditionTimeResolution))
	return object.DeploymentCondition{Type: typ, Status: status, Reason: reason, Message: message, LastUpdateTime: now, LastTransitionTime: now}
}

// setCondition sets c unless a condition of its type already has its status and reason
// (then nothing changes, not even the update time); a condition whose status stays keeps
// its lastTransitionTime.
func setCondition(st *object.DeploymentStatus, c object.DeploymentCondition) {
	cur := condition(st.Conditions, c.Type)
	if cur != nil && cur.Status == c.Status && cur.Reason == c.Reason {
		return
	}
	if cur != nil && cur.Status == c.Status {
		c.LastTransitionTime = cur.LastTransitionTime
	}
	removeCondition(st, c.Type)
	st.Conditions = append(st.Conditions, c)
}

func removeCondition(st *object.DeploymentStatus, typ string) {
	st.Conditions = slices.DeleteFunc(slices.Clone(st.Conditions), func(c object.DeploymentCondition) bool { return c.Type == typ })
}

// replicaFailure turns the first ReplicaSet ReplicaFailure (the new one's first) into
// the Deployment's.
func replicaFailure(all []*object.ReplicaSet, newRS *object.ReplicaSet) *object.DeploymentCondition {
	from := func(rs *object.ReplicaSet) *object.DeploymentCondition {
		for _, c := range rs.Status.Conditions {
			if c.Type == condReplicaFailure && c.Status == "True" {
				return &object.DeploymentCondition{Type: condReplicaFailure, Status: c.Status, Reason: c.Reason, Message: c.Message,
					LastUpdateTime: c.LastTransitionTime, LastTransitionTime: c.LastTransitionTime}
			}
		}
		return nil
	}
	if newRS != nil {
		if c := from(newRS); c != nil {
			return c
		}
	}
	for _, rs := range all {
		if rs != newRS {
			if c := from(rs); c != nil {
				return c
			}
		}
	}
	return nil
}
