package deployment

import (
	"context"

	"github.com/kinformer/kinformer/controllers/consistency"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// writer is every write a sync makes. The controller writes to the apiserver; the
// rollout tests record the writes instead, to check each step's decisions.
type writer interface {
	createRS(ctx context.Context, rs *object.ReplicaSet) (*object.ReplicaSet, error)
	patchRS(ctx context.Context, ns, name string, patch []byte) (*object.ReplicaSet, error)
	deleteRS(ctx context.Context, ns, name, uid string) error
	// patchDeployment patches d (sub "") or its status (sub "status"), and keeps d's
	// resourceVersion that of the write, for the next patch's precondition.
	patchDeployment(ctx context.Context, d *object.Deployment, sub string, patch []byte) error
}

// apiWriter writes through the client, and records each write's resourceVersion for
// the read-your-writes guard, under the Deployment it was made for.
type apiWriter struct{ dc *Controller }

func (w apiWriter) createRS(ctx context.Context, rs *object.ReplicaSet) (*object.ReplicaSet, error) {
	created, err := w.dc.replicaSetsIn(rs.Namespace).Create(ctx, rs)
	if err == nil {
		w.wroteRS(created)
	}
	return created, err
}

func (w apiWriter) patchRS(ctx context.Context, ns, name string, patch []byte) (*object.ReplicaSet, error) {
	patched, err := w.dc.replicaSetsIn(ns).Patch(ctx, name, listwatch.MergePatch, patch, "")
	if err == nil {
		w.wroteRS(patched)
	}
	return patched, err
}

// deleteRS is not recorded: the client's Delete returns no object, so no
// resourceVersion. A sync on a cache that still shows the ReplicaSet picks the same one
// again (the oldest revision), and deleting it again changes nothing (cleanupHistory
// takes NotFound as done).
func (w apiWriter) deleteRS(ctx context.Context, ns, name, uid string) error {
	return w.dc.replicaSetsIn(ns).Delete(ctx, name, listwatch.DeleteOptions{Preconditions: &listwatch.Preconditions{UID: uid}})
}

func (w apiWriter) patchDeployment(ctx context.Context, d *object.Deployment, sub string, patch []byte) error {
	written, err := w.dc.deploymentsIn(d.Namespace).Patch(ctx, d.Name, listwatch.MergePatch, patch, sub)
	if err == nil {
		d.ResourceVersion = written.ResourceVersion
		w.dc.written.WroteAt(consistency.OwnerOf(&written.ObjectMeta), resourceDeployments, written.ResourceVersion)
	}
	return err
}

// wroteRS records a write of a ReplicaSet under the Deployment that controls it: the
// controller writes only the ReplicaSets it controls, on behalf of their Deployment.
func (w apiWriter) wroteRS(rs *object.ReplicaSet) {
	ref := object.ControllerRef(&rs.ObjectMeta)
	if ref == nil || ref.Kind != "Deployment" {
		return
	}
	owner := consistency.Owner{Key: object.KeyFor(rs.Namespace, ref.Name), UID: ref.UID}
	w.dc.written.WroteAt(owner, resourceReplicaSets, rs.ResourceVersion)
}
