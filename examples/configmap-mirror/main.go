// Command configmap-mirror is a complete small controller built on kinformer's public
// packages. It copies every ConfigMap labelled mirror=yes in one namespace into a
// ConfigMap named <name>-mirror, keeps the copy's data and binaryData equal to the
// source's, and deletes the copy when the source is deleted or loses its label.
//
//	configmap-mirror [-kubeconfig FILE] [-context NAME] [-namespace NS] [-workers N]
//
// It shows the canonical shape of a controller: informers → handlers that only enqueue
// keys → a rate-limited work queue → workers that read the caches and write the
// difference to the apiserver (see README.md).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/kinformer/kinformer/controllers"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/workqueue"
)

const (
	// sourceSelector selects the ConfigMaps to mirror.
	sourceSelector = "mirror=yes"
	// mirrorOf labels a mirror with the name of its source. The controller writes and
	// deletes only ConfigMaps that carry it.
	mirrorOf     = "mirror-of"
	mirrorSuffix = "-mirror"
	// maxRetries bounds the retries of a failing key; its next change enqueues it again.
	maxRetries = 10
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a pod: its service account)")
	kubecontext := flag.String("context", "", "kubeconfig context (default: current-context)")
	namespace := flag.String("namespace", "", "namespace to mirror (default: the context's namespace, else \"default\")")
	workers := flag.Int("workers", 2, "concurrent syncs")
	flag.Parse()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))

	cfg, err := loadConfig(*kubeconfig, *kubecontext)
	if err != nil {
		logger.Error("no apiserver configuration", "err", err)
		os.Exit(1)
	}
	ns := *namespace
	if ns == "" {
		ns = cfg.Namespace
	}
	if ns == "" {
		ns = "default"
	}
	client, err := listwatch.New(cfg)
	if err != nil {
		logger.Error("bad apiserver configuration", "err", err)
		os.Exit(1)
	}

	// SIGINT or SIGTERM cancels ctx; run then stops everything it started and returns.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	logger.Info("mirroring", "namespace", ns, "selector", sourceSelector, "server", cfg.Host)
	err = run(ctx, client, ns, *workers, logger)
	stop()
	client.CloseIdleConnections()
	if err != nil {
		logger.Error("stopped", "err", err)
		os.Exit(1)
	}
	logger.Info("stopped")
}

// loadConfig reads a kubeconfig or, when there is none and the process runs in a pod,
// the pod's service account.
func loadConfig(path, context string) (*listwatch.Config, error) {
	if path == "" && context == "" && os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		return listwatch.InClusterConfig(listwatch.InClusterOptions{})
	}
	return listwatch.LoadKubeconfig(listwatch.LoadOptions{Path: path, Context: context})
}

// run runs the controller in namespace until ctx ends, and returns once every goroutine
// it started has exited. A cancellation is a clean stop: it returns nil.
func run(ctx context.Context, client *listwatch.Client, namespace string, workers int, logger *slog.Logger) error {
	f := informer.NewFactory(client, informer.FactoryOptions{})
	defer f.Shutdown() // stops the informers and waits for them
	c, err := NewController(ctx, f, client, namespace, logger)
	if err != nil {
		return err
	}
	f.Start(ctx)
	err = c.Run(ctx, workers)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// Controller mirrors the ConfigMaps of one namespace.
type Controller struct {
	namespace  string
	sources    informer.NamespaceLister[*object.Raw] // ConfigMaps labelled mirror=yes
	mirrors    informer.NamespaceLister[*object.Raw] // ConfigMaps labelled mirror-of
	configMaps *listwatch.Resource[*object.Raw]      // writes go to the apiserver
	queue      *workqueue.Queue[string]              // keys ("namespace/name") of sources
	syncers    []informer.Syncer
	logger     *slog.Logger
}

// NewController asks f for its informers and registers its handlers; the factory's Start
// runs the informers and Run the workers.
func NewController(ctx context.Context, f *informer.Factory, client *listwatch.Client, namespace string, logger *slog.Logger) (*Controller, error) {
	sources, err := informer.For[*object.Raw](ctx, f, "configmaps",
		informer.Selectors{Namespace: namespace, LabelSelector: sourceSelector})
	if err != nil {
		return nil, err
	}
	mirrors, err := informer.For[*object.Raw](ctx, f, "configmaps",
		informer.Selectors{Namespace: namespace, LabelSelector: mirrorOf}) // has the label
	if err != nil {
		return nil, err
	}
	info, err := client.Discover(ctx, "configmaps")
	if err != nil {
		return nil, err
	}
	c := &Controller{
		namespace:  namespace,
		sources:    sources.Lister().Namespace(namespace),
		mirrors:    mirrors.Lister().Namespace(namespace),
		configMaps: listwatch.For[*object.Raw](client, info, namespace),
		queue:      workqueue.New(workqueue.Options[string]{Name: "configmap-mirror"}),
		logger:     logger,
	}

	// Handlers only enqueue a key: they must be quick, and a key waits in the queue at
	// most once however many events it gets, so a burst of changes is one sync. A source
	// that loses its label leaves the selector and arrives as a delete.
	enqueue := func(cm *object.Raw) { c.queue.Add(object.Key(cm)) }
	srcReg, err := sources.AddEventHandler(informer.HandlerFuncs[*object.Raw]{
		AddFunc:    func(cm *object.Raw, _ bool) { enqueue(cm) },
		UpdateFunc: func(_, cm *object.Raw) { enqueue(cm) },
		DeleteFunc: func(cm *object.Raw, _ bool) { enqueue(cm) },
	}, informer.HandlerOptions{Name: "configmap-mirror-sources"})
	if err != nil {
		return nil, err
	}
	// A mirror that changes (edited or deleted by hand, or left behind by a source deleted
	// while the controller was down) enqueues its source, whose sync repairs it.
	enqueueSource := func(cm *object.Raw) { c.queue.Add(object.KeyFor(cm.Namespace, cm.Labels[mirrorOf])) }
	mirReg, err := mirrors.AddEventHandler(informer.HandlerFuncs[*object.Raw]{
		AddFunc:    func(cm *object.Raw, _ bool) { enqueueSource(cm) },
		UpdateFunc: func(_, cm *object.Raw) { enqueueSource(cm) },
		DeleteFunc: func(cm *object.Raw, _ bool) { enqueueSource(cm) },
	}, informer.HandlerOptions{Name: "configmap-mirror-mirrors"})
	if err != nil {
		return nil, err
	}
	c.syncers = []informer.Syncer{sources, mirrors, srcReg, mirReg}
	return c, nil
}

// Run waits until the caches are synced (a sync on a partial cache would delete mirrors
// whose sources it has not seen yet), then runs workers until ctx ends. Syncs run under
// ctx too, so a write in flight is cancelled. It returns once every worker has stopped,
// and shuts the queue down.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer c.queue.ShutDown()
	if err := informer.WaitForSync(ctx, c.syncers...); err != nil {
		return err
	}
	c.logger.Info("caches synced, starting workers", "workers", workers)
	// Each worker of the pool is the canonical loop: Get a key, sync it, Forget it on
	// success or AddRateLimited on error until maxRetries, and always Done.
	pool := &controllers.WorkerPool{
		Name:       "configmap-mirror",
		Queue:      c.queue,
		Sync:       c.sync,
		MaxRetries: maxRetries,
		Logger:     c.logger,
		OnDrop: func(key string, err error) {
			c.logger.Error("giving up on key until it changes again", "key", key, "err", err)
		},
	}
	pool.Run(ctx, ctx, workers)
	return nil
}

// sync makes the mirror of the source named by key match the source. It is level-based:
// it reads the desired state (the source) and the actual one (the mirror) from the caches,
// whatever events led here, and writes only the difference. An error retries the key.
func (c *Controller) sync(ctx context.Context, key string) error {
	_, name, err := object.SplitKey(key)
	if err != nil {
		return nil // cannot get better by retrying
	}
	mirrorName := name + mirrorSuffix
	src, srcExists := c.sources.Get(name)
	mirror, mirrorExists := c.mirrors.Get(mirrorName)
	if mirrorExists && mirror.Labels[mirrorOf] != name {
		return fmt.Errorf("%s/%s is labelled %s=%s, not %s: leaving it alone",
			c.namespace, mirrorName, mirrorOf, mirror.Labels[mirrorOf], name)
	}

	switch {
	case !srcExists && !mirrorExists:
		return nil
	case !srcExists: // the source is gone, or no longer labelled: delete its mirror
		// The UID precondition deletes the very mirror the cache saw, not a newer one.
		err := c.configMaps.Delete(ctx, mirrorName, listwatch.DeleteOptions{
			Preconditions: &listwatch.Preconditions{UID: mirror.UID}})
		if object.IsNotFound(err) {
			return nil
		}
		if err == nil {
			c.logger.Info("deleted mirror", "source", name, "mirror", mirrorName)
		}
		return err
	case !mirrorExists:
		m := &object.Raw{
			TypeMeta:   object.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: object.ObjectMeta{Name: mirrorName, Labels: map[string]string{mirrorOf: name}},
		}
		for _, field := range []string{"data", "binaryData"} {
			if v := src.Unknown.Get(field); v != nil {
				m.Unknown.Set(field, v)
			}
		}
		// AlreadyExists means the mirror cache has not seen it yet (or it is not ours):
		// the retry finds it there.
		if _, err := c.configMaps.Create(ctx, m); err != nil {
			return err
		}
		c.logger.Info("created mirror", "source", name, "mirror", mirrorName)
		return nil
	default:
		patch, err := mirrorPatch(src, mirror)
		if err != nil || patch == nil {
			return err // nil when the mirror is up to date: no write
		}
		// The patch carries the cached resourceVersion: if the mirror changed since,
		// the server answers 409 Conflict and the retry reads the newer state.
		if _, err := c.configMaps.Patch(ctx, mirrorName, listwatch.MergePatch, patch, ""); err != nil {
			return err
		}
		c.logger.Info("updated mirror", "source", name, "mirror", mirrorName)
		return nil
	}
}

// mirrorPatch returns the JSON merge patch (RFC 7386) that gives mirror the data and
// binaryData of src: new and changed keys set, removed keys null. It returns nil when
// they already match.
func mirrorPatch(src, mirror *object.Raw) ([]byte, error) {
	patch := map[string]any{}
	for _, field := range []string{"data", "binaryData"} {
		want, err := stringMap(src.Unknown.Get(field))
		if err != nil {
			return nil, fmt.Errorf("source %s: %s: %w", object.Key(src), field, err)
		}
		have, err := stringMap(mirror.Unknown.Get(field))
		if err != nil {
			return nil, fmt.Errorf("mirror %s: %s: %w", object.Key(mirror), field, err)
		}
		diff := map[string]any{}
		for k, v := range want {
			if old, ok := have[k]; !ok || old != v {
				diff[k] = v
			}
		}
		for k := range have {
			if _, ok := want[k]; !ok {
				diff[k] = nil // merge patch: null removes the key
			}
		}
		if len(diff) > 0 {
			patch[field] = diff
		}
	}
	if len(patch) == 0 {
		return nil, nil
	}
	patch["metadata"] = map[string]any{"resourceVersion": mirror.ResourceVersion}
	return json.Marshal(patch)
}

// stringMap decodes a ConfigMap's data or binaryData (absent or null: empty).
func stringMap(raw json.RawMessage) (map[string]string, error) {
	m := map[string]string{}
	if len(raw) == 0 {
		return m, nil
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("not a map of strings: %w", err)
	}
	return m, nil
}
