package deployment

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kinformer/kinformer/controllers/events"
	"github.com/kinformer/kinformer/object"
)

// replicaSets splits the Deployment's ReplicaSets into the new one (its template is the
// Deployment's) and the old ones, bringing the new one's revision and annotations up to
// date. With create, a missing new ReplicaSet is created.
func (r *rollout) replicaSets(create bool) (*object.ReplicaSet, []*object.ReplicaSet, error) {
	existing := r.findNew()
	var olds []*object.ReplicaSet
	for _, rs := range r.rss {
		if existing == nil || rs.UID != existing.UID {
			olds = append(olds, rs)
		}
	}
	newRS, err := r.syncNewRS(existing, olds, create)
	return newRS, olds, err
}

// findNew returns the oldest ReplicaSet whose template is the Deployment's: after some
// upgrades two may match, and the oldest is chosen so the choice never flips.
func (r *rollout) findNew() *object.ReplicaSet {
	sorted := slices.Clone(r.rss)
	slices.SortFunc(sorted, byAge)
	for _, rs := range sorted {
		if sameTemplate(&rs.Spec.Template, &r.d.Spec.Template) {
			return rs
		}
	}
	return nil
}

// replace swaps a ReplicaSet of the rollout for its newer state.
func (r *rollout) replace(rs *object.ReplicaSet) {
	for i := range r.rss {
		if r.rss[i].UID == rs.UID {
			r.rss[i] = rs
			return
		}
	}
	r.rss = append(r.rss, rs)
}

func (r *rollout) syncNewRS(existing *object.ReplicaSet, olds []*object.ReplicaSet, create bool) (*object.ReplicaSet, error) {
	d := r.d
	newRevision := maxRevision(olds) + 1
	if existing != nil {
		return r.updateNewRS(existing, newRevision)
	}
	if !create {
		return nil, nil
	}
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
	n := r.newRSReplicas(withNew(olds, rs), rs)
	rs.Spec.Replicas = &n
	r.setNewRSAnnotations(rs.Annotations, newRevision, false)

	created, err := r.dc.w.createRS(r.ctx, rs)
	found := false
	switch {
	case object.IsAlreadyExists(err):
		// Ours from an earlier sync whose create the cache has not shown yet, or a
		// different template with the same hash: then the collision count changes the
		// name of the next attempt.
		cur, ok := r.dc.rsLister.Get(object.KeyFor(d.Namespace, rs.Name))
		if !ok {
			// Most likely this controller's own create of an earlier sync, which the
			// cache has not shown yet: look again once it has.
			return nil, fmt.Errorf("replica set %s exists but is not in the cache yet: %w", rs.Name, err)
		}
		if ref := object.ControllerRef(&cur.ObjectMeta); ref != nil && ref.UID == d.UID && sameTemplate(&cur.Spec.Template, &d.Spec.Template) {
			created, err, found = cur, nil, true
			break
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
		return nil, fmt.Errorf("replica set %s exists with another template: collision count now %d: %w", rs.Name, cc, err)
	case err != nil:
		msg := fmt.Sprintf("Failed to create new replica set %q: %v", rs.Name, err)
		if hasProgressDeadline(d) {
			setCondition(&d.Status, r.newCondition(condProgressing, "False", reasonFailedRSCreate, msg))
			if werr := r.dc.writeStatus(r.ctx, d, d.Status); werr != nil {
				return nil, werr
			}
		}
		r.dc.event(d, events.Warning, reasonFailedRSCreate, "%s", msg)
		return nil, err
	}
	if !found && n > 0 {
		r.dc.event(d, events.Normal, "ScalingReplicaSet", "Scaled up replica set %s from 0 to %d", created.Name, n)
	}
	if err := r.setDeploymentRevision(created.Annotations[RevisionAnnotation]); err != nil {
		return nil, err
	}
	if !found && hasProgressDeadline(d) {
		setCondition(&d.Status, r.newCondition(condProgressing, "True", reasonNewRSCreated, fmt.Sprintf("Created new replica set %q", created.Name)))
		if err := r.dc.writeStatus(r.ctx, d, d.Status); err != nil {
			return nil, err
		}
	}
	r.replace(created)
	return created, nil
}

// updateNewRS brings an existing new ReplicaSet's annotations (revision, copied
// Deployment annotations) and minReadySeconds up to date, and the Deployment's revision.
func (r *rollout) updateNewRS(rs *object.ReplicaSet, newRevision int64) (*object.ReplicaSet, error) {
	d := r.d
	annotations := maps.Clone(rs.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	if r.setNewRSAnnotations(annotations, newRevision, true) || rs.Spec.MinReadySeconds != d.Spec.MinReadySeconds {
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": rs.ResourceVersion, "annotations": annotations},
			"spec":     map[string]any{"minReadySeconds": d.Spec.MinReadySeconds},
		})
		if err != nil {
			return nil, err
		}
		if rs, err = r.dc.w.patchRS(r.ctx, rs.Namespace, rs.Name, patch); err != nil {
			return nil, err
		}
		r.replace(rs)
	}
	if err := r.setDeploymentRevision(rs.Annotations[RevisionAnnotation]); err != nil {
		return nil, err
	}
	if hasProgressDeadline(d) && condition(d.Status.Conditions, condProgressing) == nil {
		setCondition(&d.Status, r.newCondition(condProgressing, "True", reasonFoundNewRS, fmt.Sprintf("Found new replica set %q", rs.Name)))
		if err := r.dc.writeStatus(r.ctx, d, d.Status); err != nil {
			return nil, err
		}
	}
	return rs, nil
}

// annotationsNotCopied are the Deployment annotations that never go to its ReplicaSets.
var annotationsNotCopied = []string{"kubectl.kubernetes.io/last-applied-configuration", RevisionAnnotation,
	RevisionHistoryAnnotation, DesiredReplicasAnnotation, MaxReplicasAnnotation, "deprecated.deployment.rollback.to"}

// setNewRSAnnotations updates a new ReplicaSet's annotations: the Deployment's own
// annotations, the revision (raised to newRevision, an old ReplicaSet brought back
// keeping its former revisions in revision-history), and for a ReplicaSet about to be
// created the replica annotations. It reports whether anything changed.
func (r *rollout) setNewRSAnnotations(a map[string]string, newRevision int64, exists bool) bool {
	d := r.d
	changed := false
	for k, v := range d.Annotations {
		if slices.Contains(annotationsNotCopied, k) || a[k] == v {
			continue
		}
		a[k], changed = v, true
	}
	old, had := a[RevisionAnnotation]
	oldRevision, err := strconv.ParseInt(old, 10, 64)
	if err != nil {
		if old != "" {
			return changed // an unparseable revision is left for a human to look at
		}
		oldRevision = 0
	}
	if oldRevision < newRevision {
		a[RevisionAnnotation], changed = strconv.FormatInt(newRevision, 10), true
		if had {
			a[RevisionHistoryAnnotation] = appendHistory(a[RevisionHistoryAnnotation], old)
		}
	}
	if !exists && setReplicasAnnotations(a, replicasOf(d), replicasOf(d)+maxSurge(d)) {
		changed = true
	}
	return changed
}

// appendHistory adds a former revision to the comma-separated history, dropping the
// oldest entries beyond maxRevisionHistoryChars.
func appendHistory(history, revision string) string {
	if history == "" {
		return revision
	}
	entries := append(strings.Split(history, ","), revision)
	for len(strings.Join(entries, ",")) > maxRevisionHistoryChars && len(entries) > 1 {
		entries = entries[1:]
	}
	return strings.Join(entries, ",")
}

// setReplicasAnnotations records for what Deployment size (and surge) a ReplicaSet was
// sized: proportional scaling reads it back.
func setReplicasAnnotations(a map[string]string, desired, maxReplicas int32) bool {
	ds, ms := strconv.Itoa(int(desired)), strconv.Itoa(int(maxReplicas))
	if a[DesiredReplicasAnnotation] == ds && a[MaxReplicasAnnotation] == ms {
		return false
	}
	a[DesiredReplicasAnnotation], a[MaxReplicasAnnotation] = ds, ms
	return true
}

// setDeploymentRevision writes the new ReplicaSet's revision onto the Deployment.
func (r *rollout) setDeploymentRevision(rev string) error {
	d := r.d
	if rev == "" || d.Annotations[RevisionAnnotation] == rev {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{RevisionAnnotation: rev}}})
	if err != nil {
		return err
	}
	if err := r.dc.w.patchDeployment(r.ctx, d.Namespace, d.Name, "", patch); err != nil {
		return err
	}
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	d.Annotations[RevisionAnnotation] = rev
	return nil
}
