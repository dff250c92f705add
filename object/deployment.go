package object

import "github.com/kinformer/kinformer/internal/codec"

// Deployment is an apps/v1 Deployment.
type Deployment struct {
	TypeMeta
	ObjectMeta `json:"metadata"`
	Spec       DeploymentSpec   `json:"spec"`
	Status     DeploymentStatus `json:"status"`

	Unknown Unknown `json:"-"`
}

// DeploymentSpec is the desired state of a Deployment.
type DeploymentSpec struct {
	Replicas                *int32             `json:"replicas,omitempty"`
	Selector                *LabelSelector     `json:"selector,omitempty"`
	Template                PodTemplateSpec    `json:"template"`
	Strategy                DeploymentStrategy `json:"strategy,omitzero"`
	MinReadySeconds         int32              `json:"minReadySeconds,omitempty"`
	RevisionHistoryLimit    *int32             `json:"revisionHistoryLimit,omitempty"`
	Paused                  bool               `json:"paused,omitempty"`
	ProgressDeadlineSeconds *int32             `json:"progressDeadlineSeconds,omitempty"`
	Unknown                 Unknown            `json:"-"`
}

// Deployment strategy types.
const (
	RecreateDeploymentStrategy      = "Recreate"
	RollingUpdateDeploymentStrategy = "RollingUpdate"
)

// DeploymentStrategy says how old pods are replaced by new ones.
type DeploymentStrategy struct {
	Type          string                   `json:"type,omitempty"`
	RollingUpdate *RollingUpdateDeployment `json:"rollingUpdate,omitempty"`
	Unknown       Unknown                  `json:"-"`
}

// IsZero lets an absent strategy stay absent on encode.
func (s DeploymentStrategy) IsZero() bool {
	return s.Type == "" && s.RollingUpdate == nil && s.Unknown.Len() == 0
}

// RollingUpdateDeployment bounds a rolling update.
type RollingUpdateDeployment struct {
	MaxUnavailable *IntOrString `json:"maxUnavailable,omitempty"`
	MaxSurge       *IntOrString `json:"maxSurge,omitempty"`
	Unknown        Unknown      `json:"-"`
}

// DeploymentStatus is what the Deployment controller reports.
type DeploymentStatus struct {
	ObservedGeneration  int64 `json:"observedGeneration,omitempty"`
	Replicas            int32 `json:"replicas,omitempty"`
	UpdatedReplicas     int32 `json:"updatedReplicas,omitempty"`
	ReadyReplicas       int32 `json:"readyReplicas,omitempty"`
	AvailableReplicas   int32 `json:"availableReplicas,omitempty"`
	UnavailableReplicas int32 `json:"unavailableReplicas,omitempty"`
	// TerminatingReplicas sums the ReplicaSets' (kube-controller-manager 1.35+).
	TerminatingReplicas *int32      `json:"terminatingReplicas,omitempty"`
	Conditions          []Condition `json:"conditions,omitempty"`
	CollisionCount      *int32      `json:"collisionCount,omitempty"`
	Unknown             Unknown     `json:"-"`
}

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
