package fakekubelet

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

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
	// Logf, when set, is told about each pod given up on.
	Logf func(format string, args ...any)
}

// Kubelet is the fake scheduler and kubelet of one node. Run it once.
type Kubelet struct {
	opts    Options
	queue   *workqueue.Queue[string]
	book    *podBook
	dropped atomic.Int64
	ran     atomic.Bool

	// Set by Run before the workers start.
	pods   listwatch.ResourceInfo
	lister informer.Lister[*object.Pod]
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
	return &Kubelet{opts: opts, queue: workqueue.New(workqueue.Options[string]{Name: "fakekubelet"}), book: newPodBook()}, nil
}

// Dropped returns how many times a pod was given up on after MaxRetries failures. A pod
// given up on is handled again on its next change.
func (k *Kubelet) Dropped() int64 { return k.dropped.Load() }

// Run binds, starts and finishes the deletion of pods until ctx ends, then stops its
// informer and workers and returns once they have all exited. It returns an error only
// when it cannot begin (the server does not serve pods, or cannot be reached).
func (k *Kubelet) Run(ctx context.Context) error {
	if !k.ran.CompareAndSwap(false, true) {
		return errors.New("fakekubelet: Run called twice")
	}
	info, err := k.opts.Client.Discover(ctx, "pods")
	if err != nil {
		return fmt.Errorf("fakekubelet: %w", err)
	}
	k.pods = info
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
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
