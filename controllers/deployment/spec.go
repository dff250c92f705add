package deployment

import (
	"fmt"
	"strconv"

	"github.com/kinformer/kinformer/object"
)

// The annotations the controller reads and writes, as kube-controller-manager names them.
const (
	RevisionAnnotation        = "deployment.kubernetes.io/revision"
	RevisionHistoryAnnotation = "deployment.kubernetes.io/revision-history"
	DesiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
	MaxReplicasAnnotation     = "deployment.kubernetes.io/max-replicas"
	// PodTemplateHashLabel tells the ReplicaSets (and their pods) of one Deployment apart.
	PodTemplateHashLabel = "pod-template-hash"
)

// The API's defaults, applied here too because the simulator does not default.
const (
	defaultRevisionHistoryLimit    = 10
	defaultProgressDeadlineSeconds = 600
)

// maxRevisionHistoryChars bounds the revision-history annotation.
const maxRevisionHistoryChars = 2000

func replicasOf(d *object.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

func rsReplicas(rs *object.ReplicaSet) int32 {
	if rs == nil || rs.Spec.Replicas == nil {
		return 0
	}
	return *rs.Spec.Replicas
}

func isRecreate(d *object.Deployment) bool {
	return d.Spec.Strategy.Type == object.RecreateDeploymentStrategy
}

func revisionHistoryLimit(d *object.Deployment) int32 {
	if d.Spec.RevisionHistoryLimit == nil {
		return defaultRevisionHistoryLimit
	}
	return *d.Spec.RevisionHistoryLimit
}

func progressDeadline(d *object.Deployment) int32 {
	if d.Spec.ProgressDeadlineSeconds == nil {
		return defaultProgressDeadlineSeconds
	}
	return *d.Spec.ProgressDeadlineSeconds
}

// hasProgressDeadline: the API writes the "no deadline" choice as MaxInt32.
func hasProgressDeadline(d *object.Deployment) bool { return progressDeadline(d) != 1<<31-1 }

// fenceposts resolves maxSurge (rounded up) and maxUnavailable (rounded down) against
// the desired replicas. Both resolving to zero would forbid any progress, so
// maxUnavailable then becomes 1, as kube-controller-manager does; explicit zeros for both
// are invalid (the apiserver refuses them), and invalid reports that.
func fenceposts(d *object.Deployment) (surge, unavailable int32, invalid error) {
	if isRecreate(d) {
		return 0, 0, nil
	}
	pct25 := object.FromString("25%")
	maxSurge, maxUnavailable := &pct25, &pct25
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil {
		if ru.MaxSurge != nil {
			maxSurge = ru.MaxSurge
		}
		if ru.MaxUnavailable != nil {
			maxUnavailable = ru.MaxUnavailable
		}
	}
	desired := int(replicasOf(d))
	s, err := maxSurge.Scaled(desired, true)
	if err != nil {
		return 0, 1, fmt.Errorf("spec.strategy.rollingUpdate.maxSurge: %w", err)
	}
	u, err := maxUnavailable.Scaled(desired, false)
	if err != nil {
		return 0, 1, fmt.Errorf("spec.strategy.rollingUpdate.maxUnavailable: %w", err)
	}
	if s == 0 && u == 0 {
		if isZero(maxSurge) && isZero(maxUnavailable) {
			invalid = fmt.Errorf("spec.strategy.rollingUpdate: maxSurge and maxUnavailable may not both be 0")
		}
		u = 1
	}
	return int32(s), int32(u), invalid
}

func isZero(v *object.IntOrString) bool {
	return !v.IsString && v.Int == 0 || v.IsString && (v.Str == "0%" || v.Str == "0")
}

// maxSurge is how many pods above the desired count a rolling update may run.
func maxSurge(d *object.Deployment) int32 {
	s, _, _ := fenceposts(d)
	return s
}

// maxUnavailable is how many desired pods may be unavailable during a rolling update.
func maxUnavailable(d *object.Deployment) int32 {
	if isRecreate(d) || replicasOf(d) == 0 {
		return 0
	}
	_, u, _ := fenceposts(d)
	return min(u, replicasOf(d))
}

func intAnnotation(rs *object.ReplicaSet, key string) (int32, bool) {
	v, ok := rs.Annotations[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(n), true
}
