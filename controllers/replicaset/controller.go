package replicaset

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kinformer/kinformer/controllers"
	"github.com/kinformer/kinformer/controllers/consistency"
	"github.com/kinformer/kinformer/controllers/events"
	"github.com/kinformer/kinformer/controllers/expectations"
	"github.com/kinformer/kinformer/indexer"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/workqueue"
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
	client   *listwatch.Client
	pods     listwatch.ResourceInfo
	rss      listwatch.ResourceInfo
	rsLister informer.Lister[*object.ReplicaSet]
	podCache informer.Lister[*object.Pod]
	queue    *workqueue.Queue[string]
	exp      *expectations.Expectations
	// written is the read-your-writes guard: the resourceVersions of the pod and
	// ReplicaSet writes of each ReplicaSet's syncs, until the informers have shown them.
	written  *consistency.Store
	recorder *events.Recorder
	log      *slog.Logger
	now      func() time.Time
	loop     controllers.Loop
	syncers  []informer.Syncer
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
		client: c, rsLister: rsInf.Lister(), podCache: podInf.Lister(),
		queue: workqueue.New(workqueue.Options[string]{Name: Name, Metrics: opts.QueueMetrics,
			RateLimiter: workqueue.DefaultControllerRateLimiter[string]()}),
		exp:      expectations.New(0, opts.Now),
		written:  consistency.New(map[string]consistency.Source{resourcePods: podInf, resourceReplicaSets: rsInf}),
		recorder: opts.Recorder, log: opts.Logger.With("controller", Name), now: opts.Now,
	}
	if rc.pods, err = c.Discover(ctx, resourcePods); err != nil {
		return nil, err
	}
	if rc.rss, err = c.Discover(ctx, resourceReplicaSets); err != nil {
		return nil, err
	}
	rc.loop = controllers.Loop{Name: Name, Queue: rc.queue, Sync: rc.sync, Metrics: opts.Metrics, Logger: rc.log,
		CrashOnPanic: opts.CrashOnPanic,
		OnDrop: func(key string, err error) {
			rc.log.Error("dropping replicaset out of the queue after repeated failures", "key", key, "err", err)
		}}
	rsReg, err := rsInf.AddEventHandler(informer.HandlerFuncs[*object.ReplicaSet]{
		AddFunc: rc.addRS, UpdateFunc: rc.updateRS, DeleteFunc: rc.deleteRS,
	}, informer.HandlerOptions{Name: Name, ResyncPeriod: opts.ResyncPeriod})
	if err != nil {
		return nil, err
	}
	podReg, err := podInf.AddEventHandler(informer.HandlerFuncs[*object.Pod]{
		AddFunc: rc.addPod, UpdateFunc: rc.updatePod, DeleteFunc: rc.deletePod,
	}, informer.HandlerOptions{Name: Name})
	if err != nil {
		rsReg.Remove()
		return nil, err
	}
	rc.syncers = []informer.Syncer{rsInf, podInf, rsReg, podReg}
	return rc, nil
}

// Syncers are what must have synced before the workers may start.
func (rc *Controller) Syncers() []informer.Syncer { return rc.syncers }

// Run runs workers until ctx ends (see controllers.Loop.Run for ctx and syncCtx), then
// shuts the queue down.
func (rc *Controller) Run(ctx, syncCtx context.Context, workers int) {
	defer rc.queue.ShutDown()
	rc.loop.Run(ctx, syncCtx, workers)
}

// Queue is the controller's work queue (for the live view and tests).
func (rc *Controller) Queue() *workqueue.Queue[string] { return rc.queue }

func (rc *Controller) enqueue(rs *object.ReplicaSet) { rc.queue.Add(object.Key(rs)) }

// podsIn and replicaSetsIn are handles for writes in one namespace.
func (rc *Controller) podsIn(ns string) *listwatch.Resource[*object.Pod] {
	return listwatch.For[*object.Pod](rc.client, rc.pods, ns)
}

func (rc *Controller) replicaSetsIn(ns string) *listwatch.Resource[*object.ReplicaSet] {
	return listwatch.For[*object.ReplicaSet](rc.client, rc.rss, ns)
}

// wrote records a write made by a sync of rs, with the resourceVersion it answered.
func (rc *Controller) wrote(rs *object.ReplicaSet, resource, resourceVersion string) {
	rc.written.WroteAt(consistency.OwnerOf(&rs.ObjectMeta), resource, resourceVersion)
}

func (rc *Controller) event(rs *object.ReplicaSet, typ, reason, format string, args ...any) {
	if rc.recorder != nil {
		rc.recorder.Eventf(events.Ref{APIVersion: "apps/v1", Kind: "ReplicaSet", Meta: &rs.ObjectMeta}, typ, reason, format, args...)
	}
}
