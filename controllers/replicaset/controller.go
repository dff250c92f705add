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
	controllers.Runner // its queue and workers: Syncers, Run, Queue

	client    *listwatch.Client
	podInfo   listwatch.ResourceInfo
	rsInfo    listwatch.ResourceInfo
	rsLister  informer.Lister[*object.ReplicaSet]
	podLister informer.Lister[*object.Pod]
	// owners finds the ReplicaSets of a pod, for the pod event handlers.
	owners controllers.Owners[*object.ReplicaSet]
	exp    *expectations.Expectations
	// written is the read-your-writes guard: the resourceVersions of the pod and
	// ReplicaSet writes of each ReplicaSet's syncs, until the informers have shown them.
	written  *consistency.Store
	recorder *events.Recorder
	log      *slog.Logger
	now      func() time.Time
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
		owners: controllers.Owners[*object.ReplicaSet]{Lister: rsInf.Lister(), Group: "apps", Kind: "ReplicaSet",
			Selector: func(rs *object.ReplicaSet) *object.LabelSelector { return rs.Spec.Selector }},
		exp:      expectations.New(0, opts.Now),
		written:  consistency.New(map[string]consistency.Source{resourcePods: podInf, resourceReplicaSets: rsInf}),
		recorder: opts.Recorder, log: opts.Logger.With("controller", Name), now: opts.Now,
	}
	rc.Runner = controllers.NewRunner(Name, rc.sync, opts)
	if rc.podInfo, err = c.Discover(ctx, resourcePods); err != nil {
		return nil, err
	}
	if rc.rsInfo, err = c.Discover(ctx, resourceReplicaSets); err != nil {
		return nil, err
	}
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
	rc.AddSyncers(rsInf, podInf, rsReg, podReg)
	return rc, nil
}

func (rc *Controller) enqueue(rs *object.ReplicaSet) { rc.Queue().Add(object.Key(rs)) }

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

func (rc *Controller) event(rs *object.ReplicaSet, typ, reason, format string, args ...any) {
	if rc.recorder != nil {
		rc.recorder.Eventf(events.Ref{APIVersion: "apps/v1", Kind: "ReplicaSet", Meta: &rs.ObjectMeta}, typ, reason, format, args...)
	}
}

// Requeue adds every cached ReplicaSet whose namespace owns accepts to the queue: what a
// sharded controller manager does with namespaces it has just taken over, whose objects
// may have changed while another process owned them without an event saying so here.
func (rc *Controller) Requeue(owns func(namespace string) bool) {
	for _, rs := range rc.rsLister.List(object.Everything()) {
		if owns(rs.Namespace) {
			rc.Queue().Add(object.Key(rs))
		}
	}
}
