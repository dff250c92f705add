package fakekubelet

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/workqueue"
)

// Options configure a Kubelet. Only Client is required.
type Options struct {
	// Client reaches the apiserver.
	Client *listwatch.Client
	// NodeName is the node pods are bound to and run on [fake-node].
	NodeName string
	// Namespace limits the kubelet to the pods of one namespace ("": all).
	Namespace string
	// ReadyAfter is how long a pod takes from being bound to running [1s]; a negative
	// value starts pods at once.
	ReadyAfter time.Duration
	// NeverReadyImages are substrings of image names that cannot be pulled (":nonexistent",
	// ":404"): a pod with such an image never becomes ready.
	NeverReadyImages []string
	// Workers is how many pods are handled at once [2].
	Workers int
	// MaxRetries is how many times a pod whose handling fails is retried, with
	// exponential backoff, before it is given up on [15].
	MaxRetries int
	// Logf, when set, is told about each pod given up on, and each failed write of the
	// node's Lease or status.
	Logf func(format string, args ...any)

	// Capacity is the node's capacity, by resource name: names given replace those of
	// DefaultCapacity (cpu 32, memory 256Gi, pods 110), others keep their default.
	// Quantities are in Kubernetes' syntax (4, 500m, 8Gi).
	Capacity map[string]string
	// Allocatable is what of the capacity pods may use: names given replace those of
	// Capacity [Capacity].
	Allocatable map[string]string
	// KubeletVersion is the version the node reports [the apiserver's].
	KubeletVersion string
	// LeaseDuration is the node Lease's leaseDurationSeconds [40s]. The Lease is renewed
	// every quarter of it, as a kubelet renews its own.
	LeaseDuration time.Duration
	// StatusInterval is how often the node's status, and with it the heartbeat of its
	// conditions, is written [1m]. A kubelet writes its status every 5 minutes when
	// nothing changes, relying on the Lease in between; once a minute keeps
	// lastHeartbeatTime fresh enough for a human reading `kubectl describe node`.
	StatusInterval time.Duration
	// DeleteNodeOnExit deletes the Node and its Lease when Run returns. By default they
	// stay, as a stopped kubelet's do: the Lease runs out and the control plane marks
	// the node NotReady, and its pods stay bound to it.
	DeleteNodeOnExit bool
	// Clock times and stamps the node's Lease renewals and heartbeats [the real clock].
	Clock clock.Clock
}

// Kubelet is the fake scheduler and kubelet of one node. Run it once.
type Kubelet struct {
	opts    Options
	queue   *workqueue.Queue[string]
	book    *podBook
	dropped atomic.Int64
	ran     atomic.Bool

	// Set by Run before the workers start.
	pods           listwatch.ResourceInfo
	lister         informer.Lister[*object.Pod]
	kubeletVersion string
}

// New returns a Kubelet with opts' defaults filled in.
func New(opts Options) (*Kubelet, error) {
	if opts.Client == nil {
		return nil, errors.New("fakekubelet: Options.Client is required")
	}
	if opts.NodeName == "" {
		opts.NodeName = "fake-node"
	}
	switch {
	case opts.ReadyAfter == 0:
		opts.ReadyAfter = time.Second
	case opts.ReadyAfter < 0:
		opts.ReadyAfter = 0
	}
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.MaxRetries <= 0 {
		opts.MaxRetries = 15
	}
	var err error
	if opts.Capacity, err = resourceList(DefaultCapacity(), opts.Capacity); err != nil {
		return nil, fmt.Errorf("fakekubelet: capacity: %w", err)
	}
	if opts.Allocatable, err = resourceList(opts.Capacity, opts.Allocatable); err != nil {
		return nil, fmt.Errorf("fakekubelet: allocatable: %w", err)
	}
	if opts.LeaseDuration <= 0 {
		opts.LeaseDuration = 40 * time.Second
	}
	// A Lease holds whole seconds (at least one): the renewals are timed on the duration
	// it states, so that they keep the promise others read in it.
	opts.LeaseDuration = (opts.LeaseDuration + time.Second - 1).Truncate(time.Second)
	if opts.StatusInterval <= 0 {
		opts.StatusInterval = time.Minute
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	return &Kubelet{opts: opts, queue: workqueue.New(workqueue.Options[string]{Name: "fakekubelet"}), book: newPodBook()}, nil
}

// renewInterval is how often the node's Lease is renewed: a quarter of its duration, so
// that three renewals in a row may fail before the Lease runs out.
func (k *Kubelet) renewInterval() time.Duration { return k.opts.LeaseDuration / 4 }

// leaseSeconds is LeaseDuration in the Lease's whole seconds.
func (k *Kubelet) leaseSeconds() int32 { return int32(k.opts.LeaseDuration / time.Second) }

// Dropped returns how many times a pod was given up on after MaxRetries failures. A pod
// given up on is handled again on its next change.
func (k *Kubelet) Dropped() int64 { return k.dropped.Load() }

// Run registers the node, then binds, starts and finishes the deletion of pods and keeps
// the node alive until ctx ends; then it stops its informer, workers and heartbeats,
// deletes the node if DeleteNodeOnExit says so, and returns once they have all exited. It
// returns an error when it cannot begin (the server does not serve pods or nodes, cannot
// be reached, or refuses the Node), or cannot delete the node at the end.
func (k *Kubelet) Run(ctx context.Context) (err error) {
	if !k.ran.CompareAndSwap(false, true) {
		return errors.New("fakekubelet: Run called twice")
	}
	info, err := k.opts.Client.Discover(ctx, "pods")
	if err != nil {
		return fmt.Errorf("fakekubelet: %w", err)
	}
	k.pods = info
	node, err := k.registerNode(ctx)
	if err != nil {
		return fmt.Errorf("fakekubelet: registering node %s: %w", k.opts.NodeName, err)
	}
	if k.opts.DeleteNodeOnExit {
		defer func() {
			if derr := node.deregister(ctx); derr != nil && err == nil {
				err = fmt.Errorf("fakekubelet: deleting node %s: %w", k.opts.NodeName, derr)
			}
		}()
	}
	var heartbeats sync.WaitGroup
	defer heartbeats.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	heartbeats.Go(func() { node.keepAlive(ctx) })
	factory := informer.NewFactory(k.opts.Client, informer.FactoryOptions{})
	defer factory.Shutdown()
	inf, err := informer.For[*object.Pod](ctx, factory, "pods", informer.Selectors{Namespace: k.opts.Namespace})
	if err != nil {
		return fmt.Errorf("fakekubelet: %w", err)
	}
	reg, err := inf.AddEventHandler(informer.HandlerFuncs[*object.Pod]{
		AddFunc:    func(p *object.Pod, _ bool) { k.notice(p) },
		UpdateFunc: func(_, p *object.Pod) { k.notice(p) },
		// The worker finds the pod gone from the cache and forgets it.
		DeleteFunc: func(p *object.Pod, _ bool) { k.queue.Add(object.Key(p)) },
	}, informer.HandlerOptions{Name: "fakekubelet"})
	if err != nil {
		return fmt.Errorf("fakekubelet: %w", err)
	}
	k.lister = inf.Lister()
	factory.Start(ctx)

	// Workers start once the handler has seen every existing pod, so the addresses of
	// pods started by an earlier kubelet are known before any is handed out again.
	var workers sync.WaitGroup
	if informer.WaitForSync(ctx, reg) == nil {
		for range k.opts.Workers {
			workers.Go(func() { k.work(ctx) })
		}
	}
	<-ctx.Done()
	k.queue.ShutDown()
	workers.Wait()
	return nil
}

// registerNode registers the Node (or adopts the one there) and renews its Lease, so
// that the node is Ready before any pod is bound to it.
func (k *Kubelet) registerNode(ctx context.Context) (*nodeAgent, error) {
	nodes, err := k.opts.Client.Discover(ctx, "nodes")
	if err != nil {
		return nil, err
	}
	leases, err := k.opts.Client.Discover(ctx, "leases.coordination.k8s.io")
	if err != nil {
		return nil, err
	}
	k.kubeletVersion = k.opts.KubeletVersion
	if k.kubeletVersion == "" {
		if v, _, err := k.opts.Client.ServerVersion(ctx); err == nil && v != "" {
			k.kubeletVersion = v
		} else {
			k.kubeletVersion = fallbackKubeletVersion
		}
	}
	a := &nodeAgent{k: k, clock: k.opts.Clock,
		nodes:  listwatch.For[*object.Raw](k.opts.Client, nodes, ""),
		leases: listwatch.For[*object.Lease](k.opts.Client, leases, nodeLeaseNamespace)}
	if err := a.register(ctx); err != nil {
		return nil, err
	}
	// A Lease that cannot be written now is tried again by keepAlive: the Node is what
	// pods need, the Lease only keeps a node lifecycle controller content.
	_ = a.attempt(ctx, "renewing the node's lease", a.renewLease)
	return a, nil
}

// notice queues a pod that is this kubelet's business: unscheduled, or on its node.
func (k *Kubelet) notice(p *object.Pod) {
	switch p.Spec.NodeName {
	case "":
	case k.opts.NodeName:
		k.book.observe(p)
	default:
		return
	}
	k.queue.Add(object.Key(p))
}

func (k *Kubelet) work(ctx context.Context) {
	for {
		key, err := k.queue.GetContext(ctx)
		if err != nil {
			return
		}
		k.handle(ctx, key)
		k.queue.Done(key)
	}
}

// handle syncs one pod and decides what a failure means: retry with backoff, or give up
// after MaxRetries (the pod's next change queues it again).
func (k *Kubelet) handle(ctx context.Context, key string) {
	err := k.sync(ctx, key)
	switch {
	case err == nil:
		k.queue.Forget(key)
	case ctx.Err() != nil:
		// Shutting down: the error is the cancellation, nothing to retry.
	case k.queue.NumRequeues(key) < k.opts.MaxRetries:
		k.queue.AddRateLimited(key)
	default:
		k.queue.Forget(key)
		k.dropped.Add(1)
		if k.opts.Logf != nil {
			k.opts.Logf("fakekubelet: giving up on pod %s after %d retries: %v", key, k.opts.MaxRetries, err)
		}
	}
}

// sync does the next step for one pod, as the cache shows it.
func (k *Kubelet) sync(ctx context.Context, key string) error {
	pod, ok := k.lister.Get(key)
	if !ok {
		k.book.forget(key)
		return nil
	}
	switch pod.Spec.NodeName {
	case "":
		return k.bind(ctx, pod)
	case k.opts.NodeName:
	default:
		return nil
	}
	if pod.DeletionTimestamp != nil {
		return k.finishDeletion(ctx, pod)
	}
	return k.start(ctx, pod)
}

// podsIn is the pods of one namespace: writes go to one object's URL.
func (k *Kubelet) podsIn(namespace string) *listwatch.Resource[*object.Pod] {
	return listwatch.For[*object.Pod](k.opts.Client, k.pods, namespace)
}

// settled reports whether a write failed only because the pod moved on: it is gone
// (NotFound), or it changed under the write's precondition (Conflict: bound by someone
// else, being deleted, or replaced by a new pod of the same name). Either way the
// informer brings the new state, and the pod's key with it.
func settled(err error) bool {
	return err == nil || object.IsNotFound(err) || object.IsConflict(err)
}
