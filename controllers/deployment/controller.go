package deployment

import (
	"context"
	"log/slog"
	"maps"
	"strings"
	"time"

	"github.com/kinformer/kinformer/controllers"
	"github.com/kinformer/kinformer/controllers/consistency"
	"github.com/kinformer/kinformer/controllers/events"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/workqueue"
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
	client    *listwatch.Client
	dInfo     listwatch.ResourceInfo
	rsInfo    listwatch.ResourceInfo
	dLister   informer.Lister[*object.Deployment]
	rsLister  informer.Lister[*object.ReplicaSet]
	podLister informer.Lister[*object.Pod]
	queue     *workqueue.Queue[string]
	recorder  *events.Recorder
	log       *slog.Logger
	now       func() time.Time
	loop      controllers.Loop
	syncers   []informer.Syncer
	w         writer
	// written is the read-your-writes guard: the resourceVersions of each Deployment's
	// writes (its ReplicaSets, its own metadata and status) until the informers show them.
	written *consistency.Store
	// podsIn lists a namespace's cached pods (a Recreate rollout waits for old ones).
	podsIn func(ns string) []*object.Pod
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
	dc := &Controller{client: c, dLister: dInf.Lister(), rsLister: rsInf.Lister(), podLister: podInf.Lister(),
		queue: workqueue.New(workqueue.Options[string]{Name: Name, Metrics: opts.QueueMetrics,
			RateLimiter: workqueue.DefaultControllerRateLimiter[string]()}),
		recorder: opts.Recorder, log: opts.Logger.With("controller", Name), now: opts.Now}
	dc.w = apiWriter{dc}
	// kube-controller-manager has no such guard for Deployments (1.36 has it for
	// ReplicaSets, DaemonSets, StatefulSets and Jobs), but a Deployment's sync decides
	// from the ReplicaSets it scaled and the status it wrote just as much.
	dc.written = consistency.New(map[string]consistency.Source{resourceDeployments: dInf, resourceReplicaSets: rsInf})
	dc.podsIn = func(ns string) []*object.Pod { return dc.podLister.Namespace(ns).List(object.Everything()) }
	if dc.dInfo, err = c.Discover(ctx, resourceDeployments); err != nil {
		return nil, err
	}
	if dc.rsInfo, err = c.Discover(ctx, resourceReplicaSets); err != nil {
		return nil, err
	}
	dc.loop = controllers.Loop{Name: Name, Queue: dc.queue, Sync: dc.sync, Metrics: opts.Metrics, Logger: dc.log,
		CrashOnPanic: opts.CrashOnPanic,
		OnDrop: func(key string, err error) {
			dc.log.Error("dropping deployment out of the queue after repeated failures", "key", key, "err", err)
		}}
	dReg, err := dInf.AddEventHandler(informer.HandlerFuncs[*object.Deployment]{
		AddFunc: func(d *object.Deployment, _ bool) { dc.enqueue(d) },
		UpdateFunc: func(old, d *object.Deployment) {
			if old.UID != d.UID { // deleted and created again under the same name
				dc.written.Clear(consistency.OwnerOf(&old.ObjectMeta))
			}
			dc.enqueue(d)
		},
		DeleteFunc: func(d *object.Deployment, _ bool) {
			dc.written.Clear(consistency.OwnerOf(&d.ObjectMeta))
			dc.enqueue(d)
		},
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
	dc.syncers = []informer.Syncer{dInf, rsInf, podInf, dReg, rsReg, podReg}
	return dc, nil
}

// Syncers are what must have synced before the workers may start.
func (dc *Controller) Syncers() []informer.Syncer { return dc.syncers }

// Run runs workers until ctx ends (see controllers.Loop.Run), then shuts the queue down.
func (dc *Controller) Run(ctx, syncCtx context.Context, workers int) {
	defer dc.queue.ShutDown()
	dc.loop.Run(ctx, syncCtx, workers)
}

// Queue is the controller's work queue (for the live view and tests).
func (dc *Controller) Queue() *workqueue.Queue[string] { return dc.queue }

func (dc *Controller) enqueue(d *object.Deployment) { dc.queue.Add(object.Key(d)) }

// addRS: a ReplicaSet created (by this controller, or adopted) changes its owner's rollout.
func (dc *Controller) addRS(rs *object.ReplicaSet, _ bool) {
	if rs.DeletionTimestamp != nil {
		dc.deleteRS(rs, false)
		return
	}
	if ref := object.ControllerRef(&rs.ObjectMeta); ref != nil {
		if d := dc.resolve(rs.Namespace, ref); d != nil {
			dc.enqueue(d)
		}
		return
	}
	for _, d := range dc.selecting(rs) {
		dc.enqueue(d)
	}
}

// updateRS enqueues the old and new owner, or for an orphan every Deployment that now
// selects it. Status changes of owned ReplicaSets (pods becoming available) arrive here.
func (dc *Controller) updateRS(old, cur *object.ReplicaSet) {
	if old.ResourceVersion == cur.ResourceVersion {
		return
	}
	curRef, oldRef := object.ControllerRef(&cur.ObjectMeta), object.ControllerRef(&old.ObjectMeta)
	refChanged := (curRef == nil) != (oldRef == nil) || curRef != nil && oldRef != nil && curRef.UID != oldRef.UID
	if refChanged && oldRef != nil {
		if d := dc.resolve(old.Namespace, oldRef); d != nil {
			dc.enqueue(d)
		}
	}
	if curRef != nil {
		if d := dc.resolve(cur.Namespace, curRef); d != nil {
			dc.enqueue(d)
		}
		return
	}
	if refChanged || !maps.Equal(old.Labels, cur.Labels) {
		for _, d := range dc.selecting(cur) {
			dc.enqueue(d)
		}
	}
}

func (dc *Controller) deleteRS(rs *object.ReplicaSet, _ bool) {
	if ref := object.ControllerRef(&rs.ObjectMeta); ref != nil {
		if d := dc.resolve(rs.Namespace, ref); d != nil {
			dc.enqueue(d)
		}
	}
}

// deletePod: a Recreate rollout waits for the old pods to be gone, and only a pod's
// deletion says they are.
func (dc *Controller) deletePod(p *object.Pod, _ bool) {
	ref := object.ControllerRef(&p.ObjectMeta)
	if ref == nil || ref.Kind != "ReplicaSet" {
		return
	}
	rs, ok := dc.rsLister.Get(object.KeyFor(p.Namespace, ref.Name))
	if !ok || rs.UID != ref.UID {
		return
	}
	if dref := object.ControllerRef(&rs.ObjectMeta); dref != nil {
		if d := dc.resolve(rs.Namespace, dref); d != nil && isRecreate(d) {
			dc.enqueue(d)
		}
	}
}

// resolve returns the cached Deployment a ControllerRef points to, or nil.
func (dc *Controller) resolve(ns string, ref *object.OwnerReference) *object.Deployment {
	group, _, _ := strings.Cut(ref.APIVersion, "/")
	if ref.Kind != "Deployment" || group != "apps" {
		return nil
	}
	d, ok := dc.dLister.Get(object.KeyFor(ns, ref.Name))
	if !ok || d.UID != ref.UID {
		return nil
	}
	return d
}

// selecting returns the Deployments of rs's namespace whose selector matches its labels;
// a nil or empty selector selects nothing.
func (dc *Controller) selecting(rs *object.ReplicaSet) []*object.Deployment {
	var out []*object.Deployment
	for _, d := range dc.dLister.Namespace(rs.Namespace).List(object.Everything()) {
		sel, err := d.Spec.Selector.AsSelector()
		if err != nil || sel.Empty() || !sel.Matches(rs.Labels) {
			continue
		}
		out = append(out, d)
	}
	return out
}

func (dc *Controller) event(d *object.Deployment, typ, reason, format string, args ...any) {
	if dc.recorder != nil {
		dc.recorder.Eventf(events.Ref{APIVersion: "apps/v1", Kind: "Deployment", Meta: &d.ObjectMeta}, typ, reason, format, args...)
	}
}

func (dc *Controller) replicaSetsIn(ns string) *listwatch.Resource[*object.ReplicaSet] {
	return listwatch.For[*object.ReplicaSet](dc.client, dc.rsInfo, ns)
}

func (dc *Controller) deploymentsIn(ns string) *listwatch.Resource[*object.Deployment] {
	return listwatch.For[*object.Deployment](dc.client, dc.dInfo, ns)
}
