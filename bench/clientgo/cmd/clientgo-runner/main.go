// Command clientgo-runner is client-go's runner of the end-to-end list/watch benchmark:
// it builds client-go's shared informer as asked by its flags and lets package
// bench/measure (of the main module, through this module's replace directive) time it
// and print the one JSON result line. Its twin, bench/cmd/kinformer-runner, does the
// same with kinformer; the flags and the measuring code are shared (see package measure).
//
// Objects are typed (*corev1.Pod, *corev1.Secret, *corev1.ConfigMap, from the informer
// factory), or *metav1.PartialObjectMetadata with -metadata-only (the metadata
// informer). Like kinformer's, the informer drops metadata.managedFields (SetTransform)
// unless -keep-managed-fields, and lists+watches unless -streaming-list: client-go v0.36
// enables its WatchListClient feature gate by default, so the runner sets the gate from
// the flag (replacing KUBE_FEATURE_WatchListClient), and checks from the requests it
// sends which mode was used in the end. -protobuf asks for
// application/vnd.kubernetes.protobuf and names the engine client-go-protobuf; without it
// the runner asks for JSON only, although client-go v0.36's typed clients ask for
// protobuf first when the configuration names no content type.
//
//	clientgo-runner -server http://127.0.0.1:8080 -resource pods -namespace bench \
//	    -scenario watch -objects 1000 -events 50000
package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kinformer/kinformer/bench/measure"
)

func main() {
	run := measure.Begin() // first: sync_seconds counts from here
	run.Main(&engine{})
}

type engine struct {
	inf      cache.SharedIndexInformer
	regs     []cache.ResourceEventHandlerRegistration
	observer *measure.ModeObserver
	lastErr  atomic.Pointer[error] // the last list/watch error, to explain a timeout
}

func (*engine) Name(cfg *measure.Config) string {
	if cfg.Protobuf {
		return "client-go-protobuf"
	}
	return "client-go"
}

// watchListGate is client-go's feature gates with WatchListClient set by -streaming-list.
type watchListGate struct {
	clientfeatures.Gates
	on bool
}

func (g watchListGate) Enabled(f clientfeatures.Feature) bool {
	if f == clientfeatures.WatchListClient {
		return g.on
	}
	return g.Gates.Enabled(f)
}

func (e *engine) Build(ctx context.Context, cfg *measure.Config, handlers []measure.EventFunc) error {
	// Before anything reads a gate (building the client does).
	clientfeatures.ReplaceFeatureGates(watchListGate{clientfeatures.FeatureGates(), cfg.StreamingList})

	rc, err := restConfig(cfg)
	if err != nil {
		return err
	}
	e.observer = measure.NewModeObserver(cfg.Resource)
	rc.Wrap(e.observer.Wrap)

	if cfg.Projection {
		return errors.New("-projection: kinformer only (client-go has no typed projection)")
	}
	if cfg.MetadataOnly {
		mc, err := metadata.NewForConfig(rc)
		if err != nil {
			return err
		}
		gvr := schema.GroupVersionResource{Version: "v1", Resource: cfg.Resource}
		e.inf = metadatainformer.NewFilteredMetadataInformer(mc, gvr, cfg.Namespace, 0,
			cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nil).Informer()
	} else {
		cs, err := kubernetes.NewForConfig(rc)
		if err != nil {
			return err
		}
		f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(cfg.Namespace))
		switch cfg.Resource {
		case "pods":
			e.inf = f.Core().V1().Pods().Informer()
		case "secrets":
			e.inf = f.Core().V1().Secrets().Informer()
		case "configmaps":
			e.inf = f.Core().V1().ConfigMaps().Informer()
		default:
			return fmt.Errorf("unknown resource %q", cfg.Resource)
		}
	}
	if !cfg.KeepManagedFields {
		if err := e.inf.SetTransform(stripManagedFields); err != nil {
			return err
		}
	}
	if err := e.inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		e.lastErr.Store(&err)
	}); err != nil {
		return err
	}
	for _, h := range handlers {
		reg, err := e.inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
			AddFunc:    func(o any, initial bool) { h(initial, annotations(o)) },
			UpdateFunc: func(_, o any) { h(false, annotations(o)) },
			DeleteFunc: func(o any) { h(false, annotations(o)) },
		})
		if err != nil {
			return err
		}
		e.regs = append(e.regs, reg)
	}
	return nil
}

// restConfig is the client configuration of -server (with -ca) or -kubeconfig, without
// client-side rate limiting.
func restConfig(cfg *measure.Config) (*rest.Config, error) {
	var rc *rest.Config
	if cfg.Kubeconfig != "" {
		var err error
		if rc, err = clientcmd.BuildConfigFromFlags("", cfg.Kubeconfig); err != nil {
			return nil, err
		}
	} else {
		rc = &rest.Config{Host: cfg.Server, TLSClientConfig: rest.TLSClientConfig{CAFile: cfg.CA}}
	}
	rc.QPS, rc.Burst = -1, 0 // a negative QPS: no rate limiter
	// Set either way: left unset, client-go v0.36's typed clients of built-in types ask
	// for protobuf first (rest.Request.UseProtobufAsDefault), so the JSON engine would
	// measure protobuf against any server that speaks it.
	if cfg.Protobuf {
		rc.ContentType = "application/vnd.kubernetes.protobuf"
		rc.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	} else {
		rc.ContentType = "application/json"
		rc.AcceptContentTypes = "application/json"
	}
	return rc, nil
}

// stripManagedFields is the transform kinformer applies by default.
func stripManagedFields(o any) (any, error) {
	if m, ok := o.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return o, nil
}

// annotations are the notified object's, a tombstone's last state for a delete noticed
// by a relist.
func annotations(o any) map[string]string {
	if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = t.Obj
	}
	if m, ok := o.(metav1.Object); ok {
		return m.GetAnnotations()
	}
	return nil
}

func (e *engine) Start(ctx context.Context) error {
	go e.inf.RunWithContext(ctx)
	return nil
}

// WaitForSync waits on the informer's and the registrations' done channels:
// cache.WaitForCacheSync polls every 100 ms, which would blur sync_seconds.
func (e *engine) WaitForSync(ctx context.Context) error {
	checkers := []cache.DoneChecker{e.inf.HasSyncedChecker()}
	for _, r := range e.regs {
		checkers = append(checkers, r.HasSyncedChecker())
	}
	for _, c := range checkers {
		select {
		case <-c.Done():
		case <-ctx.Done():
			err := fmt.Errorf("%s not synced: %w", c.Name(), ctx.Err())
			if last := e.lastErr.Load(); last != nil {
				err = errors.Join(err, fmt.Errorf("last list/watch error: %w", *last))
			}
			return err
		}
	}
	return nil
}

func (e *engine) Len() int { return len(e.inf.GetStore().ListKeys()) }

func (e *engine) Mode() string { return e.observer.Mode() }
