package deployment

import (
	"fmt"
	"maps"
	"slices"

	"github.com/kinformer/kinformer/controllers/events"
	"github.com/kinformer/kinformer/object"
)

// splitReplicaSets splits a Deployment's ReplicaSets into the new one (its template is
// the Deployment's; nil when there is none yet) and the old ones, in rss's order. It
// only reads.
func splitReplicaSets(d *object.Deployment, rss []*object.ReplicaSet) (*object.ReplicaSet, []*object.ReplicaSet) {
	newRS := findNew(d, rss)
	var olds []*object.ReplicaSet
	for _, rs := range rss {
		if newRS == nil || rs.UID != newRS.UID {
			olds = append(olds, rs)
		}
	}
	return newRS, olds
}

// findNew returns the oldest ReplicaSet whose template is the Deployment's, ignoring the
// pod-template-hash label (see sameTemplate), with the Deployment's template made
// canonical once: after some upgrades two may match, and the oldest is chosen so the
// choice never flips.
func findNew(d *object.Deployment, rss []*object.ReplicaSet) *object.ReplicaSet {
	want, err := canonical(&d.Spec.Template)
	if err != nil {
		return nil
	}
	sorted := slices.Clone(rss)
	slices.SortFunc(sorted, byAge)
	for _, rs := range sorted {
		if want.matches(&rs.Spec.Template) {
			return rs
		}
	}
	return nil
}

// createNewRS creates the new ReplicaSet with the next revision, as large as the
// strategy allows now, and makes it the rollout's; the Deployment takes its revision. A
// name already taken is this controller's own ReplicaSet from an earlier sync, which
// becomes the new one, or another template's, which raises collisionCount (see
// nameTaken).
func (r *rollout) createNewRS() error {
	d := r.d
	rs, err := r.newReplicaSet()
	if err != nil {
		return err
	}
	created, err := r.dc.w.createRS(r.ctx, rs)
	switch {
	case object.IsAlreadyExists(err):
		ours, err := r.nameTaken(rs.Name, err)
		if err != nil {
			return err
		}
		if err := r.setDeploymentRevision(ours.Annotations[RevisionAnnotation]); err != nil {
			return err
		}
		r.newRS = ours
		return nil
	case err != nil:
		return r.failedCreate(rs.Name, err)
	}
	if n := rsReplicas(rs); n > 0 {
		r.dc.Event(d, events.Normal, "ScalingReplicaSet", "Scaled up replica set %s from 0 to %d", created.Name, n)
	}
	if err := r.setDeploymentRevision(created.Annotations[RevisionAnnotation]); err != nil {
		return err
	}
	if hasProgressDeadline(d) {
		setCondition(&d.Status, r.newCondition(condProgressing, "True", reasonNewRSCreated, fmt.Sprintf("Created new replica set %q", created.Name)))
		if err := r.dc.writeStatus(r.ctx, d, d.Status); err != nil {
			return err
		}
	}
	r.newRS = created
	return nil
}

// newReplicaSet builds the new ReplicaSet: named NAME-HASH, its labels, selector and
// template carrying the pod-template-hash label, the Deployment's annotations and the
// next revision, and the size the strategy allows now.
func (r *rollout) newReplicaSet() (*object.ReplicaSet, error) {
	d := r.d
	hash, err := templateHash(&d.Spec.Template, d.Status.CollisionCount)
	if err != nil {
		return nil, err
	}
	template := withHash(d.Spec.Template, hash)
	selector, err := selectorWithHash(d.Spec.Selector, hash)
	if err != nil {
		return nil, err
	}
	rs := &object.ReplicaSet{
		TypeMeta: object.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: object.ObjectMeta{Name: d.Name + "-" + hash, Namespace: d.Namespace,
			Labels: maps.Clone(template.Labels), Annotations: map[string]string{},
			OwnerReferences: []object.OwnerReference{object.NewControllerRef(&d.ObjectMeta, "apps/v1", "Deployment")}},
		Spec: object.ReplicaSetSpec{MinReadySeconds: d.Spec.MinReadySeconds, Selector: selector, Template: template},
	}
	zero := int32(0)
	rs.Spec.Replicas = &zero
	n := r.newRSReplicas(withNew(r.olds, rs), rs)
	rs.Spec.Replicas = &n
	setNewRSAnnotations(rs.Annotations, d, maxRevision(r.olds)+1)
	setReplicasAnnotations(rs.Annotations, replicasOf(d), replicasOf(d)+maxSurge(d))
	return rs, nil
}

// nameTaken handles a create refused because the name exists. The ReplicaSet of that
// name is returned when it is this Deployment's with its template: its own create of an
// earlier sync. Any other template under that name is a hash collision: collisionCount
// goes up, so the next sync tries another name.
func (r *rollout) nameTaken(name string, err error) (*object.ReplicaSet, error) {
	d := r.d
	cur, ok := r.dc.rsLister.Get(object.KeyFor(d.Namespace, name))
	if !ok {
		// Most likely this controller's own create of an earlier sync, which the cache
		// has not shown yet: look again once it has.
		return nil, fmt.Errorf("replica set %s exists but is not in the cache yet: %w", name, err)
	}
	if ref := object.ControllerRef(&cur.ObjectMeta); ref != nil && ref.UID == d.UID && sameTemplate(&cur.Spec.Template, &d.Spec.Template) {
		return cur, nil
	}
	cc := int32(0)
	if d.Status.CollisionCount != nil {
		cc = *d.Status.CollisionCount
	}
	cc++
	d.Status.CollisionCount = &cc
	if werr := r.dc.writeStatus(r.ctx, d, d.Status); werr != nil {
		return nil, werr
	}
	return nil, fmt.Errorf("replica set %s exists with another template: collision count now %d: %w", name, cc, err)
}

// failedCreate reports a create that failed in the Progressing condition and in an
// event, and returns its error.
func (r *rollout) failedCreate(name string, err error) error {
	d := r.d
	msg := fmt.Sprintf("Failed to create new replica set %q: %v", name, err)
	if hasProgressDeadline(d) {
		setCondition(&d.Status, r.newCondition(condProgressing, "False", reasonFailedRSCreate, msg))
		if werr := r.dc.writeStatus(r.ctx, d, d.Status); werr != nil {
			return werr
		}
	}
	r.dc.Event(d, events.Warning, reasonFailedRSCreate, "%s", msg)
	return err
}
