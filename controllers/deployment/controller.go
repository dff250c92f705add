package deployment

import (
	"context"
	"log/slog"
	"time"

	"github.com/kinformer/kinformer/controllers"
	"github.com/kinformer/kinformer/controllers/consistency"
	"github.com/kinformer/kinformer/controllers/events"
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
	controllers.Runner // its queue and workers: Syncers, Run, Queue

	client   *listwatch.Client
	dInfo    listwatch.ResourceInfo
	rsInfo   listwatch.ResourceInfo
	dLister  informer.Lister[*object.Deployment]
	rsLister informer.Lister[*object.ReplicaSet]
	// owners finds the Deployments of a ReplicaSet, for the ReplicaSet event handlers.
	owners   controllers.Owners[*object.Deployment]
	recorder *events.Recorder
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
		owners: controllers.Owners[*object.Deployment]{Lister: dInf.Lister(), Group: "apps", Kind: "Deployment",
			Selector: func(d *object.Deployment) *object.LabelSelector { return d.Spec.Selector }},
		recorder: opts.Recorder, log: opts.Logger.With("controller", Name), now: opts.Now,
		// kube-controller-manager has no such guard for Deployments (1.36 has it for
		// ReplicaSets, DaemonSets, StatefulSets and Jobs), but a Deployment's sync decides
		// from the ReplicaSets it scaled and the status it wrote just as much.
		written:    consistency.New(map[string]consistency.Source{resourceDeployments: dInf, resourceReplicaSets: rsInf}),
		cachedPods: func(ns string) []*object.Pod { return podInf.Lister().Namespace(ns).List(object.Everything()) },
	}
	dc.w = apiWriter{dc}
	dc.Runner = controllers.NewRunner(Name, dc.sync, opts)
	if dc.dInfo, err = c.Discover(ctx, resourceDeployments); err != nil {
		return nil, err
	}
	if dc.rsInfo, err = c.Discover(ctx, resourceReplicaSets); err != nil {
		return nil, err
	}
	dReg, err := dInf.AddEventHandler(informer.HandlerFuncs[*object.Deployment]{
		AddFunc: dc.addDeployment, UpdateFunc: dc.updateDeployment, DeleteFunc: dc.deleteDeployment,
	}, informer.HandlerOptions{Name: Name, ResyncPeriod: opts.ResyncPeriod})
	if err != nil {
		return nil, err
	}
	rsReg, err := rsInf.AddEventHandler(informer.HandlerFuncs[*object.ReplicaSet]{
		AddFunc: dc.addRS, UpdateFunc: dc.updateRS, DeleteFunc: dc.deleteRS,
	}, informer.HandlerOptions{Name: Name})
	if err != nil {
		dReg.Remove()
		return nil, err
	}
	podReg, err := podInf.AddEventHandler(informer.HandlerFuncs[*object.Pod]{DeleteFunc: dc.deletePod},
		informer.HandlerOptions{Name: Name})
	if err != nil {
		dReg.Remove()
		rsReg.Remove()
		return nil, err
	}
	dc.AddSyncers(dInf, rsInf, podInf, dReg, rsReg, podReg)
	return dc, nil
}

func (dc *Controller) enqueue(d *object.Deployment) { dc.Queue().Add(object.Key(d)) }

func (dc *Controller) event(d *object.Deployment, typ, reason, format string, args ...any) {
	if dc.recorder != nil {
		dc.recorder.Eventf(events.Ref{APIVersion: "apps/v1", Kind: "Deployment", Meta: &d.ObjectMeta}, typ, reason, format, args...)
	}
}

// replicaSetsIn and deploymentsIn are handles for writes in one namespace.
func (dc *Controller) replicaSetsIn(ns string) *listwatch.Resource[*object.ReplicaSet] {
	return listwatch.For[*object.ReplicaSet](dc.client, dc.rsInfo, ns)
}

func (dc *Controller) deploymentsIn(ns string) *listwatch.Resource[*object.Deployment] {
	return listwatch.For[*object.Deployment](dc.client, dc.dInfo, ns)
}

// Requeue adds every cached Deployment whose namespace owns accepts to the queue: what a
// sharded controller manager does with namespaces it has just taken over, whose objects
// may have changed while another process owned them without an event saying so here.
func (dc *Controller) Requeue(owns func(namespace string) bool) {
	for _, d := range dc.dLister.List(object.Everything()) {
		if owns(d.Namespace) {
			dc.Queue().Add(object.Key(d))
		}
	}
}
