package replicaset

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kinformer/kinformer/controllers/events"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// manage creates or deletes pods so that the ReplicaSet has spec.replicas active pods,
// recording the writes as expectations before issuing them.
func (rc *Controller) manage(ctx context.Context, rs *object.ReplicaSet, pods []*object.Pod) error {
	key := object.Key(rs)
	diff := len(pods) - int(replicas(rs))
	switch {
	case diff < 0:
		n := min(-diff, BurstReplicas)
		rc.exp.ExpectCreations(key, n)
		var uncertain atomic.Int32
		created, err := slowStart(n, func() error {
			err := rc.createPod(ctx, rs)
			if errors.Is(err, errUncertain) {
				uncertain.Add(1)
			}
			return err
		})
		// The calls that failed, and the batches never tried, will not be observed; the
		// uncertain ones stay expected (see createPod).
		for range n - created - int(uncertain.Load()) {
			rc.exp.CreationObserved(key)
		}
		return err
	case diff > 0:
		n := min(diff, BurstReplicas)
		victims := podsToDelete(pods, rc.relatedPods(rs), n, rc.now())
		keys := make([]string, len(victims))
		for i, p := range victims {
			keys[i] = object.Key(p)
		}
		rc.exp.ExpectDeletions(key, keys)
		return rc.deletePods(ctx, rs, victims)
	}
	return nil
}

// slowStart calls create n times in batches of 1, 2, 4, ... run in parallel, stopping
// after the first batch with a failure: when every call fails (a quota, a webhook down),
// one call is wasted, not n. It returns how many calls succeeded and the first error.
func slowStart(n int, create func() error) (int, error) {
	done := 0
	for batch := 1; done < n; batch *= 2 {
		size := min(batch, n-done)
		errs := make(chan error, size)
		var wg sync.WaitGroup
		for range size {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := create(); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		failed := len(errs)
		done += size - failed
		if failed > 0 {
			return done, <-errs
		}
	}
	return done, nil
}

// createPod creates one pod from the template: labels, annotations and finalizers
// copied, the spec passed through as the template has it (every field, known to this
// engine or not), the ControllerRef set.
func (rc *Controller) createPod(ctx context.Context, rs *object.ReplicaSet) error {
	t := rs.Spec.Template
	if len(t.Labels) == 0 {
		err := errors.New("unable to create pods, no labels")
		rc.Event(rs, events.Warning, "FailedCreate", "Error creating: %v", err)
		return err
	}
	pod := &object.Pod{
		TypeMeta: object.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: object.ObjectMeta{
			Name: podName(rs), GenerateName: rs.Name + "-", Namespace: rs.Namespace,
			Labels: maps.Clone(t.Labels), Annotations: maps.Clone(t.Annotations), Finalizers: slices.Clone(t.Finalizers),
			OwnerReferences: []object.OwnerReference{object.NewControllerRef(&rs.ObjectMeta, "apps/v1", "ReplicaSet")},
		},
	}
	pod.Spec = object.DeepCopy(t.Spec) // every field, modelled or not, in the encoding it came in
	created, err := rc.podsIn(rs.Namespace).Create(ctx, pod)
	switch {
	case err == nil:
		rc.wrote(rs, resourcePods, created.ResourceVersion)
		rc.Event(rs, events.Normal, "SuccessfulCreate", "Created pod: %s", created.Name)
		return nil
	case isNamespaceTerminating(err):
		return nil // the namespace is going away with everything in it: nothing to do
	case unanswered(err) && ctx.Err() == nil:
		// No answer (a reset, a timeout): the pod may exist. It stays expected, so no
		// later sync replaces a pod the informer has simply not shown yet; the informer
		// settles it, or settleUncertain finds it was never made.
		rc.exp.CreationUncertain(object.Key(rs), object.KeyFor(pod.Namespace, pod.Name))
		return fmt.Errorf("%w: %s: %v", errUncertain, pod.Name, err)
	}
	rc.Event(rs, events.Warning, "FailedCreate", "Error creating: %v", err)
	return err
}

// errUncertain marks a create that got no answer.
var errUncertain = errors.New("pod creation unconfirmed")

// unanswered: the request got no HTTP answer, or the apiserver timed out (it may still
// have written the object).
func unanswered(err error) bool {
	if _, ok := object.AsStatus(err); !ok {
		return true
	}
	return object.CodeOf(err) == http.StatusGatewayTimeout || object.ReasonOf(err) == object.ReasonTimeout
}

// podName is a name for a new pod: the ReplicaSet's name and a random suffix, as the
// apiserver would make from generateName, but chosen here so that a create whose answer
// was lost can be looked up by name.
func podName(rs *object.ReplicaSet) string {
	prefix := rs.Name + "-"
	if len(prefix) > 58 { // the apiserver's limit for generated names' prefixes
		prefix = prefix[:58]
	}
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	var b [5]byte
	for i := range b {
		b[i] = alphabet[rand.IntN(len(alphabet))]
	}
	return prefix + string(b[:])
}

// settleUncertain looks up creates that got no answer a while ago: one the server does
// not have was never made, and stops being expected. It reports whether any settled.
func (rc *Controller) settleUncertain(ctx context.Context, rs *object.ReplicaSet) bool {
	key := object.Key(rs)
	settled := false
	for _, podKey := range rc.exp.Uncertain(key, uncertainAge) {
		_, name, _ := object.SplitKey(podKey)
		if _, err := rc.podsIn(rs.Namespace).Get(ctx, name); object.IsNotFound(err) {
			rc.exp.CreationNotMade(key, podKey)
			settled = true
		}
	}
	if !settled && len(rc.exp.Uncertain(key, 0)) > 0 {
		rc.Queue().AddAfter(key, uncertainAge) // look again then
	}
	return settled
}

// uncertainAge is how long an unanswered create is given to show up in the informer
// before the server is asked about it.
const uncertainAge = 2 * time.Second

// deletePods deletes the victims in parallel. A pod already gone is a success; each
// failed call lowers the expectations at once, since no deletion will be observed.
//
// Deletions are not recorded for the read-your-writes guard, as kube-controller-manager
// does not record them either: the client's Delete returns no object, so no
// resourceVersion, and the deletion expectations already hold the next syncs back until
// the informer shows each deletion.
func (rc *Controller) deletePods(ctx context.Context, rs *object.ReplicaSet, victims []*object.Pod) error {
	key := object.Key(rs)
	errs := make([]error, len(victims))
	var wg sync.WaitGroup
	for i, p := range victims {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := rc.podsIn(p.Namespace).Delete(ctx, p.Name, listwatch.DeleteOptions{Preconditions: &listwatch.Preconditions{UID: p.UID}})
			switch {
			case err == nil:
				rc.Event(rs, events.Normal, "SuccessfulDelete", "Deleted pod: %s", p.Name)
				return
			case object.IsNotFound(err) || object.IsConflict(err):
				// Gone, or replaced by another pod of the same name (the UID precondition
				// failed): the pod this sync meant to delete no longer exists.
				rc.exp.DeletionObserved(key, object.Key(p))
			default:
				rc.exp.DeletionObserved(key, object.Key(p))
				rc.Event(rs, events.Warning, "FailedDelete", "Error deleting: %v", err)
				errs[i] = err
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err // they are likely all the same: report the first
		}
	}
	return nil
}

// relatedPods returns the pods of every ReplicaSet controlled by the same owner as rs
// (the ReplicaSets of one Deployment), or rs's own when it has no owner: the deletion
// ranking counts the active ones per node.
func (rc *Controller) relatedPods(rs *object.ReplicaSet) []*object.Pod {
	uids := []string{rs.UID}
	if ref := object.ControllerRef(&rs.ObjectMeta); ref != nil {
		uids = uids[:0]
		for _, sib := range rc.rsLister.Namespace(rs.Namespace).List(object.Everything()) {
			if r := object.ControllerRef(&sib.ObjectMeta); r != nil && r.UID == ref.UID {
				uids = append(uids, sib.UID)
			}
		}
	}
	var out []*object.Pod
	for _, uid := range uids {
		pods, _ := rc.podLister.ByIndex(controllerUIDIndex, uid)
		out = append(out, pods...)
	}
	return out
}

// isNamespaceTerminating recognises the refusal to create in a namespace being deleted.
func isNamespaceTerminating(err error) bool {
	se, ok := object.AsStatus(err)
	if !ok || se.Status.Details == nil {
		return false
	}
	for _, c := range se.Status.Details.Causes {
		if c.Type == "NamespaceTerminating" {
			return true
		}
	}
	return false
}
