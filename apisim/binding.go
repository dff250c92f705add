package apisim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/kinformer/kinformer/object"
)

// The binding subresource is how a scheduler assigns a pod to a node:
// POST /api/v1/namespaces/NS/pods/NAME/binding with a Binding. The pod's spec.nodeName
// can be written no other way (it is immutable through updates once set), so what the
// apiserver checks here is what makes scheduling safe: a pod is bound at most once, and
// never while it is being deleted.

// isPods reports whether t is core/v1 pods, the resource with binding and graceful
// deletion.
func isPods(t ResourceType) bool { return t.Group == "" && t.Resource == "pods" }

// bindingRequest is the part of a Binding the apiserver reads.
type bindingRequest struct {
	Metadata struct {
		Name            string            `json:"name"`
		Namespace       string            `json:"namespace"`
		UID             string            `json:"uid"`
		ResourceVersion string            `json:"resourceVersion"`
		Annotations     map[string]string `json:"annotations"`
	} `json:"metadata"`
	Target struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	} `json:"target"`
}

// serveBinding binds a pod to the Binding's target node. Like kube-apiserver it leaves
// the pod's generation alone (the spec change is the scheduler's, not the user's), marks
// the PodScheduled condition True, copies the Binding's annotations onto the pod, treats
// the Binding's uid and resourceVersion as preconditions, and answers 201 with a Success
// Status rather than the pod.
func (s *Server) serveBinding(w http.ResponseWriter, r *http.Request, req apiRequest) error {
	if r.Method != http.MethodPost {
		return object.NewStatusError(http.StatusMethodNotAllowed, object.ReasonMethodNotAllowed,
			"the server does not allow this method on the requested resource")
	}
	if err := requireJSON(r); err != nil {
		return err
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return badRequest("reading the request body: %v", err)
	}
	var b bindingRequest
	if err := json.Unmarshal(raw, &b); err != nil {
		return badRequest("the request body is not a Binding: %v", err)
	}
	switch {
	case b.Metadata.Name != req.name:
		return badRequest("name in URL does not match name in Binding object")
	case b.Metadata.Namespace != "" && b.Metadata.Namespace != req.namespace:
		return badRequest("the namespace of the provided object (%s) does not match the namespace of the request (%s)", b.Metadata.Namespace, req.namespace)
	case b.Target.Name == "":
		return invalid("Binding %q is invalid: target.name: Required value", req.name)
	case b.Target.Kind != "" && b.Target.Kind != "Node":
		return invalid("Binding %q is invalid: target.kind: Unsupported value: %q: supported values: \"Node\"", req.name, b.Target.Kind)
	}

	return s.withObject(req, func(tk, key string, cur *record) error {
		if why := bindRefusal(cur.obj, b); why != "" {
			return object.NewConflict(req.typ.Resource, req.name, why)
		}
		next := copyObject(cur.obj)
		spec, _ := next["spec"].(map[string]any)
		if spec == nil {
			spec = map[string]any{}
			next["spec"] = spec
		}
		spec["nodeName"] = b.Target.Name
		nm := meta(next)
		if len(b.Metadata.Annotations) > 0 {
			ann, _ := nm["annotations"].(map[string]any)
			if ann == nil {
				ann = map[string]any{}
				nm["annotations"] = ann
			}
			for k, v := range b.Metadata.Annotations {
				ann[k] = v
			}
		}
		markScheduled(next, s.opts.Now().UTC().Format("2006-01-02T15:04:05Z"))
		s.store.commit(tk, key, cur, next, commitPut)
		writeJSON(w, http.StatusCreated, map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{},
			"status": "Success", "code": http.StatusCreated})
		return nil
	})
}

// bindRefusal says why pod cannot be bound as b asks, or "" when it can.
func bindRefusal(pod map[string]any, b bindingRequest) string {
	m := meta(pod)
	spec, _ := pod["spec"].(map[string]any)
	name := str(m, "name")
	switch {
	case b.Metadata.UID != "" && b.Metadata.UID != str(m, "uid"):
		return fmt.Sprintf("Precondition failed: UID in precondition: %s, UID in object meta: %s", b.Metadata.UID, str(m, "uid"))
	case b.Metadata.ResourceVersion != "" && b.Metadata.ResourceVersion != str(m, "resourceVersion"):
		return fmt.Sprintf("Precondition failed: ResourceVersion in precondition: %s, ResourceVersion in object meta: %s", b.Metadata.ResourceVersion, str(m, "resourceVersion"))
	case m["deletionTimestamp"] != nil:
		return fmt.Sprintf("pod %s is being deleted, cannot be assigned to a host", name)
	case str(spec, "nodeName") != "":
		return fmt.Sprintf("pod %s is already assigned to node %q", name, str(spec, "nodeName"))
	}
	if gates, _ := spec["schedulingGates"].([]any); len(gates) > 0 {
		return fmt.Sprintf("pod %s has non-empty .spec.schedulingGates", name)
	}
	return ""
}

// markScheduled sets the pod's PodScheduled condition to True, keeping its transition
// time when it was True already.
func markScheduled(pod map[string]any, now string) {
	status, _ := pod["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
		pod["status"] = status
	}
	conds, _ := status["conditions"].([]any)
	for _, c := range conds {
		if cm, ok := c.(map[string]any); ok && cm["type"] == "PodScheduled" {
			if cm["status"] != "True" {
				cm["status"], cm["lastTransitionTime"] = "True", now
				delete(cm, "reason")
				delete(cm, "message")
			}
			return
		}
	}
	status["conditions"] = append(conds, map[string]any{"type": "PodScheduled", "status": "True",
		"lastProbeTime": nil, "lastTransitionTime": now})
}
