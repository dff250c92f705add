package fakekubelet

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/netip"
	"strings"

	"github.com/kinformer/kinformer/object"
)

// hostIP is the fake node's address, reported as every pod's hostIP.
const hostIP = "172.18.0.2"

// podSpec is what the kubelet reads of a pod's spec. object.PodSpec models only
// nodeName and keeps the rest raw, so the rest is decoded from its JSON here.
type podSpec struct {
	Containers []struct {
		Name  string `json:"name"`
		Image string `json:"image"`
	} `json:"containers"`
	SchedulingGates []json.RawMessage `json:"schedulingGates"`
}

func specOf(pod *object.Pod) (podSpec, error) {
	var s podSpec
	if _, ok := pod.Spec.Unknown.Protobuf(); !ok {
		return s, reencode(pod.Spec, &s)
	}
	// Read in protobuf: the containers are modelled, the gates are field 38.
	for _, c := range pod.Spec.Containers {
		s.Containers = append(s.Containers, struct {
			Name  string `json:"name"`
			Image string `json:"image"`
		}{c.Name(), c.Image()})
	}
	if gate, ok := pod.Spec.Unknown.ProtobufField(38); ok {
		s.SchedulingGates = []json.RawMessage{gate} // what the kubelet reads is that there is one
	}
	return s, nil
}

// observedStatus is what the kubelet reads of a pod's status.
type observedStatus struct {
	Phase     object.PodPhase `json:"phase"`
	StartTime string          `json:"startTime"`
	PodIP     string          `json:"podIP"`
}

func statusOf(pod *object.Pod) (observedStatus, error) {
	var s observedStatus
	if _, ok := pod.Status.Unknown.Protobuf(); !ok {
		return s, reencode(pod.Status, &s)
	}
	// Read in protobuf: podIP is field 6, startTime field 7 (k8s.io/api's numbers).
	s.Phase = pod.Status.Phase
	if ip, ok := pod.Status.Unknown.ProtobufField(6); ok {
		s.PodIP = string(ip)
	}
	if msg, ok := pod.Status.Unknown.ProtobufField(7); ok {
		var t object.Time
		if err := t.UnmarshalProtobuf(msg); err != nil {
			return s, err
		}
		if !t.IsZero() {
			s.StartTime = t.String()
		}
	}
	return s, nil
}

// started reports whether a kubelet has taken the pod on: it set the start time (even
// for a pod whose image cannot be pulled), or the pod has gone past Pending.
func (s observedStatus) started() bool {
	return s.StartTime != "" || s.Phase != "" && s.Phase != object.PodPending
}

// reencode decodes into out the JSON that v encodes to, whichever of its members the
// object package models and whichever it keeps raw.
func reencode(v, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// statusPatch is the merge patch of /status that starts a pod. metadata.uid makes the
// pod's uid a precondition, so a new pod of the same name is never given the old one's
// status.
type statusPatch struct {
	Metadata struct {
		UID string `json:"uid"`
	} `json:"metadata"`
	Status podStatus `json:"status"`
}

// podStatus is the status a kubelet reports for a started pod. Lists replace the
// stored ones whole under a merge patch, so the conditions are all written.
type podStatus struct {
	Phase             object.PodPhase   `json:"phase"`
	StartTime         object.Time       `json:"startTime"`
	HostIP            string            `json:"hostIP"`
	HostIPs           []podIP           `json:"hostIPs"`
	PodIP             string            `json:"podIP"`
	PodIPs            []podIP           `json:"podIPs"`
	Conditions        []condition       `json:"conditions"`
	ContainerStatuses []containerStatus `json:"containerStatuses"`
}

type podIP struct {
	IP string `json:"ip"`
}

type condition struct {
	Type               string      `json:"type"`
	Status             string      `json:"status"`
	LastTransitionTime object.Time `json:"lastTransitionTime"`
	Reason             string      `json:"reason,omitempty"`
	Message            string      `json:"message,omitempty"`
}

type containerStatus struct {
	Name         string         `json:"name"`
	Image        string         `json:"image"`
	ImageID      string         `json:"imageID"`
	ContainerID  string         `json:"containerID,omitempty"`
	Ready        bool           `json:"ready"`
	Started      bool           `json:"started"`
	RestartCount int32          `json:"restartCount"`
	State        containerState `json:"state"`
	LastState    containerState `json:"lastState"`
}

// containerState holds one of its members; the zero value is the empty state {} a
// container that never ran before has as its lastState.
type containerState struct {
	Running *runningState `json:"running,omitempty"`
	Waiting *waitingState `json:"waiting,omitempty"`
}

type runningState struct {
	StartedAt object.Time `json:"startedAt"`
}

type waitingState struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// startedStatus is the status of pod started at now with address ip: each container
// running and ready, or, if its image is one that cannot be pulled, waiting in
// ImagePullBackOff. A pod with any such container is Running but never ready: the
// controllers then see the case that matters to them (started, not available), and a
// rollout that waits for it times out as it would on a cluster. (A real kubelet would
// leave such a pod Pending; the issue that defines this tool asks for Running.)
func (k *Kubelet) startedStatus(pod *object.Pod, spec podSpec, ip netip.Addr, now object.Time) statusPatch {
	var unready []string
	statuses := make([]containerStatus, 0, len(spec.Containers))
	for _, c := range spec.Containers {
		cs := containerStatus{Name: c.Name, Image: c.Image}
		if k.cannotPull(c.Image) {
			unready = append(unready, c.Name)
			cs.State.Waiting = &waitingState{Reason: "ImagePullBackOff", Message: `Back-off pulling image "` + c.Image + `"`}
		} else {
			cs.ImageID, cs.ContainerID = imageID(c.Image), containerID(pod.UID, c.Name)
			cs.Ready, cs.Started = true, true
			cs.State.Running = &runningState{StartedAt: now}
		}
		statuses = append(statuses, cs)
	}

	const phase = object.PodRunning
	containersReady := condition{Type: "ContainersReady", Status: "True", LastTransitionTime: now}
	if len(unready) > 0 {
		containersReady.Status, containersReady.Reason = "False", "ContainersNotReady"
		containersReady.Message = "containers with unready status: [" + strings.Join(unready, " ") + "]"
	}
	ready := containersReady
	ready.Type = "Ready"
	scheduled := condition{Type: "PodScheduled", Status: "True", LastTransitionTime: now}
	if c := pod.Condition("PodScheduled"); c != nil && c.Status() == "True" && !c.LastTransitionTime.IsZero() {
		scheduled.LastTransitionTime = c.LastTransitionTime // set by the binding
	}

	var p statusPatch
	p.Metadata.UID = pod.UID
	p.Status = podStatus{
		Phase:     phase,
		StartTime: now,
		HostIP:    hostIP, HostIPs: []podIP{{hostIP}},
		PodIP: ip.String(), PodIPs: []podIP{{ip.String()}},
		// In the order a kubelet writes them.
		Conditions: []condition{
			{Type: "Initialized", Status: "True", LastTransitionTime: now},
			ready, containersReady, scheduled,
		},
		ContainerStatuses: statuses,
	}
	return p
}

// cannotPull reports whether image matches one of the never-ready patterns.
func (k *Kubelet) cannotPull(image string) bool {
	for _, pattern := range k.opts.NeverReadyImages {
		if pattern != "" && strings.Contains(image, pattern) {
			return true
		}
	}
	return false
}

// imageID is a digest reference for image, as a container runtime reports what it
// pulled: the repository without its tag, at a digest made from the image name.
func imageID(image string) string {
	if strings.Contains(image, "@") {
		return image // pulled by digest already
	}
	repo := image
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		repo = image[:i]
	}
	return repo + "@sha256:" + digest(image)
}

// containerID names a container of a pod as containerd would, uniquely per pod.
func containerID(podUID, name string) string {
	return "containerd://" + digest(podUID+"/"+name)
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
