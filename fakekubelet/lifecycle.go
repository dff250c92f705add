package fakekubelet

import (
	"context"
	"encoding/json"
	"time"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// The three steps of a pod's life that need a scheduler or a kubelet: binding, start,
// and the end of a graceful deletion.

// binding is the body of POST pods/NAME/binding. The pod's uid makes it a precondition:
// a pod deleted and recreated under the same name meanwhile is not bound by mistake.
type binding struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Metadata   bindingMeta     `json:"metadata"`
	Target     objectReference `json:"target"`
}

type bindingMeta struct {
	Name string `json:"name"`
	UID  string `json:"uid,omitempty"`
}

type objectReference struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// bind assigns an unscheduled pod to the node, as the scheduler does. A pod being
// deleted, or held back by scheduling gates, is left alone as the scheduler leaves it.
func (k *Kubelet) bind(ctx context.Context, pod *object.Pod) error {
	if pod.DeletionTimestamp != nil {
		return nil
	}
	spec, err := specOf(pod)
	if err != nil || len(spec.SchedulingGates) > 0 {
		return err
	}
	body, err := json.Marshal(binding{APIVersion: "v1", Kind: "Binding",
		Metadata: bindingMeta{Name: pod.Name, UID: pod.UID},
		Target:   objectReference{Kind: "Node", Name: k.opts.NodeName}})
	if err != nil {
		return err
	}
	_, err = k.podsIn(pod.Namespace).CreateSubresource(ctx, pod.Name, "binding", body)
	if err == nil {
		k.book.bound(pod, time.Now())
	}
	if settled(err) {
		return nil
	}
	return err
}

// start writes the status of a running pod (or of one stuck pulling its image) once
// ReadyAfter has passed since the pod was bound. Before that, the pod comes back when it
// is due: a worker never sleeps.
func (k *Kubelet) start(ctx context.Context, pod *object.Pod) error {
	status, err := statusOf(pod)
	if err != nil {
		return err
	}
	// The status is written once. The book covers the moment after the write when the
	// cache does not show it yet; the status covers pods started by an earlier kubelet.
	if status.started() || k.book.started(pod) {
		return nil
	}
	if wait := time.Until(k.book.boundAt(pod).Add(k.opts.ReadyAfter)); wait > 0 {
		k.queue.AddAfter(object.Key(pod), wait)
		return nil
	}
	spec, err := specOf(pod)
	if err != nil {
		return err
	}
	ip, err := k.book.address(pod)
	if err != nil {
		return err
	}
	patch, err := json.Marshal(k.startedStatus(pod, spec, ip, object.Now()))
	if err != nil {
		return err
	}
	_, err = k.podsIn(pod.Namespace).Patch(ctx, pod.Name, listwatch.MergePatch, patch, "status")
	if err == nil {
		k.book.markStarted(pod)
	}
	if settled(err) {
		return nil
	}
	return err
}

// finishDeletion removes a pod being deleted gracefully: its containers "stopped" at
// once, so it goes with grace period 0. The uid precondition keeps a new pod of the same
// name from being deleted in its place.
func (k *Kubelet) finishDeletion(ctx context.Context, pod *object.Pod) error {
	zero := int64(0)
	err := k.podsIn(pod.Namespace).Delete(ctx, pod.Name, listwatch.DeleteOptions{
		GracePeriodSeconds: &zero, Preconditions: &listwatch.Preconditions{UID: pod.UID}})
	if settled(err) {
		return nil
	}
	return err
}
