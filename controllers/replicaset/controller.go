package replicaset

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kinformer/kinformer/controllers"
	"github.com/kinformer/kinformer/controllers/consistency"
	"github.com/kinformer/kinformer/controllers/expectations"
	"github.com/kinformer/kinformer/indexer"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// Name is the controller's name in metrics and in --controllers.
const Name = "replicaset"

// BurstReplicas caps the pods one sync creates or deletes, as kube-controller-manager does.
const BurstReplicas = 500

// controllerUIDIndex indexes pods by the UID of their ControllerRef.
const controllerUIDIndex = "replicaset.controllerUID"

// The resources the controller reads and writes, as the informers and the read-your-writes
// records name them.
const (
	resourcePods        = "pods"
	resourceReplicaSets = "replicasets.apps"
)

// Options configure a Controller (see controllers.Options).
type Options = controllers.Options

// Controller is the ReplicaSet controller.
type Controller struct {
	// Its queue, workers and handlers, and the methods a controller manager calls:
	// Syncers, Run, Queue, Requeue, Forget.
	*controllers.Base[*object.ReplicaSet]

	client    *listwatch.Client
	podInfo   listwatch.ResourceInfo
	rsInfo    listwatch.ResourceInfo
	rsLister  informer.Lister[*object.ReplicaSet]
	podLister informer.Lister[*object.Pod]
	exp       *expectations.Expectations
	// written is the read-your-writes guard: the resourceVersions of the pod and
	// ReplicaSet writes of each ReplicaSet's syncs, until the informers have shown them.
	written *consistency.Store
	log     *slog.Logger
	now     func() time.Time
}

// New registers the controller's informers and handlers on f (the process's shared
// factory) and returns it; Run starts its workers. Informers keep running without
// workers, so a standby controller manager stays warm.
func New(ctx context.Context, f *informer.Factory, c *listwatch.Client, opts Options) (*Controller, error) {
	opts = opts.WithDefaults()
	rsInf, err := informer.For[*object.ReplicaSet](ctx, f, resourceReplicaSets, informer.Selectors{Namespace: opts.Namespace})
	if err != nil {
		return nil, err
	}
	podInf, err := informer.For[*object.Pod](ctx, f, resourcePods, informer.Selectors{Namespace: opts.Namespace})
	if err != nil {
		return nil, err
	}
	if err := podInf.Cache().AddIndexers(map[string]indexer.IndexFunc[*object.Pod]{controllerUIDIndex: byControllerUID}); err != nil {
		return nil, fmt.Errorf("replicaset: %w", err)
	}
	rc := &Controller{
		client: c, rsLister: rsInf.Lister(), podLister: podInf.Lister(),
		exp:     expectations.New(0, opts.Now),
		written: consistency.New(map[string]consistency.Source{resourcePods: podInf, resourceReplicaSets: rsInf}),
		log:     opts.Logger.With("controller", Name), now: opts.Now,
	}
	rc.Base = controllers.NewBase(controllers.Config[*object.ReplicaSet]{Name: Name, Sync: rc.sync,
		APIVersion: "apps/v1", Kind: "ReplicaSet", Lister: rsInf.Lister(),
		Selector:     func(rs *object.ReplicaSet) *object.LabelSelector { return rs.Spec.Selector },
		Expectations: rc.exp, Written: rc.written}, opts)
	if rc.podInfo, err = c.Discover(ctx, resourcePods); err != nil {
		return nil, err
	}
	if rc.rsInfo, err = c.Discover(ctx, resourceReplicaSets); err != nil {
		return nil, err
	}
	if err := controllers.WatchObjects(rc.Base, rsInf, opts.ResyncPeriod); err != nil {
		return nil, err
	}
	if err := controllers.WatchDependents(rc.Base, podInf, controllers.DependentOptions{TerminatingIsDeleted: true}); err != nil {
		return nil, err
	}
	return rc, nil
}

// byControllerUID indexes a pod under its ControllerRef's UID.
func byControllerUID(p *object.Pod) ([]string, error) {
	if ref := object.ControllerRef(&p.ObjectMeta); ref != nil {
		return []string{ref.UID}, nil
	}
	return nil, nil
}

// podsIn and replicaSetsIn are handles for writes in one namespace.
func (rc *Controller) podsIn(ns string) *listwatch.Resource[*object.Pod] {
	return listwatch.For[*object.Pod](rc.client, rc.podInfo, ns)
}

func (rc *Controller) replicaSetsIn(ns string) *listwatch.Resource[*object.ReplicaSet] {
	return listwatch.For[*object.ReplicaSet](rc.client, rc.rsInfo, ns)
}

// wrote records a write made by a sync of rs, with the resourceVersion it answered.
func (rc *Controller) wrote(rs *object.ReplicaSet, resource, resourceVersion string) {
	rc.written.WroteAt(consistency.OwnerOf(&rs.ObjectMeta), resource, resourceVersion)
}
