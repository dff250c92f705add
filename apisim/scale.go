package apisim

import (
	"encoding/json"
	"strconv"
)

// scaleOf builds the autoscaling/v1 Scale of a workload from spec.replicas.
func scaleOf(t ResourceType, obj map[string]any) map[string]any {
	m := meta(obj)
	spec, _ := obj["spec"].(map[string]any)
	status, _ := obj["status"].(map[string]any)
	replicas := spec["replicas"]
	if replicas == nil {
		replicas = json.Number("1")
	}
	statusReplicas := status["replicas"]
	if statusReplicas == nil {
		statusReplicas = json.Number("0")
	}
	return map[string]any{
		"kind": "Scale", "apiVersion": "autoscaling/v1",
		"metadata": map[string]any{"name": m["name"], "namespace": m["namespace"], "uid": m["uid"],
			"resourceVersion": m["resourceVersion"], "creationTimestamp": m["creationTimestamp"]},
		"spec":   map[string]any{"replicas": replicas},
		"status": map[string]any{"replicas": statusReplicas},
	}
}

// applyScale writes a Scale (PUT) or a patch of one back into spec.replicas.
func applyScale(t ResourceType, cur, body map[string]any, patch bool) (map[string]any, error) {
	scale := body
	if patch {
		scale = mergePatch(scaleOf(t, cur), body).(map[string]any)
	}
	spec, _ := scale["spec"].(map[string]any)
	n, ok := spec["replicas"].(json.Number)
	if !ok {
		return nil, invalid("Scale is invalid: spec.replicas is required")
	}
	if v, err := strconv.ParseInt(string(n), 10, 32); err != nil || v < 0 {
		return nil, invalid("Scale is invalid: spec.replicas must be a non-negative integer")
	}
	next := copyObject(cur)
	s, _ := next["spec"].(map[string]any)
	if s == nil {
		s = map[string]any{}
		next["spec"] = s
	}
	s["replicas"] = n
	if rv := str(meta(scale), "resourceVersion"); rv != "" {
		meta(next)["resourceVersion"] = rv
	} else {
		delete(meta(next), "resourceVersion")
	}
	return next, nil
}
