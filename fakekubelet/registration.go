package fakekubelet

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// nodeLeaseNamespace holds one Lease per node, named after it; kube-apiserver creates it.
const nodeLeaseNamespace = "kube-node-lease"

// nodeAgent is the kubelet's side of its Node: it registers the Node, keeps it alive
// (package doc), and removes it on exit when told. After registration one goroutine
// owns it.
type nodeAgent struct {
	k      *Kubelet
	clock  clock.Clock
	nodes  *listwatch.Resource[*object.Raw]
	leases *listwatch.Resource[*object.Lease]
	// node is the Node as last written or read: the base of the next status write, whose
	// resourceVersion precondition it provides.
	node *object.Raw
}

// register creates the Node, Ready, with the status this kubelet reports. A Node that
// exists already (an earlier kubelet's, or one made by hand) is adopted: its labels get
// the kubelet's own and its status is written, while what others set on it (taints, a
// cordon, annotations, conditions of other types) stays. Either way, the taints that
// say the node is not Ready are lifted (see liftNotReadyTaints).
func (a *nodeAgent) register(ctx context.Context) error {
	if err := a.createOrAdopt(ctx); err != nil {
		return err
	}
	return a.liftNotReadyTaints(ctx)
}

func (a *nodeAgent) createOrAdopt(ctx context.Context) error {
	n, err := a.k.nodeObject(a.clock.Now())
	if err != nil {
		return err
	}
	created, err := a.nodes.Create(ctx, n)
	if err == nil {
		a.node = created
		return nil
	}
	if !object.IsAlreadyExists(err) {
		return err
	}
	if a.node, err = a.nodes.Get(ctx, a.k.opts.NodeName); err != nil {
		return err
	}
	if ours := a.k.nodeLabels(); !containsAll(a.node.Labels, ours) {
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": ours}})
		if err != nil {
			return err
		}
		if a.node, err = a.nodes.Patch(ctx, a.k.opts.NodeName, listwatch.MergePatch, patch, ""); err != nil {
			return err
		}
	}
	return a.writeStatus(ctx)
}

func containsAll(have, want map[string]string) bool {
	for k, v := range want {
		if w, ok := have[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// notReadyTaints are the taints that say a node is not Ready (not-ready) or not heard
// from (unreachable).
var notReadyTaints = []string{"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}

// liftNotReadyTaints removes notReadyTaints from the Node, which is Ready now. That is
// kube-controller-manager's node lifecycle controller's job, not a kubelet's, but
// kube-apiserver puts the not-ready taint on every Node it creates, and where no
// kube-controller-manager runs nothing would ever lift it: the node would stay
// unschedulable to a scheduler and to tools that look for a schedulable node. Where one
// runs, it would lift them as soon as it saw the node Ready. Other taints stay; the
// list is replaced whole by a merge patch, so it is written under the resourceVersion it
// was read at.
func (a *nodeAgent) liftNotReadyTaints(ctx context.Context) error {
	for try := 0; ; try++ {
		var spec struct {
			Taints []json.RawMessage `json:"taints"`
		}
		if s := a.node.Unknown.Get("spec"); s != nil {
			if err := json.Unmarshal(s, &spec); err != nil {
				return err
			}
		}
		var kept []json.RawMessage // nil, written as null, removes the list
		for _, raw := range spec.Taints {
			var taint struct {
				Key string `json:"key"`
			}
			if json.Unmarshal(raw, &taint) != nil || !slices.Contains(notReadyTaints, taint.Key) {
				kept = append(kept, raw)
			}
		}
		if len(kept) == len(spec.Taints) {
			return nil
		}
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]string{"uid": a.node.UID, "resourceVersion": a.node.ResourceVersion},
			"spec":     map[string]any{"taints": kept},
		})
		if err != nil {
			return err
		}
		written, err := a.nodes.Patch(ctx, a.k.opts.NodeName, listwatch.MergePatch, patch, "")
		switch {
		case err == nil:
			a.node = written
			return nil
		case object.IsConflict(err) && try < 3:
			if a.node, err = a.nodes.Get(ctx, a.k.opts.NodeName); err != nil {
				return err
			}
		default:
			return err
		}
	}
}

// errNodeGone is a status write that found no Node: it was deleted under the kubelet.
var errNodeGone = errors.New("the node is gone")

// writeStatus writes the node's status as a merge patch of nodes/NAME/status, with the
// resourceVersion it was computed from as a precondition: the conditions are a list,
// which a merge patch replaces whole, so a write based on a stale read would drop a
// condition another component added meanwhile. On a conflict the Node is read again.
func (a *nodeAgent) writeStatus(ctx context.Context) error {
	for try := 0; ; try++ {
		var stored struct {
			Conditions []json.RawMessage `json:"conditions"`
		}
		if s := a.node.Unknown.Get("status"); s != nil {
			if err := json.Unmarshal(s, &stored); err != nil {
				return err
			}
		}
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]string{"uid": a.node.UID, "resourceVersion": a.node.ResourceVersion},
			"status":   a.k.nodeStatus(stored.Conditions, a.clock.Now()),
		})
		if err != nil {
			return err
		}
		written, err := a.nodes.Patch(ctx, a.k.opts.NodeName, listwatch.MergePatch, patch, "status")
		switch {
		case err == nil:
			a.node = written
			return nil
		case object.IsNotFound(err):
			return errNodeGone
		case object.IsConflict(err) && try < 3:
			current, err := a.nodes.Get(ctx, a.k.opts.NodeName)
			if object.IsNotFound(err) {
				return errNodeGone
			}
			if err != nil {
				return err
			}
			a.node = current
		default:
			return err
		}
	}
}

// heartbeat refreshes the node's status. A Node deleted while the kubelet runs is
// registered again, as a new Node (its Lease follows at the next renewal).
func (a *nodeAgent) heartbeat(ctx context.Context) error {
	err := a.writeStatus(ctx)
	if errors.Is(err, errNodeGone) {
		return a.register(ctx)
	}
	return err
}

// deregister deletes the Node and its Lease. The uid precondition leaves alone a Node
// of the same name that is not the one this kubelet registered. The Lease would follow
// the Node by garbage collection, where a kube-controller-manager runs; it is deleted
// here for the clusters where none does.
func (a *nodeAgent) deregister(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	name := a.k.opts.NodeName
	err := a.nodes.Delete(ctx, name, listwatch.DeleteOptions{Preconditions: &listwatch.Preconditions{UID: a.node.UID}})
	if err != nil && !object.IsNotFound(err) {
		return err
	}
	if err := a.leases.Delete(ctx, name, listwatch.DeleteOptions{}); err != nil && !object.IsNotFound(err) {
		return err
	}
	return nil
}
