package object

import "github.com/kinformer/kinformer/internal/codec"

// Container is one entry of a pod spec's containers or initContainers: its name, image
// and volume mounts; ports, env, resources, probes and the rest stay raw.
type Container struct {
	Name         string        `json:"name"`
	Image        string        `json:"image,omitempty"`
	VolumeMounts []VolumeMount `json:"volumeMounts,omitempty"`
	Unknown      Unknown       `json:"-"`
}

// VolumeMount is where a container mounts one of the pod's volumes. Only the volume's
// name is a field, because it is what differs from pod to pod (the service-account
// volume's); mountPath, readOnly, subPath and the rest stay raw, where the mounts of
// every pod of a ReplicaSet share them. A pod of a service mesh mounts a score of
// volumes in its spec and as many again in its status: 24 bytes a mount instead of 48.
type VolumeMount struct {
	Name    string  `json:"name"`
	Unknown Unknown `json:"-"`
}

// Volume is one of a pod's volumes: its name; its source (projected, configMap,
// emptyDir, ...) stays raw.
type Volume struct {
	Name    string  `json:"name"`
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
	Waiting    *ContainerStateWaiting    `json:"waiting,omitempty"`
	Running    *ContainerStateRunning    `json:"running,omitempty"`
	Terminated *ContainerStateTerminated `json:"terminated,omitempty"`
	Unknown    Unknown                   `json:"-"`
}

// ContainerStateWaiting is a container not yet running: why (ContainerCreating,
// ImagePullBackOff, CrashLoopBackOff, ...).
type ContainerStateWaiting struct {
	Reason  string  `json:"reason,omitempty"`
	Message string  `json:"message,omitempty"`
	Unknown Unknown `json:"-"`
}

// ContainerStateRunning is a running container, since StartedAt.
type ContainerStateRunning struct {
	StartedAt Time    `json:"startedAt,omitzero"`
	Unknown   Unknown `json:"-"`
}

// ContainerStateTerminated is a container that ended: how, when, and which run of it.
// The API always writes exitCode.
type ContainerStateTerminated struct {
	ExitCode    int32   `json:"exitCode"`
	Reason      string  `json:"reason,omitempty"`
	Message     string  `json:"message,omitempty"`
	StartedAt   Time    `json:"startedAt,omitzero"`
	FinishedAt  Time    `json:"finishedAt,omitzero"`
	ContainerID string  `json:"containerID,omitempty"`
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
