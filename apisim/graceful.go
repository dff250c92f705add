package apisim

import (
	"encoding/json"
	"strconv"
	"time"
)

// Pods are deleted gracefully, as kube-apiserver deletes them: a pod that may still be
// running on a node is not removed by a DELETE. The apiserver only marks it
// (metadata.deletionTimestamp = now + grace, metadata.deletionGracePeriodSeconds = grace)
// and the node's kubelet, once it has stopped the containers, deletes it again with a
// grace period of 0, which removes it. A pod that runs nowhere (not bound to a node, or
// already Succeeded or Failed) has nothing to stop and goes at once.

// defaultGracePeriod is what a pod gets when neither the delete nor the pod's
// spec.terminationGracePeriodSeconds says (the apiserver defaults the field to 30).
const defaultGracePeriod = 30

// podDeletion is what a DELETE does to a pod.
type podDeletion struct {
	// graceful: the pod stays, marked with deletionTimestamp and grace.
	graceful  bool
	timestamp time.Time
	grace     int64
	// pending: a graceful deletion is under way and this request does not shorten it, so
	// nothing changes.
	pending bool
	// newGeneration: the pod's generation grows, as on any first graceful delete.
	newGeneration bool
}

// planPodDeletion decides the delete of pod at now with the requested grace period (nil:
// not given). When it returns neither graceful nor pending, the pod is deleted as any
// object is: at once, or when its finalizers are gone.
func planPodDeletion(pod map[string]any, requested *int64, now time.Time) podDeletion {
	if requested != nil && *requested < 0 {
		one := int64(1) // the apiserver reads a negative grace period as 1 s
		requested = &one
	}
	m := meta(pod)
	if m["deletionTimestamp"] != nil {
		cur, _ := int64Field(m, "deletionGracePeriodSeconds")
		if cur == 0 {
			return podDeletion{} // already due: finish it
		}
		if requested == nil || *requested >= cur {
			return podDeletion{pending: true} // a second delete may only shorten the grace
		}
		was, err := time.Parse(time.RFC3339, str(m, "deletionTimestamp"))
		if err != nil {
			was = now
		}
		due := was.Add(time.Duration(*requested-cur) * time.Second)
		return podDeletion{graceful: true, timestamp: due, grace: *requested}
	}
	spec, _ := pod["spec"].(map[string]any)
	status, _ := pod["status"].(map[string]any)
	grace := int64(defaultGracePeriod)
	if g, ok := int64Field(spec, "terminationGracePeriodSeconds"); ok {
		grace = g
	}
	if requested != nil {
		grace = *requested
	}
	if phase := str(status, "phase"); str(spec, "nodeName") == "" || phase == "Succeeded" || phase == "Failed" {
		grace = 0 // nothing runs that needs time to stop
	}
	if grace < 0 {
		grace = 1
	}
	if grace == 0 {
		return podDeletion{}
	}
	return podDeletion{graceful: true, timestamp: now.Add(time.Duration(grace) * time.Second), grace: grace, newGeneration: true}
}

// mark writes a graceful deletion into a pod's metadata.
func (p podDeletion) mark(m map[string]any) {
	m["deletionTimestamp"] = p.timestamp.UTC().Format(time.RFC3339)
	m["deletionGracePeriodSeconds"] = json.Number(strconv.FormatInt(p.grace, 10))
	if g, ok := int64Field(m, "generation"); ok && p.newGeneration {
		m["generation"] = json.Number(strconv.FormatInt(g+1, 10))
	}
}

// deletionDue reports whether an object marked for deletion may be removed once its
// finalizers are gone: not while a graceful deletion still waits for its kubelet.
func deletionDue(m map[string]any) bool {
	g, _ := int64Field(m, "deletionGracePeriodSeconds")
	return m["deletionTimestamp"] != nil && g == 0
}

// int64Field reads an integer member of a generic JSON object.
func int64Field(m map[string]any, k string) (int64, bool) {
	switch v := m[k].(type) {
	case json.Number:
		n, err := v.Int64()
		return n, err == nil
	case float64:
		return int64(v), true
	}
	return 0, false
}
