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

// VolumeMount is where a container mounts one of the pod's volumes; readOnly, subPath and
// the rest stay raw.
type VolumeMount struct {
	Name      string  `json:"name"`
	MountPath string  `json:"mountPath"`
	Unknown   Unknown `json:"-"`
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
