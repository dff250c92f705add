package fakekubelet

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kinformer/kinformer/object"
)

// The Node the kubelet registers, and the status it reports for it.

// NodeLabel marks the Nodes of fake kubelets (value "true"), so that a tool looking for
// real nodes, or a scheduler's nodeSelector, can tell them apart.
const NodeLabel = "kinformer.io/fake-node"

// DefaultCapacity is a fake node's capacity unless told otherwise: the size kwok gives
// its nodes, large enough that nothing a test creates is refused for want of room.
func DefaultCapacity() map[string]string {
	return map[string]string{"cpu": "32", "memory": "256Gi", "pods": "110"}
}

// A fake node says it is an amd64 Linux machine, whatever runs the fake kubelet: that is
// what pods' nodeSelectors and images ask for, and nothing runs on it anyway.
const (
	nodeOS   = "linux"
	nodeArch = "amd64"
	// fallbackKubeletVersion is reported when the apiserver does not say its version.
	fallbackKubeletVersion = "v0.0.0-kinformer-fake"
)

// quantityForm is the syntax of a Kubernetes resource quantity without a sign (a
// capacity is never negative): a decimal number and a binary or decimal SI suffix or an
// exponent. The apiserver checks the rest (and rewrites the value in canonical form).
var quantityForm = regexp.MustCompile(`^\+?([0-9]+(\.[0-9]*)?|\.[0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?$`)

// resourceList is base with given's entries on top, each name checked and each quantity
// in Kubernetes' syntax.
func resourceList(base, given map[string]string) (map[string]string, error) {
	out := maps.Clone(base)
	for name, q := range given {
		if name == "" || strings.ContainsAny(name, "=, ") {
			return nil, fmt.Errorf("%q is not a resource name", name)
		}
		if !quantityForm.MatchString(q) {
			return nil, fmt.Errorf("resource %s: %q is not a quantity (such as 4, 500m, 8Gi)", name, q)
		}
		out[name] = q
	}
	return out, nil
}

// nodeObject is the Node as it is first registered: labelled, untainted and schedulable,
// with its full status, which kube-apiserver keeps when a Node is created.
func (k *Kubelet) nodeObject(now time.Time) (*object.Raw, error) {
	n := &object.Raw{TypeMeta: object.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: object.ObjectMeta{Name: k.opts.NodeName, Labels: k.nodeLabels()}}
	n.Unknown.Set("spec", json.RawMessage(`{}`))
	status, err := json.Marshal(k.nodeStatus(nil, now))
	if err != nil {
		return nil, err
	}
	n.Unknown.Set("status", status)
	return n, nil
}

// nodeLabels are the labels a kubelet gives its node (hostname, os and arch, under
// their current and their beta names, which tools still read), and the fake-node mark.
func (k *Kubelet) nodeLabels() map[string]string {
	return map[string]string{
		"kubernetes.io/hostname":  k.opts.NodeName,
		"kubernetes.io/os":        nodeOS,
		"kubernetes.io/arch":      nodeArch,
		"beta.kubernetes.io/os":   nodeOS,
		"beta.kubernetes.io/arch": nodeArch,
		NodeLabel:                 "true",
	}
}

// nodeStatus is the part of a Node's status the kubelet owns. current is the status as
// stored (nil for a new node): conditions of other types, which other components write,
// are kept where they are, and a condition whose status did not change keeps its
// lastTransitionTime. Lists are replaced whole by a merge patch, so the conditions are
// all written; maps are merged, so capacity entries added by others stay.
func (k *Kubelet) nodeStatus(current []json.RawMessage, now time.Time) nodeStatus {
	at := object.NewTime(now.UTC().Truncate(time.Second))
	return nodeStatus{
		Capacity:    k.opts.Capacity,
		Allocatable: k.opts.Allocatable,
		Conditions:  mergeConditions(current, healthyConditions(at)),
		Addresses:   []nodeAddress{{"InternalIP", hostIP}, {"Hostname", k.opts.NodeName}},
		NodeInfo:    k.nodeInfo(),
	}
}

type nodeStatus struct {
	Capacity    map[string]string `json:"capacity"`
	Allocatable map[string]string `json:"allocatable"`
	Conditions  []json.RawMessage `json:"conditions"`
	Addresses   []nodeAddress     `json:"addresses"`
	NodeInfo    nodeInfo          `json:"nodeInfo"`
}

type nodeAddress struct {
	Type    string `json:"type"`
	Address string `json:"address"`
}

// nodeInfo is what `kubectl get nodes -o wide` and `kubectl describe node` show of the
// machine. kubeProxyVersion is left out: kubelets no longer report it.
type nodeInfo struct {
	MachineID               string `json:"machineID"`
	SystemUUID              string `json:"systemUUID"`
	BootID                  string `json:"bootID"`
	KernelVersion           string `json:"kernelVersion"`
	OSImage                 string `json:"osImage"`
	ContainerRuntimeVersion string `json:"containerRuntimeVersion"`
	KubeletVersion          string `json:"kubeletVersion"`
	OperatingSystem         string `json:"operatingSystem"`
	Architecture            string `json:"architecture"`
}

// nodeInfo derives the machine's identifiers from the node's name, so a restarted fake
// kubelet reports the same machine. Its container runtime is the one the pods' container
// ids name.
func (k *Kubelet) nodeInfo() nodeInfo {
	id := digest("machine/" + k.opts.NodeName)
	boot := digest("boot/" + k.opts.NodeName)
	return nodeInfo{
		MachineID:  id[:32],
		SystemUUID: id[:8] + "-" + id[8:12] + "-" + id[12:16] + "-" + id[16:20] + "-" + id[20:32],
		BootID:     boot[:8] + "-" + boot[8:12] + "-" + boot[12:16] + "-" + boot[16:20] + "-" + boot[20:32],
		// Nothing runs here, and the fields say so where a human reads them.
		KernelVersion:           "0.0.0-fake",
		OSImage:                 "kinformer fake node",
		ContainerRuntimeVersion: "containerd://0.0.0-fake",
		KubeletVersion:          k.kubeletVersion,
		OperatingSystem:         nodeOS,
		Architecture:            nodeArch,
	}
}

// nodeCondition is one of the conditions a kubelet reports on its node.
type nodeCondition struct {
	Type               string      `json:"type"`
	Status             string      `json:"status"`
	LastHeartbeatTime  object.Time `json:"lastHeartbeatTime"`
	LastTransitionTime object.Time `json:"lastTransitionTime"`
	Reason             string      `json:"reason"`
	Message            string      `json:"message"`
}

// healthyConditions are the conditions of a healthy node at a heartbeat, in the order a
// kubelet lists them: no memory, disk or process-id pressure, and Ready. The reasons
// are the kubelet's, which tools match on.
func healthyConditions(at object.Time) []nodeCondition {
	c := func(typ, status, reason, message string) nodeCondition {
		return nodeCondition{Type: typ, Status: status, LastHeartbeatTime: at, LastTransitionTime: at, Reason: reason, Message: message}
	}
	return []nodeCondition{
		c("MemoryPressure", "False", "KubeletHasSufficientMemory", "fake kubelet: no memory pressure"),
		c("DiskPressure", "False", "KubeletHasNoDiskPressure", "fake kubelet: no disk pressure"),
		c("PIDPressure", "False", "KubeletHasSufficientPID", "fake kubelet: no process id pressure"),
		c("Ready", "True", "KubeletReady", "fake kubelet is ready"),
	}
}

// mergeConditions writes ours over the stored conditions: each of ours in the place of
// the stored one of its type, keeping that one's lastTransitionTime when the status is
// the same, the others as they are, and ours not yet stored after them.
func mergeConditions(stored []json.RawMessage, ours []nodeCondition) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(stored)+len(ours))
	written := map[string]bool{}
	encode := func(c nodeCondition) json.RawMessage {
		b, _ := json.Marshal(c) // strings and times: cannot fail
		return b
	}
	for _, raw := range stored {
		var old struct {
			Type               string      `json:"type"`
			Status             string      `json:"status"`
			LastTransitionTime object.Time `json:"lastTransitionTime"`
		}
		i := -1
		if json.Unmarshal(raw, &old) == nil {
			i = slices.IndexFunc(ours, func(c nodeCondition) bool { return c.Type == old.Type })
		}
		if i < 0 || written[old.Type] {
			if i < 0 {
				out = append(out, raw)
			}
			continue // not ours, or a duplicate of one of ours
		}
		c := ours[i]
		if old.Status == c.Status && !old.LastTransitionTime.IsZero() {
			c.LastTransitionTime = old.LastTransitionTime
		}
		out = append(out, encode(c))
		written[c.Type] = true
	}
	for _, c := range ours {
		if !written[c.Type] {
			out = append(out, encode(c))
		}
	}
	return out
}
