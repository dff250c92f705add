package deployment

import (
	"context"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// writer is every write a sync makes. The controller writes to the apiserver; the
// rollout tests record the writes instead, to check each step's decisions.
type writer interface {
	createRS(ctx context.Context, rs *object.ReplicaSet) (*object.ReplicaSet, error)
	patchRS(ctx context.Context, ns, name string, patch []byte) (*object.ReplicaSet, error)
	deleteRS(ctx context.Context, ns, name, uid string) error
	// patchDeployment patches the Deployment (sub "") or its status (sub "status").
	patchDeployment(ctx context.Context, ns, name, sub string, patch []byte) error
}

// apiWriter writes through the client.
type apiWriter struct{ dc *Controller }

func (w apiWriter) createRS(ctx context.Context, rs *object.ReplicaSet) (*object.ReplicaSet, error) {
	return w.dc.replicaSetsIn(rs.Namespace).Create(ctx, rs)
}

func (w apiWriter) patchRS(ctx context.Context, ns, name string, patch []byte) (*object.ReplicaSet, error) {
	return w.dc.replicaSetsIn(ns).Patch(ctx, name, listwatch.MergePatch, patch, "")
}

func (w apiWriter) deleteRS(ctx context.Context, ns, name, uid string) error {
	return w.dc.replicaSetsIn(ns).Delete(ctx, name, listwatch.DeleteOptions{Preconditions: &listwatch.Preconditions{UID: uid}})
}

func (w apiWriter) patchDeployment(ctx context.Context, ns, name, sub string, patch []byte) error {
	_, err := w.dc.deploymentsIn(ns).Patch(ctx, name, listwatch.MergePatch, patch, sub)
	return err
}
