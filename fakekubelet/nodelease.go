package fakekubelet

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// renewLease tells the control plane the node is alive: its Lease in kube-node-lease,
// named after it, says who holds it (the node), for how long a silence is tolerated, and
// when it was last renewed. kube-controller-manager's node lifecycle controller marks a
// node whose Lease is not renewed in time NotReady, then evicts its pods.
//
// The renewal is a merge patch of those three fields and no precondition: the kubelet is
// the Lease's only writer, and whatever else is stored on it stays. A missing Lease is
// created, owned by the Node, so that the garbage collector deletes it with the Node.
func (a *nodeAgent) renewLease(ctx context.Context) error {
	name := a.k.opts.NodeName
	spec := leaseSpec{HolderIdentity: name, LeaseDurationSeconds: a.k.leaseSeconds(),
		RenewTime: object.NewMicroTime(a.clock.Now())}
	patch, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		return err
	}
	lease, err := a.leases.Patch(ctx, name, listwatch.MergePatch, patch, "")
	if object.IsNotFound(err) {
		return a.createLease(ctx, spec)
	}
	if err != nil {
		return err
	}
	return a.ownLease(ctx, lease)
}

// leaseSpec is what a renewal writes.
type leaseSpec struct {
	HolderIdentity       string           `json:"holderIdentity"`
	LeaseDurationSeconds int32            `json:"leaseDurationSeconds"`
	RenewTime            object.MicroTime `json:"renewTime"`
}

func (a *nodeAgent) createLease(ctx context.Context, spec leaseSpec) error {
	lease := &object.Lease{
		TypeMeta: object.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
		ObjectMeta: object.ObjectMeta{Namespace: nodeLeaseNamespace, Name: a.k.opts.NodeName,
			OwnerReferences: []object.OwnerReference{a.ownerRef()}},
		Spec: object.LeaseSpec{HolderIdentity: &spec.HolderIdentity,
			LeaseDurationSeconds: &spec.LeaseDurationSeconds, RenewTime: &spec.RenewTime},
	}
	_, err := a.leases.Create(ctx, lease)
	return err
}

// ownerRef is the reference a kubelet puts on its Lease: to the Node, neither
// controller nor blocking its deletion.
func (a *nodeAgent) ownerRef() object.OwnerReference {
	return object.OwnerReference{APIVersion: "v1", Kind: "Node", Name: a.node.Name, UID: a.node.UID}
}

// ownLease makes the Node the Lease's owner when it is not (the Lease outlived an
// earlier Node of the same name, on a cluster without a garbage collector): a reference
// to another Node goes, others' references stay. The list is replaced whole by the
// patch, so it is written under the resourceVersion it was read at.
func (a *nodeAgent) ownLease(ctx context.Context, lease *object.Lease) error {
	ref := a.ownerRef()
	if slices.ContainsFunc(lease.OwnerReferences, func(r object.OwnerReference) bool {
		return r.APIVersion == ref.APIVersion && r.Kind == ref.Kind && r.Name == ref.Name && r.UID == ref.UID
	}) {
		return nil
	}
	refs := slices.DeleteFunc(slices.Clone(lease.OwnerReferences), func(r object.OwnerReference) bool {
		return r.APIVersion == "v1" && r.Kind == "Node"
	})
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": lease.ResourceVersion, "ownerReferences": append(refs, ref)}})
	if err != nil {
		return err
	}
	_, err = a.leases.Patch(ctx, a.k.opts.NodeName, listwatch.MergePatch, patch, "")
	return err
}
