package apisim

import "strings"

// ResourceType describes a resource the simulator serves.
type ResourceType struct {
	Group, Version, Resource string
	Kind                     string
	Namespaced               bool
	ShortNames               []string
	// Status says the resource has a /status subresource: writes to the main resource
	// keep the stored status, and /status writes change nothing but status.
	Status bool
	// Scale says the resource has a /scale subresource backed by spec.replicas.
	Scale bool
	// FieldSelectors lists the fields accepted in ?fieldSelector= besides metadata.name
	// and metadata.namespace (e.g. spec.nodeName, status.phase for pods). A field is the
	// dotted path of the value it selects on, unless FieldPaths names another.
	FieldSelectors []string
	// FieldPaths maps a selectable field to the path it reads when the two differ, as an
	// event's "source" reads source.component.
	FieldPaths map[string]string
}

func (t ResourceType) groupVersion() string {
	if t.Group == "" {
		return t.Version
	}
	return t.Group + "/" + t.Version
}

func (t ResourceType) singular() string { return strings.ToLower(t.Kind) }

// DefaultTypes are the resources every simulator serves: pods, configmaps, namespaces,
// nodes, events, replicasets, deployments and leases. Register adds others (CRD-like
// ad-hoc types).
func DefaultTypes() []ResourceType {
	return []ResourceType{
		{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true, ShortNames: []string{"po"},
			Status: true, FieldSelectors: []string{"spec.nodeName", "status.phase"}},
		{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true, ShortNames: []string{"cm"}},
		{Version: "v1", Resource: "namespaces", Kind: "Namespace", ShortNames: []string{"ns"}, Status: true},
		{Version: "v1", Resource: "nodes", Kind: "Node", ShortNames: []string{"no"}, Status: true},
		// Events carry the field selectors kube-apiserver gives them: `kubectl describe`
		// finds an object's events by involvedObject.
		{Version: "v1", Resource: "events", Kind: "Event", Namespaced: true, ShortNames: []string{"ev"},
			FieldSelectors: []string{"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
				"involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
				"involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"},
			FieldPaths: map[string]string{"source": "source.component"}},
		{Group: "apps", Version: "v1", Resource: "replicasets", Kind: "ReplicaSet", Namespaced: true,
			ShortNames: []string{"rs"}, Status: true, Scale: true},
		{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true,
			ShortNames: []string{"deploy"}, Status: true, Scale: true},
		{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Kind: "Lease", Namespaced: true},
	}
}
