package object

import (
	"encoding/json"
	"slices"

	"github.com/kinformer/kinformer/internal/codec"
)

// Container is one entry of a pod spec's containers or initContainers: its name and
// image, and its volume mounts; ports, env, resources, probes and the rest stay raw.
//
// The mounts are a field, because they are what differs from pod to pod (they name the
// pod's own service-account volume). Everything else is the same in every pod of a
// ReplicaSet and is held behind a pointer that a cache shares between them: read it with
// Name, Image and Unknown, and change it by making a new container (NewContainer, With).
type Container struct {
	shared       *containerShared
	VolumeMounts []VolumeMount `json:"volumeMounts,omitempty" pb:"9"`
}

// containerShared is what one container of a template is in every pod made from it.
type containerShared struct {
	Name    string  `json:"name" pb:"1"`
	Image   string  `json:"image,omitempty" pb:"2"`
	Unknown Unknown `json:"-"`
}

// NewContainer returns a container of the given name and image.
func NewContainer(name, image string) Container {
	return Container{shared: &containerShared{Name: name, Image: image}}
}

// Name returns the container's name.
func (c Container) Name() string { return deref(c.shared).Name }

// Image returns the container's image.
func (c Container) Image() string { return deref(c.shared).Image }

// Unknown returns the members no field or method reads (ports, env, probes, ...).
func (c Container) Unknown() Unknown { return deref(c.shared).Unknown }

// With returns a copy of c whose member name (ports, env, ...) is value; c, and every
// container that shares its part, is left as it was. Like Unknown.Set, it panics on a
// container read in protobuf (see ContainerStatus.With).
func (c Container) With(name string, value json.RawMessage) Container {
	c.shared = withMember(c.shared, func(s *containerShared) *Unknown { return &s.Unknown }, name, value)
	return c
}

// Equal reports whether c and d hold the same name, image, mounts and members (go-cmp
// calls it).
func (c Container) Equal(d Container) bool {
	a, b := deref(c.shared), deref(d.shared)
	return a.Name == b.Name && a.Image == b.Image && a.Unknown.Equal(b.Unknown) &&
		slices.EqualFunc(c.VolumeMounts, d.VolumeMounts, VolumeMount.equal)
}

// VolumeMount is where a container mounts one of the pod's volumes. Only the volume's
// name is a field, because it is what differs from pod to pod (the service-account
// volume's); mountPath, readOnly, subPath and the rest stay raw, where the mounts of
// every pod of a ReplicaSet share them. A pod of a service mesh mounts a score of
// volumes in its spec and as many again in its status: 24 bytes a mount instead of 48.
type VolumeMount struct {
	Name    string  `json:"name" pb:"1"`
	Unknown Unknown `json:"-"`
}

// deref returns a copy of what p points to, or the zero S when p is nil: a headed
// type's shared part, which the zero value of the type does not have.
func deref[S any](p *S) S {
	if p == nil {
		var zero S
		return zero
	}
	return *p
}

// withMember returns a copy of the shared part p with its member name set to value,
// which unknown finds in the copy: what a headed type's With makes, leaving p alone.
func withMember[S any](p *S, unknown func(*S) *Unknown, name string, value json.RawMessage) *S {
	s := deref(p)
	unknown(&s).Set(name, value)
	return &s
}

func (m VolumeMount) equal(o VolumeMount) bool { return m.Name == o.Name && m.Unknown.Equal(o.Unknown) }

// Volume is one of a pod's volumes: its name; its source (projected, configMap,
// emptyDir, ...) stays raw.
type Volume struct {
	Name    string  `json:"name" pb:"1"`
	Unknown Unknown `json:"-"`
}

// MarshalJSON writes the modelled fields and every unknown member.
func (c Container) MarshalJSON() ([]byte, error) { return codec.Marshal(&c) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (c *Container) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, c) }

// MarshalJSON writes the modelled fields and every unknown member.
func (m VolumeMount) MarshalJSON() ([]byte, error) { return codec.Marshal(&m) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (m *VolumeMount) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, m) }

// MarshalJSON writes the modelled fields and every unknown member.
func (v Volume) MarshalJSON() ([]byte, error) { return codec.Marshal(&v) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (v *Volume) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, v) }

// ContainerState is what a container is doing (state) or last did (lastState): one of
// waiting, running or terminated, or none (an empty object, as a container that never
// restarted has for lastState).
type ContainerState struct {
	Waiting    *ContainerStateWaiting    `json:"waiting,omitempty" pb:"1"`
	Running    *ContainerStateRunning    `json:"running,omitempty" pb:"2"`
	Terminated *ContainerStateTerminated `json:"terminated,omitempty" pb:"3"`
	Unknown    Unknown                   `json:"-"`
}

// clone returns s with copies of the states it points to.
func (s ContainerState) clone() ContainerState {
	if s.Waiting != nil {
		w := *s.Waiting
		s.Waiting = &w
	}
	if s.Running != nil {
		r := *s.Running
		s.Running = &r
	}
	if s.Terminated != nil {
		t := *s.Terminated
		s.Terminated = &t
	}
	return s
}

// equal reports whether s and t hold the same states, fields and members.
func (s ContainerState) equal(t ContainerState) bool {
	return s.Unknown.Equal(t.Unknown) &&
		equalPointed(s.Waiting, t.Waiting, func(a, b ContainerStateWaiting) bool {
			return a.Reason == b.Reason && a.Message == b.Message && a.Unknown.Equal(b.Unknown)
		}) &&
		equalPointed(s.Running, t.Running, func(a, b ContainerStateRunning) bool {
			return a.StartedAt.Equal(b.StartedAt) && a.Unknown.Equal(b.Unknown)
		}) &&
		equalPointed(s.Terminated, t.Terminated, func(a, b ContainerStateTerminated) bool {
			return a.ExitCode == b.ExitCode && a.Reason == b.Reason && a.Message == b.Message &&
				a.StartedAt.Equal(b.StartedAt) && a.FinishedAt.Equal(b.FinishedAt) &&
				a.ContainerID == b.ContainerID && a.Unknown.Equal(b.Unknown)
		})
}

// equalPointed compares two pointers by what they point to.
func equalPointed[T any](a, b *T, equal func(a, b T) bool) bool {
	if a == nil || b == nil {
		return a == b
	}
	return equal(*a, *b)
}

// ContainerStateWaiting is a container not yet running: why (ContainerCreating,
// ImagePullBackOff, CrashLoopBackOff, ...).
type ContainerStateWaiting struct {
	Reason  string  `json:"reason,omitempty" pb:"1"`
	Message string  `json:"message,omitempty" pb:"2"`
	Unknown Unknown `json:"-"`
}

// ContainerStateRunning is a running container, since StartedAt.
type ContainerStateRunning struct {
	StartedAt Time    `json:"startedAt,omitzero" pb:"1"`
	Unknown   Unknown `json:"-"`
}

// ContainerStateTerminated is a container that ended: how, when, and which run of it.
// The API always writes exitCode.
type ContainerStateTerminated struct {
	ExitCode    int32   `json:"exitCode" pb:"1"`
	Reason      string  `json:"reason,omitempty" pb:"3"`
	Message     string  `json:"message,omitempty" pb:"4"`
	StartedAt   Time    `json:"startedAt,omitzero" pb:"5"`
	FinishedAt  Time    `json:"finishedAt,omitzero" pb:"6"`
	ContainerID string  `json:"containerID,omitempty" pb:"7"`
	Unknown     Unknown `json:"-"`
}

// MarshalJSON writes the modelled fields and every unknown member.
func (s ContainerState) MarshalJSON() ([]byte, error) { return codec.Marshal(&s) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (s *ContainerState) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, s) }

// MarshalJSON writes the modelled fields and every unknown member.
func (s ContainerStateWaiting) MarshalJSON() ([]byte, error) { return codec.Marshal(&s) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (s *ContainerStateWaiting) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, s) }

// MarshalJSON writes the modelled fields and every unknown member.
func (s ContainerStateRunning) MarshalJSON() ([]byte, error) { return codec.Marshal(&s) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (s *ContainerStateRunning) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, s) }

// MarshalJSON writes the modelled fields and every unknown member.
func (s ContainerStateTerminated) MarshalJSON() ([]byte, error) { return codec.Marshal(&s) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (s *ContainerStateTerminated) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, s) }
