package deployment

import (
	"context"

	"github.com/kinformer/kinformer/controllers/claim"
	"github.com/kinformer/kinformer/controllers/consistency"
	"github.com/kinformer/kinformer/controllers/events"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// rollout is the state of one sync of one Deployment: a private copy of the Deployment
// (its status is worked on locally and written once), and the ReplicaSets it controls,
// split once into the new one (nil until it is created) and the old ones.
type rollout struct {
	dc    *Controller
	ctx   context.Context
	d     *object.Deployment
	newRS *object.ReplicaSet
	olds  []*object.ReplicaSet
}

func newRollout(ctx context.Context, dc *Controller, d *object.Deployment, rss []*object.ReplicaSet) *rollout {
	newRS, olds := splitReplicaSets(d, rss)
	return &rollout{dc: dc, ctx: ctx, d: d, newRS: newRS, olds: olds}
}

// sync brings one Deployment's ReplicaSets to its spec and writes its status.
func (dc *Controller) sync(ctx context.Context, key string) error {
	cached, ok := dc.dLister.Get(key)
	if !ok {
		dc.written.Clear(consistency.Owner{Key: key})
		return nil // deleted: its ReplicaSets are the garbage collector's
	}
	// Read your own writes: while the caches have not shown every write of the last
	// syncs (a ReplicaSet created or scaled, the status), this sync would decide from the
	// state before them: create again, scale from the old size, or judge progress from
	// an old status. The error (a *consistency.StaleError) retries the key, and the event
	// that brings the write in enqueues it anyway.
	if err := dc.written.Ready(consistency.OwnerOf(&cached.ObjectMeta)); err != nil {
		return err
	}
	d := object.DeepCopy(cached)
	sel, err := d.Spec.Selector.AsSelector()
	if err != nil {
		dc.log.Error("deployment has an invalid selector", "key", key, "err", err)
		return nil
	}
	if sel.Empty() {
		dc.Event(d, events.Warning, "SelectingAll", "This deployment is selecting all pods. A non-empty selector is required.")
		if d.Status.ObservedGeneration < d.Generation {
			d.Status.ObservedGeneration = d.Generation
			return dc.writeStatus(ctx, d, d.Status)
		}
		return nil
	}
	rss, err := dc.claimReplicaSets(ctx, d, sel)
	if err != nil {
		return err
	}
	return newRollout(ctx, dc, d, rss).run()
}

// run decides what this sync does, in kube-controller-manager's order: a Deployment
// being deleted only has its status synced; pausing and resuming are recorded; a paused
// Deployment, or one just scaled, is only scaled; otherwise its strategy rolls it.
func (r *rollout) run() error {
	d := r.d
	if d.DeletionTimestamp != nil {
		return r.syncStatusOnly()
	}
	if err := r.checkPausedConditions(); err != nil {
		return err
	}
	if _, _, invalid := fenceposts(d); invalid != nil {
		r.dc.Event(d, events.Warning, "InvalidStrategy", "%v: rolling with maxUnavailable 1", invalid)
	}
	if d.Spec.Paused || r.isScalingEvent() {
		return r.syncScaleAndStatus()
	}
	if isRecreate(d) {
		return r.rolloutRecreate()
	}
	return r.rolloutRolling()
}

// claimReplicaSets adopts matching orphan ReplicaSets and releases owned ones that no
// longer match, as the ReplicaSet controller does with pods.
func (dc *Controller) claimReplicaSets(ctx context.Context, d *object.Deployment, sel object.Selector) ([]*object.ReplicaSet, error) {
	owner := claim.Owner{Meta: &d.ObjectMeta, APIVersion: "apps/v1", Kind: "Deployment", Selector: sel,
		Fresh: func(ctx context.Context) (*object.ObjectMeta, error) {
			fresh, err := dc.deploymentsIn(d.Namespace).Get(ctx, d.Name)
			if err != nil {
				return nil, err
			}
			return &fresh.ObjectMeta, nil
		}}
	candidates := dc.rsLister.Namespace(d.Namespace).List(object.Everything())
	return claim.Claim(ctx, owner, candidates, func(ctx context.Context, name string, patch []byte) error {
		rs, err := dc.replicaSetsIn(d.Namespace).Patch(ctx, name, listwatch.MergePatch, patch, "")
		if err == nil {
			dc.written.WroteAt(consistency.OwnerOf(&d.ObjectMeta), resourceReplicaSets, rs.ResourceVersion)
		}
		return err
	})
}

// checkPausedConditions records pausing and resuming in the Progressing condition, so
// that time spent paused never counts against the progress deadline.
func (r *rollout) checkPausedConditions() error {
	d := r.d
	if !hasProgressDeadline(d) {
		return nil
	}
	cond := condition(d.Status.Conditions, condProgressing)
	if cond != nil && cond.Reason == reasonTimedOut {
		return nil // a reported lack of progress is not overwritten by a pause
	}
	pausedCond := cond != nil && cond.Reason == reasonPaused
	switch {
	case d.Spec.Paused && !pausedCond:
		setCondition(&d.Status, r.newCondition(condProgressing, "Unknown", reasonPaused, "Deployment is paused"))
	case !d.Spec.Paused && pausedCond:
		setCondition(&d.Status, r.newCondition(condProgressing, "Unknown", reasonResumed, "Deployment is resumed"))
	default:
		return nil
	}
	return r.dc.writeStatus(r.ctx, d, d.Status)
}

// isScalingEvent: some active ReplicaSet was sized for another replica count than the
// Deployment's now: the user scaled, and only scaling (proportional when mid-rollout)
// happens in this sync. It only reads; the desired-replicas annotations it compares are
// written by scaling, never by the revision step.
func (r *rollout) isScalingEvent() bool {
	for _, rs := range active(withNew(r.olds, r.newRS)) {
		if desired, ok := intAnnotation(rs, DesiredReplicasAnnotation); ok && desired != replicasOf(r.d) {
			return true
		}
	}
	return false
}

// syncScaleAndStatus (kube-controller-manager's sync) scales without rolling, when
// paused or after a scaling event, cleans up old ReplicaSets while paused, and writes
// the status. It never creates the new ReplicaSet.
func (r *rollout) syncScaleAndStatus() error {
	if err := r.syncRevision(); err != nil {
		return err
	}
	newRS, olds := r.newRS, r.olds
	if err := r.scale(newRS, olds); err != nil {
		return err
	}
	if r.d.Spec.Paused {
		if err := r.cleanupHistory(olds); err != nil {
			return err
		}
	}
	return r.syncStatus(withNew(olds, newRS), newRS)
}

// syncStatusOnly is all a Deployment being deleted gets: its revision and status, no
// scaling, no new ReplicaSet.
func (r *rollout) syncStatusOnly() error {
	if err := r.syncRevision(); err != nil {
		return err
	}
	return r.syncStatus(withNew(r.olds, r.newRS), r.newRS)
}
