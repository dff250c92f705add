package deployment

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kinformer/kinformer/controllers"
	"github.com/kinformer/kinformer/object"
)

// The rollout history: each ReplicaSet a Deployment rolled to carries a revision
// (deployment.kubernetes.io/revision), the new one the highest; the Deployment carries
// its new ReplicaSet's; `kubectl rollout history|undo` read them. Old ReplicaSets are
// kept, scaled to zero, up to revisionHistoryLimit.

// syncRevision is a sync's revision step, taken before anything is scaled: the new
// ReplicaSet gets the next revision if it has a lower one (an old ReplicaSet brought back
// by `kubectl rollout undo` keeps its former numbers in revision-history), the
// Deployment's annotations and its minReadySeconds; the Deployment gets the new
// ReplicaSet's revision; a Deployment without a Progressing condition records that its
// new ReplicaSet was found. Without a new ReplicaSet it does nothing: createNewRS gives
// one its revision when it makes it.
func (r *rollout) syncRevision() error {
	d, rs := r.d, r.newRS
	if rs == nil {
		return nil
	}
	annotations := maps.Clone(rs.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	if setNewRSAnnotations(annotations, d, maxRevision(r.olds)+1) || rs.Spec.MinReadySeconds != d.Spec.MinReadySeconds {
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": rs.ResourceVersion, "annotations": annotations},
			"spec":     map[string]any{"minReadySeconds": d.Spec.MinReadySeconds},
		})
		if err != nil {
			return err
		}
		if rs, err = r.dc.w.patchRS(r.ctx, rs.Namespace, rs.Name, patch); err != nil {
			return err
		}
		r.newRS = rs
	}
	if err := r.setDeploymentRevision(rs.Annotations[RevisionAnnotation]); err != nil {
		return err
	}
	if hasProgressDeadline(d) && condition(d.Status.Conditions, condProgressing) == nil {
		setCondition(&d.Status, r.newCondition(condProgressing, "True", reasonFoundNewRS, fmt.Sprintf("Found new replica set %q", rs.Name)))
		return r.dc.writeStatus(r.ctx, d, d.Status)
	}
	return nil
}

// revision reads a ReplicaSet's (or Deployment's) revision annotation; 0 when absent or
// unparseable.
func revision(m *object.ObjectMeta) int64 {
	v, err := strconv.ParseInt(m.Annotations[RevisionAnnotation], 10, 64)
	if err != nil {
		return 0
	}
	return v
}

func maxRevision(rss []*object.ReplicaSet) int64 {
	var m int64
	for _, rs := range rss {
		m = max(m, revision(&rs.ObjectMeta))
	}
	return m
}

// copiedToReplicaSets says whether a Deployment annotation goes to its ReplicaSets: all
// do but kubectl's last applied configuration and the controller's own.
func copiedToReplicaSets(annotation string) bool {
	switch annotation {
	case "kubectl.kubernetes.io/last-applied-configuration", RevisionAnnotation, RevisionHistoryAnnotation,
		DesiredReplicasAnnotation, MaxReplicasAnnotation, "deprecated.deployment.rollback.to":
		return false
	}
	return true
}

// setNewRSAnnotations updates the annotations a of the new ReplicaSet: the Deployment's
// own annotations, and the revision raised to newRevision, the former one going to
// revision-history. It reports whether anything changed.
func setNewRSAnnotations(a map[string]string, d *object.Deployment, newRevision int64) bool {
	changed := false
	for k, v := range d.Annotations {
		if !copiedToReplicaSets(k) || a[k] == v {
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

// setDeploymentRevision writes the new ReplicaSet's revision onto the Deployment.
func (r *rollout) setDeploymentRevision(rev string) error {
	d := r.d
	if rev == "" || d.Annotations[RevisionAnnotation] == rev {
		return nil
	}
	// The resourceVersion read makes the write conditional: a process that lost this
	// namespace while its write was on its way cannot overwrite its new owner's.
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": d.ResourceVersion,
		"annotations": map[string]string{RevisionAnnotation: rev}}})
	if err != nil {
		return err
	}
	if err := r.dc.w.patchDeployment(r.ctx, d, "", patch); err != nil {
		return controllers.OutdatedIfConflict(resourceDeployments, err)
	}
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	d.Annotations[RevisionAnnotation] = rev
	return nil
}

// cleanupHistory deletes the oldest old ReplicaSets beyond revisionHistoryLimit, only
// those fully scaled down and settled (no replicas, no pods, status caught up): what
// `kubectl rollout undo` can still return to is exactly what is kept.
func (r *rollout) cleanupHistory(olds []*object.ReplicaSet) error {
	d := r.d
	var alive []*object.ReplicaSet
	for _, rs := range olds {
		if rs.DeletionTimestamp == nil {
			alive = append(alive, rs)
		}
	}
	excess := len(alive) - int(revisionHistoryLimit(d))
	if excess <= 0 {
		return nil
	}
	slices.SortFunc(alive, byRevision)
	for _, rs := range alive[:excess] {
		if rs.Status.Replicas != 0 || rsReplicas(rs) != 0 || rs.Generation > rs.Status.ObservedGeneration {
			continue
		}
		err := r.dc.w.deleteRS(r.ctx, rs.Namespace, rs.Name, rs.UID)
		if err != nil && !object.IsNotFound(err) && !object.IsConflict(err) {
			return err
		}
	}
	return nil
}
