package object

import "github.com/kinformer/kinformer/internal/codec"

// Deployment is an apps/v1 Deployment.
type Deployment struct {
	TypeMeta
	ObjectMeta `json:"metadata" pb:"1"`
	Spec       DeploymentSpec   `json:"spec" pb:"2"`
	Status     DeploymentStatus `json:"status" pb:"3"`

	Unknown Unknown `json:"-"`
}

// DeploymentSpec is the desired state of a Deployment.
type DeploymentSpec struct {
	Replicas                *int32             `json:"replicas,omitempty" pb:"1"`
	Selector                *LabelSelector     `json:"selector,omitempty" pb:"2"`
	Template                PodTemplateSpec    `json:"template" pb:"3"`
	Strategy                DeploymentStrategy `json:"strategy,omitzero" pb:"4"`
	MinReadySeconds         int32              `json:"minReadySeconds,omitempty" pb:"5"`
	RevisionHistoryLimit    *int32             `json:"revisionHistoryLimit,omitempty" pb:"6"`
	Paused                  bool               `json:"paused,omitempty" pb:"7"`
	ProgressDeadlineSeconds *int32             `json:"progressDeadlineSeconds,omitempty" pb:"9"`
	Unknown                 Unknown            `json:"-"`
}

// Deployment strategy types.
const (
	RecreateDeploymentStrategy      = "Recreate"
	RollingUpdateDeploymentStrategy = "RollingUpdate"
)

// DeploymentStrategy says how old pods are replaced by new ones.
type DeploymentStrategy struct {
	Type          string                   `json:"type,omitempty" pb:"1"`
	RollingUpdate *RollingUpdateDeployment `json:"rollingUpdate,omitempty" pb:"2"`
	Unknown       Unknown                  `json:"-"`
}

// IsZero lets an absent strategy stay absent on encode.
func (s DeploymentStrategy) IsZero() bool {
	return s.Type == "" && s.RollingUpdate == nil && s.Unknown.Len() == 0
}

// RollingUpdateDeployment bounds a rolling update.
type RollingUpdateDeployment struct {
	MaxUnavailable *IntOrString `json:"maxUnavailable,omitempty" pb:"1"`
	MaxSurge       *IntOrString `json:"maxSurge,omitempty" pb:"2"`
	Unknown        Unknown      `json:"-"`
}

// DeploymentStatus is what the Deployment controller reports.
type DeploymentStatus struct {
	ObservedGeneration  int64 `json:"observedGeneration,omitempty" pb:"1"`
	Replicas            int32 `json:"replicas,omitempty" pb:"2"`
	UpdatedReplicas     int32 `json:"updatedReplicas,omitempty" pb:"3"`
	ReadyReplicas       int32 `json:"readyReplicas,omitempty" pb:"7"`
	AvailableReplicas   int32 `json:"availableReplicas,omitempty" pb:"4"`
	UnavailableReplicas int32 `json:"unavailableReplicas,omitempty" pb:"5"`
	// TerminatingReplicas sums the ReplicaSets' (kube-controller-manager 1.35+).
	TerminatingReplicas *int32                `json:"terminatingReplicas,omitempty" pb:"9"`
	Conditions          []DeploymentCondition `json:"conditions,omitempty" pb:"6"`
	CollisionCount      *int32                `json:"collisionCount,omitempty" pb:"8"`
	Unknown             Unknown               `json:"-"`
}

// DeploymentCondition is a status condition of a Deployment (Progressing, Available,
// ReplicaFailure).
type DeploymentCondition struct {
	Type               string  `json:"type" pb:"1"`
	Status             string  `json:"status" pb:"2"`
	LastUpdateTime     Time    `json:"lastUpdateTime,omitzero" pb:"6"`
	LastTransitionTime Time    `json:"lastTransitionTime,omitzero" pb:"7"`
	Reason             string  `json:"reason,omitempty" pb:"4"`
	Message            string  `json:"message,omitempty" pb:"5"`
	Unknown            Unknown `json:"-"`
}

// MarshalJSON writes the modelled fields and every unknown member.
func (c DeploymentCondition) MarshalJSON() ([]byte, error) { return codec.Marshal(&c) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (c *DeploymentCondition) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, c) }

// MarshalJSON writes the modelled fields and every unknown member.
func (d Deployment) MarshalJSON() ([]byte, error) { return codec.Marshal(&d) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (d *Deployment) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, d) }

// MarshalJSON writes the modelled fields and every unknown member.
func (s DeploymentSpec) MarshalJSON() ([]byte, error) { return codec.Marshal(&s) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (s *DeploymentSpec) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, s) }

// MarshalJSON writes the modelled fields and every unknown member.
func (s DeploymentStrategy) MarshalJSON() ([]byte, error) { return codec.Marshal(&s) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (s *DeploymentStrategy) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, s) }

// MarshalJSON writes the modelled fields and every unknown member.
func (r RollingUpdateDeployment) MarshalJSON() ([]byte, error) { return codec.Marshal(&r) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (r *RollingUpdateDeployment) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, r) }

// MarshalJSON writes the modelled fields and every unknown member.
func (s DeploymentStatus) MarshalJSON() ([]byte, error) { return codec.Marshal(&s) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (s *DeploymentStatus) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, s) }
