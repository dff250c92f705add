package object

import (
	"encoding/json"

	"github.com/kinformer/kinformer/internal/codec"
)

// Pod is a core/v1 Pod with the fields the controllers read; the rest of its spec and
// status is carried unchanged in the Unknown members.
type Pod struct {
	TypeMeta
	ObjectMeta `json:"metadata"`
	Spec       PodSpec   `json:"spec"`
	Status     PodStatus `json:"status"`

	Unknown Unknown `json:"-"`
}

// PodSpec models the node the pod is bound to, and its volumes and containers down to
// their names, images and mounts; the rest (probes, env, resources, tolerations, ...)
// stays raw in the Unknown members of each part.
//
// The parts are typed for the cache's sake as much as for readers: the pods of one
// ReplicaSet differ in their spec only by the name of their service-account volume
// (kube-api-access-xxxxx), in the volume and in each container's mounts. With the names
// in fields of their own, everything else in a container and a volume is the same bytes
// from pod to pod, which an informer's cache holds once (see DecodeOptions.Maps).
type PodSpec struct {
	NodeName       string      `json:"nodeName,omitempty"`
	Volumes        []Volume    `json:"volumes,omitempty"`
	InitContainers []Container `json:"initContainers,omitempty"`
	Containers     []Container `json:"containers,omitempty"`
	Unknown        Unknown     `json:"-"`
}

// PodPhase is the coarse lifecycle state of a pod.
type PodPhase string

// Pod phases.
const (
	PodPending   PodPhase = "Pending"
	PodRunning   PodPhase = "Running"
	PodSucceeded PodPhase = "Succeeded"
	PodFailed    PodPhase = "Failed"
	PodUnknown   PodPhase = "Unknown"
)

// PodStatus models the phase, the conditions and the containers' restart counts (the
// ReplicaSet controller ranks pods by them).
type PodStatus struct {
	Phase             PodPhase          `json:"phase,omitempty"`
	Conditions        []PodCondition    `json:"conditions,omitempty"`
	ContainerStatuses []ContainerStatus `json:"containerStatuses,omitempty"`
	Unknown           Unknown           `json:"-"`
}

// ContainerStatus is one entry of status.containerStatuses. The API always writes ready
// and restartCount, so they are never omitted. The parts that differ from pod to pod
// (the container's ID and state, and the mounts, which name the pod's own
// service-account volume) are fields, so that what is left in Unknown (image, imageID,
// resources, user, started, ...) is the same in every pod of a ReplicaSet, and a cache
// holds it once. State and LastState are always written, as the apiserver writes
// them ({} for none).
type ContainerStatus struct {
	Name         string         `json:"name"`
	Ready        bool           `json:"ready"`
	RestartCount int32          `json:"restartCount"`
	ContainerID  string         `json:"containerID,omitempty"`
	State        ContainerState `json:"state"`
	LastState    ContainerState `json:"lastState"`
	VolumeMounts []VolumeMount  `json:"volumeMounts,omitempty"`
	Unknown      Unknown        `json:"-"`
}

// PodCondition is one entry of status.conditions (Ready, PodScheduled, ...). Its reason
// and message, set only while a condition is not met, stay raw (Reason and Message read
// them): every pod has five conditions, and two string fields each would be 160 bytes a
// pod in a cache.
type PodCondition struct {
	Type               string  `json:"type"`
	Status             string  `json:"status"`
	LastTransitionTime Time    `json:"lastTransitionTime,omitzero"`
	Unknown            Unknown `json:"-"`
}

// Reason returns the condition's reason ("" if it has none).
func (c PodCondition) Reason() string { return c.Unknown.stringMember("reason") }

// Message returns the condition's message ("" if it has none).
func (c PodCondition) Message() string { return c.Unknown.stringMember("message") }

// Condition returns the pod condition of the given type, or nil.
func (p *Pod) Condition(t string) *PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// IsReady reports whether the pod's Ready condition is True.
func (p *Pod) IsReady() bool {
	c := p.Condition("Ready")
	return c != nil && c.Status == "True"
}

// MarshalJSON writes the modelled fields and every unknown member.
func (p Pod) MarshalJSON() ([]byte, error) { return codec.Marshal(&p) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (p *Pod) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, p) }

// MarshalJSON writes the modelled fields and every unknown member.
func (s PodSpec) MarshalJSON() ([]byte, error) { return codec.Marshal(&s) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (s *PodSpec) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, s) }

// MarshalJSON writes the modelled fields and every unknown member.
func (s PodStatus) MarshalJSON() ([]byte, error) { return codec.Marshal(&s) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (s *PodStatus) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, s) }

// MarshalJSON writes the modelled fields and every unknown member.
func (c PodCondition) MarshalJSON() ([]byte, error) { return codec.Marshal(&c) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (c *PodCondition) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, c) }

// MarshalJSON writes the modelled fields and every unknown member.
func (c ContainerStatus) MarshalJSON() ([]byte, error) { return codec.Marshal(&c) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (c *ContainerStatus) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, c) }

// PodTemplateSpec is the pod template inside a ReplicaSet or Deployment. Its spec is kept
// as raw JSON: controllers copy it, compare it and hash it, but never read into it.
type PodTemplateSpec struct {
	ObjectMeta `json:"metadata"`
	Spec       json.RawMessage `json:"spec,omitempty"`
	Unknown    Unknown         `json:"-"`
}

// MarshalJSON writes the modelled fields and every unknown member.
func (t PodTemplateSpec) MarshalJSON() ([]byte, error) { return codec.Marshal(&t) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (t *PodTemplateSpec) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, t) }
