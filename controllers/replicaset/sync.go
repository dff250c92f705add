package replicaset

import (
	"context"
	"errors"

	"github.com/kinformer/kinformer/controllers/claim"
	"github.com/kinformer/kinformer/controllers/consistency"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// sync brings one ReplicaSet's pods to its spec and writes its status.
func (rc *Controller) sync(ctx context.Context, key string) error {
	rs, ok := rc.rsLister.Get(key)
	if !ok {
		rc.exp.Forget(key)
		rc.written.Clear(consistency.Owner{Key: key})
		return nil
	}
	// Read your own writes: while the caches have not shown every write of the last
	// syncs (a status, an adoption or release, a pod created), this sync would decide from
	// the state before them. The error (a *consistency.StaleError) retries the key, and
	// the event that brings the write in enqueues it anyway.
	if err := rc.written.Ready(consistency.OwnerOf(&rs.ObjectMeta)); err != nil {
		return err
	}
	// Read the expectations before the cache: an event observed in between then errs on
	// the side of waiting one more sync, never of acting on a cache that lags.
	mayAct := rc.exp.Satisfied(key)
	if !mayAct && rc.settleUncertain(ctx, rs) {
		mayAct = rc.exp.Satisfied(key)
	}
	sel, err := rs.Spec.Selector.AsSelector()
	if err != nil || sel.Empty() {
		// An invalid selector cannot become valid by retrying; the apiserver refuses
		// both for apps/v1, so this is a cache of something odd: leave it.
		rc.log.Error("replicaset has an invalid or empty selector", "key", key, "err", err)
		return nil
	}
	active, terminating := rc.podsOfNamespace(rs, sel)
	owned, err := rc.claimPods(ctx, rs, sel, active)
	if err != nil {
		return err
	}
	var manageErr error
	if mayAct && rs.DeletionTimestamp == nil {
		manageErr = rc.manage(ctx, rs, owned)
	}
	status, requeue := rc.calculateStatus(rs, owned, terminating, manageErr)
	if err := rc.writeStatus(ctx, rs, status); err != nil {
		return errors.Join(manageErr, err)
	}
	if manageErr == nil && requeue > 0 {
		rc.Queue().AddAfter(key, requeue) // a pod becomes available then
	}
	return manageErr
}

// podsOfNamespace returns the active pods of rs's namespace, which rs may claim, and
// the terminating pods it controls and selects, which its status counts apart.
func (rc *Controller) podsOfNamespace(rs *object.ReplicaSet, sel object.Selector) (active, terminating []*object.Pod) {
	for _, p := range rc.podLister.Namespace(rs.Namespace).List(object.Everything()) {
		if isActive(p) {
			active = append(active, p)
		} else if isTerminating(p) && controlledBy(p, rs) && sel.Matches(p.Labels) {
			terminating = append(terminating, p)
		}
	}
	return active, terminating
}

// claimPods adopts the matching orphans among pods, releases the owned pods that no
// longer match, and returns the pods rs owns (package claim).
func (rc *Controller) claimPods(ctx context.Context, rs *object.ReplicaSet, sel object.Selector, pods []*object.Pod) ([]*object.Pod, error) {
	owner := claim.Owner{Meta: &rs.ObjectMeta, APIVersion: "apps/v1", Kind: "ReplicaSet", Selector: sel,
		Fresh: func(ctx context.Context) (*object.ObjectMeta, error) {
			fresh, err := rc.replicaSetsIn(rs.Namespace).Get(ctx, rs.Name)
			if err != nil {
				return nil, err
			}
			return &fresh.ObjectMeta, nil
		}}
	return claim.Claim(ctx, owner, pods, func(ctx context.Context, name string, patch []byte) error {
		p, err := rc.podsIn(rs.Namespace).Patch(ctx, name, listwatch.MergePatch, patch, "")
		if err == nil {
			// An adoption, and a release too (kube-controller-manager records only the
			// pods that still name an owner): until the cache shows it, a sync would see
			// the pod on its former side.
			rc.wrote(rs, resourcePods, p.ResourceVersion)
		}
		return err
	})
}

func controlledBy(p *object.Pod, rs *object.ReplicaSet) bool {
	ref := object.ControllerRef(&p.ObjectMeta)
	return ref != nil && ref.UID == rs.UID
}

func replicas(rs *object.ReplicaSet) int32 {
	if rs.Spec.Replicas == nil {
		return 1 // the API's default
	}
	return *rs.Spec.Replicas
}
