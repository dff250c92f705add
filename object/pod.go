package object

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/kinformer/kinformer/internal/codec"
)

// Pod is a core/v1 Pod with the fields the controllers read; the rest of its spec and
// status is carried unchanged in the Unknown members.
type Pod struct {
	TypeMeta
	ObjectMeta `json:"metadata" pb:"1"`
	Spec       PodSpec   `json:"spec" pb:"2"`
	Status     PodStatus `json:"status" pb:"3"`

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
	NodeName       string      `json:"nodeName,omitempty" pb:"10"`
	Volumes        []Volume    `json:"volumes,omitempty" pb:"1"`
	InitContainers []Container `json:"initContainers,omitempty" pb:"20"`
	Containers     []Container `json:"containers,omitempty" pb:"2"`
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
	Phase             PodPhase          `json:"phase,omitempty" pb:"1"`
	Conditions        []PodCondition    `json:"conditions,omitempty" pb:"2"`
	ContainerStatuses []ContainerStatus `json:"containerStatuses,omitempty" pb:"8"`
	Unknown           Unknown           `json:"-"`
}

// ContainerStatus is one entry of status.containerStatuses. Its fields are what differs
// from pod to pod: the container's ID, its state, its restart count, and its mounts
// (they name the pod's own service-account volume). The rest (its name, whether it is
// ready, its last state, and image, imageID, resources, started, ... raw) is the same in
// most pods of a ReplicaSet, and is held behind a pointer that a cache shares between
// them, as a PodCondition's state is: read it with the methods, change it by making a
// new status (NewContainerStatus, With). State is always written, as the apiserver
// writes it ({} for none), and so are ready, restartCount and lastState.
type ContainerStatus struct {
	shared       *containerStatusShared
	ContainerID  string         `json:"containerID,omitempty" pb:"8"`
	State        ContainerState `json:"state" pb:"2"`
	VolumeMounts []VolumeMount  `json:"volumeMounts,omitempty" pb:"12"`
	RestartCount int32          `json:"restartCount" pb:"5"`
}

// containerStatusShared is what the statuses of one container in many pods have alike.
type containerStatusShared struct {
	Name      string         `json:"name" pb:"1"`
	Ready     bool           `json:"ready" pb:"4"`
	LastState ContainerState `json:"lastState" pb:"3"`
	Unknown   Unknown        `json:"-"`
}

// NewContainerStatus returns the status of the container name, ready or not.
func NewContainerStatus(name string, ready bool) ContainerStatus {
	return ContainerStatus{shared: &containerStatusShared{Name: name, Ready: ready}}
}

// Name returns the container's name.
func (c ContainerStatus) Name() string { return deref(c.shared).Name }

// Ready reports whether the container passes its readiness probe.
func (c ContainerStatus) Ready() bool { return deref(c.shared).Ready }

// LastState returns what the container last did before it restarted (none if it never
// did): a copy, since many pods' statuses may share it.
func (c ContainerStatus) LastState() ContainerState { return deref(c.shared).LastState.clone() }

// Unknown returns the members no field or method reads (image, imageID, started, ...).
func (c ContainerStatus) Unknown() Unknown { return deref(c.shared).Unknown }

// With returns a copy of c whose member name (image, started, ...) is value; c, and
// every status that shares its part, is left as it was. Like Unknown.Set, it panics on a
// status read in protobuf, whose other members are protobuf fields a JSON member cannot
// join (read with listwatch.EncodingJSON to set members by name).
func (c ContainerStatus) With(name string, value json.RawMessage) ContainerStatus {
	c.shared = withMember(c.shared, func(s *containerStatusShared) *Unknown { return &s.Unknown }, name, value)
	return c
}

// WithLastState returns a copy of c whose last state is last.
func (c ContainerStatus) WithLastState(last ContainerState) ContainerStatus {
	s := deref(c.shared)
	s.LastState = last
	c.shared = &s
	return c
}

// Equal reports whether c and d hold the same fields and members (go-cmp calls it).
func (c ContainerStatus) Equal(d ContainerStatus) bool {
	a, b := deref(c.shared), deref(d.shared)
	return c.ContainerID == d.ContainerID && c.RestartCount == d.RestartCount && c.State.equal(d.State) &&
		slices.EqualFunc(c.VolumeMounts, d.VolumeMounts, VolumeMount.equal) &&
		a.Name == b.Name && a.Ready == b.Ready && a.LastState.equal(b.LastState) && a.Unknown.Equal(b.Unknown)
}

// PodCondition is one entry of status.conditions (Ready, PodScheduled, ...): its type,
// its status, and its lastTransitionTime; its reason and message, set only while a
// condition is not met, and lastProbeTime, stay raw (Reason and Message read them).
//
// A condition is 16 bytes: its time, and a pointer to the rest. Every pod has four to
// six conditions, and all that differs between the Ready conditions of a thousand ready
// pods is their times; a cache holds {type: Ready, status: True} once, and each pod
// points at it (a read-only value: a condition is changed by making a new one, with
// NewPodCondition or With). The zero PodCondition has no type and no status.
type PodCondition struct {
	state              *podConditionState
	LastTransitionTime Time `json:"lastTransitionTime,omitzero" pb:"4"`
}

// podConditionState is what conditions in one state have alike: all but the time.
type podConditionState struct {
	Type    string  `json:"type" pb:"1"`
	Status  string  `json:"status" pb:"2"`
	Unknown Unknown `json:"-"`
}

// NewPodCondition returns a condition of the given type and status, since at.
func NewPodCondition(typ, status string, at Time) PodCondition {
	return PodCondition{state: &podConditionState{Type: typ, Status: status}, LastTransitionTime: at}
}

// Type returns the condition's type (Ready, PodScheduled, ...).
func (c PodCondition) Type() string { return deref(c.state).Type }

// Status returns the condition's status: True, False or Unknown.
func (c PodCondition) Status() string { return deref(c.state).Status }

// Unknown returns the members no method reads (lastProbeTime, reason, message, ...).
func (c PodCondition) Unknown() Unknown { return deref(c.state).Unknown }

// Reason returns the condition's reason ("" if it has none).
func (c PodCondition) Reason() string { return deref(c.state).Unknown.stringMember("reason") }

// Message returns the condition's message ("" if it has none).
func (c PodCondition) Message() string { return deref(c.state).Unknown.stringMember("message") }

// With returns a copy of c whose member name (reason, message, lastProbeTime, ...) is
// value; c, and every condition that shares its state, is left as it was. Like
// Unknown.Set, it panics on a condition read in protobuf (see ContainerStatus.With).
func (c PodCondition) With(name string, value json.RawMessage) PodCondition {
	c.state = withMember(c.state, func(s *podConditionState) *Unknown { return &s.Unknown }, name, value)
	return c
}

// Equal reports whether c and d hold the same type, status, time and other members (go-cmp
// calls it).
func (c PodCondition) Equal(d PodCondition) bool {
	a, b := deref(c.state), deref(d.state)
	return a.Type == b.Type && a.Status == b.Status && c.LastTransitionTime.Equal(d.LastTransitionTime) &&
		a.Unknown.Equal(b.Unknown)
}

// Condition returns the pod condition of the given type, or nil.
func (p *Pod) Condition(t string) *PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type() == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// IsReady reports whether the pod's Ready condition is True.
func (p *Pod) IsReady() bool {
	c := p.Condition("Ready")
	return c != nil && c.Status() == "True"
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

// PodTemplateSpec is the pod template inside a ReplicaSet or Deployment: a pod's
// metadata and spec, modelled as a pod's are (the rest of the spec kept as it came, in
// the encoding it came in). Controllers copy it into the pods they create, compare it
// and hash it; they do not read into its spec.
type PodTemplateSpec struct {
	ObjectMeta `json:"metadata" pb:"1"`
	Spec       PodSpec `json:"spec" pb:"2"`
	Unknown    Unknown `json:"-"`
}

// MarshalJSON writes the modelled fields and every unknown member.
func (t PodTemplateSpec) MarshalJSON() ([]byte, error) { return codec.Marshal(&t) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (t *PodTemplateSpec) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, t) }

// MustPodSpec returns the PodSpec a JSON text describes, and panics if it does not
// decode: for templates written in code (demos, tests), as regexp.MustCompile is for
// patterns.
func MustPodSpec(text string) PodSpec {
	var s PodSpec
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		panic(fmt.Sprintf("object.MustPodSpec(%q): %v", text, err))
	}
	return s
}
