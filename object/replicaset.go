package object

import "github.com/kinformer/kinformer/internal/codec"

// ReplicaSet is an apps/v1 ReplicaSet.
type ReplicaSet struct {
	TypeMeta
	ObjectMeta `json:"metadata"`
	Spec       ReplicaSetSpec   `json:"spec"`
	Status     ReplicaSetStatus `json:"status"`

	Unknown Unknown `json:"-"`
}

// ReplicaSetSpec is the desired state of a ReplicaSet.
type ReplicaSetSpec struct {
	Replicas        *int32          `json:"replicas,omitempty"`
	MinReadySeconds int32           `json:"minReadySeconds,omitempty"`
	Selector        *LabelSelector  `json:"selector,omitempty"`
	Template        PodTemplateSpec `json:"template"`
	Unknown         Unknown         `json:"-"`
}

// ReplicaSetStatus is what the ReplicaSet controller reports.
type ReplicaSetStatus struct {
	Replicas             int32 `json:"replicas"`
	FullyLabeledReplicas int32 `json:"fullyLabeledReplicas,omitempty"`
	ReadyReplicas        int32 `json:"readyReplicas,omitempty"`
	AvailableReplicas    int32 `json:"availableReplicas,omitempty"`
	// TerminatingReplicas counts owned pods being deleted (kube-controller-manager 1.35+
	// writes it; nil where the server does not know the field).
	TerminatingReplicas *int32      `json:"terminatingReplicas,omitempty"`
	ObservedGeneration  int64       `json:"observedGeneration,omitempty"`
	Conditions          []Condition `json:"conditions,omitempty"`
	Unknown             Unknown     `json:"-"`
}

// Condition is a status condition of a workload (ReplicaFailure, Progressing, Available).
type Condition struct {
	Type               string  `json:"type"`
	Status             string  `json:"status"`
	LastUpdateTime     Time    `json:"lastUpdateTime,omitzero"`
	LastTransitionTime Time    `json:"lastTransitionTime,omitzero"`
	Reason             string  `json:"reason,omitempty"`
	Message            string  `json:"message,omitempty"`
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
func (c Condition) MarshalJSON() ([]byte, error) { return codec.Marshal(&c) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (c *Condition) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, c) }
