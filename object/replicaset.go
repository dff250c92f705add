package object

import "github.com/kinformer/kinformer/internal/codec"

// ReplicaSet is an apps/v1 ReplicaSet.
type ReplicaSet struct {
	TypeMeta
	ObjectMeta `json:"metadata" pb:"1"`
	Spec       ReplicaSetSpec   `json:"spec" pb:"2"`
	Status     ReplicaSetStatus `json:"status" pb:"3"`

	Unknown Unknown `json:"-"`
}

// ReplicaSetSpec is the desired state of a ReplicaSet.
type ReplicaSetSpec struct {
	Replicas        *int32          `json:"replicas,omitempty" pb:"1"`
	MinReadySeconds int32           `json:"minReadySeconds,omitempty" pb:"4"`
	Selector        *LabelSelector  `json:"selector,omitempty" pb:"2"`
	Template        PodTemplateSpec `json:"template" pb:"3"`
	Unknown         Unknown         `json:"-"`
}

// ReplicaSetStatus is what the ReplicaSet controller reports.
type ReplicaSetStatus struct {
	Replicas             int32 `json:"replicas" pb:"1"`
	FullyLabeledReplicas int32 `json:"fullyLabeledReplicas,omitempty" pb:"2"`
	ReadyReplicas        int32 `json:"readyReplicas,omitempty" pb:"4"`
	AvailableReplicas    int32 `json:"availableReplicas,omitempty" pb:"5"`
	// TerminatingReplicas counts owned pods being deleted (kube-controller-manager 1.35+
	// writes it; nil where the server does not know the field).
	TerminatingReplicas *int32                `json:"terminatingReplicas,omitempty" pb:"7"`
	ObservedGeneration  int64                 `json:"observedGeneration,omitempty" pb:"3"`
	Conditions          []ReplicaSetCondition `json:"conditions,omitempty" pb:"6"`
	Unknown             Unknown               `json:"-"`
}

// ReplicaSetCondition is a status condition of a ReplicaSet (ReplicaFailure). It is
// DeploymentCondition without lastUpdateTime, and a type of its own because protobuf
// numbers the fields of the two differently.
type ReplicaSetCondition struct {
	Type               string  `json:"type" pb:"1"`
	Status             string  `json:"status" pb:"2"`
	LastTransitionTime Time    `json:"lastTransitionTime,omitzero" pb:"3"`
	Reason             string  `json:"reason,omitempty" pb:"4"`
	Message            string  `json:"message,omitempty" pb:"5"`
	Unknown            Unknown `json:"-"`
}

// MarshalJSON writes the modelled fields and every unknown member.
func (r ReplicaSet) MarshalJSON() ([]byte, error) { return codec.Marshal(&r) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (r *ReplicaSet) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, r) }

// MarshalJSON writes the modelled fields and every unknown member.
func (s ReplicaSetSpec) MarshalJSON() ([]byte, error) { return codec.Marshal(&s) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (s *ReplicaSetSpec) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, s) }

// MarshalJSON writes the modelled fields and every unknown member.
func (s ReplicaSetStatus) MarshalJSON() ([]byte, error) { return codec.Marshal(&s) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (s *ReplicaSetStatus) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, s) }

// MarshalJSON writes the modelled fields and every unknown member.
func (c ReplicaSetCondition) MarshalJSON() ([]byte, error) { return codec.Marshal(&c) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (c *ReplicaSetCondition) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, c) }
