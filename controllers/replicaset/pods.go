package replicaset

import (
	"time"

	"github.com/kinformer/kinformer/object"
)

// isActive: a pod that still counts toward replicas: not finished, not being deleted.
func isActive(p *object.Pod) bool {
	return p.Status.Phase != object.PodSucceeded && p.Status.Phase != object.PodFailed && p.DeletionTimestamp == nil
}

// isTerminating: a pod being deleted that has not finished yet.
func isTerminating(p *object.Pod) bool {
	return p.DeletionTimestamp != nil && p.Status.Phase != object.PodSucceeded && p.Status.Phase != object.PodFailed
}

// readySince returns when the pod became ready, or the zero time if it is not ready.
func readySince(p *object.Pod) time.Time {
	if c := p.Condition("Ready"); c != nil && c.Status() == "True" {
		return c.LastTransitionTime.Time()
	}
	return time.Time{}
}

// availableIn says whether the pod is available at now (ready for at least
// minReadySeconds) and, when it is ready but not yet available, how long until it is.
func availableIn(p *object.Pod, minReadySeconds int32, now time.Time) (available bool, wait time.Duration) {
	if !p.IsReady() {
		return false, 0
	}
	if minReadySeconds == 0 {
		return true, 0
	}
	since := readySince(p)
	if since.IsZero() {
		return false, 0 // ready without a transition time: never counts as available
	}
	at := since.Add(time.Duration(minReadySeconds) * time.Second)
	if at.Before(now) {
		return true, 0
	}
	return false, at.Sub(now)
}

// fullyLabeled: the pod carries every label of the template (not just the selector's).
func fullyLabeled(p *object.Pod, template map[string]string) bool {
	for k, v := range template {
		if got, ok := p.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}
