package deployment

import (
	"context"
	"log/slog"
	"time"

	"github.com/kinformer/kinformer/controllers"
	"github.com/kinformer/kinformer/controllers/consistency"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// Name is the controller's name in metrics and in --controllers.
const Name = "deployment"

// Options configure a Controller (see controllers.Options).
type Options = controllers.Options

// The resources the controller reads, as the informers and the read-your-writes records
// name them.
const (
	resourceDeployments = "deployments.apps"
	resourceReplicaSets = "replicasets.apps"
	resourcePods        = "pods"
)

// Controller is the Deployment controller.
type Controller struct {
	// Its queue, workers and handlers, and the methods a controller manager calls:
	// Syncers, Run, Queue, Requeue, Forget.
	*controllers.Base[*object.Deployment]

	client   *listwatch.Client
	dInfo    listwatch.ResourceInfo
	rsInfo   listwatch.ResourceInfo
	dLister  informer.Lister[*object.Deployment]
	rsLister informer.Lister[*object.ReplicaSet]
	log      *slog.Logger
	now      func() time.Time
	w        writer
	// written is the read-your-writes guard: the resourceVersions of each Deployment's
	// writes (its ReplicaSets, its own metadata and status) until the informers show them.
	written *consistency.Store
	// cachedPods lists a namespace's cached pods (a Recreate rollout waits for old ones).
	cachedPods func(ns string) []*object.Pod
}

// New registers the controller's informers (deployments, replicasets, pods) and
// handlers on f, the process's shared factory; Run starts its workers.
func New(ctx context.Context, f *informer.Factory, c *listwatch.Client, opts Options) (*Controller, error) {
	opts = opts.WithDefaults()
	dInf, err := informer.For[*object.Deployment](ctx, f, resourceDeployments, informer.Selectors{Namespace: opts.Namespace})
	if err != nil {
		return nil, err
	}
	rsInf, err := informer.For[*object.ReplicaSet](ctx, f, resourceReplicaSets, informer.Selectors{Namespace: opts.Namespace})
	if err != nil {
		return nil, err
	}
	podInf, err := informer.For[*object.Pod](ctx, f, resourcePods, informer.Selectors{Namespace: opts.Namespace})
	if err != nil {
		return nil, err
	}
	dc := &Controller{client: c, dLister: dInf.Lister(), rsLister: rsInf.Lister(),
		log: opts.Logger.With("controller", Name), now: opts.Now,
		// kube-controller-manager has no such guard for Deployments (1.36 has it for
		// ReplicaSets, DaemonSets, StatefulSets and Jobs), but a Deployment's sync decides
		// from the ReplicaSets it scaled and the status it wrote just as much.
		written:    consistency.New(map[string]consistency.Source{resourceDeployments: dInf, resourceReplicaSets: rsInf}),
		cachedPods: func(ns string) []*object.Pod { return podInf.Lister().Namespace(ns).List(object.Everything()) },
	}
	dc.w = apiWriter{dc}
	dc.Base = controllers.NewBase(controllers.Config[*object.Deployment]{Name: Name, Sync: dc.sync,
		APIVersion: "apps/v1", Kind: "Deployment", Lister: dInf.Lister(),
		Selector: func(d *object.Deployment) *object.LabelSelector { return d.Spec.Selector },
		Written:  dc.written}, opts)
	if dc.dInfo, err = c.Discover(ctx, resourceDeployments); err != nil {
		return nil, err
	}
	if dc.rsInfo, err = c.Discover(ctx, resourceReplicaSets); err != nil {
		return nil, err
	}
	if err := controllers.WatchObjects(dc.Base, dInf, opts.ResyncPeriod); err != nil {
		return nil, err
	}
	if err := controllers.WatchDependents(dc.Base, rsInf, controllers.DependentOptions{}); err != nil {
		return nil, err
	}
	if err := controllers.Watch(dc.Base, podInf, informer.HandlerFuncs[*object.Pod]{DeleteFunc: dc.deletePod}); err != nil {
		return nil, err
	}
	return dc, nil
}

// replicaSetsIn and deploymentsIn are handles for writes in one namespace.
func (dc *Controller) replicaSetsIn(ns string) *listwatch.Resource[*object.ReplicaSet] {
	return listwatch.For[*object.ReplicaSet](dc.client, dc.rsInfo, ns)
}

func (dc *Controller) deploymentsIn(ns string) *listwatch.Resource[*object.Deployment] {
	return listwatch.For[*object.Deployment](dc.client, dc.dInfo, ns)
}
