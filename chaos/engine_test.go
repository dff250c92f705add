package chaos

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/kinformer/kinformer/controllers/manager"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/internal/testrig/eventcheck"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
)

// watched is one informer of the engine under test, with the handlers whose views must
// equal the server, and a direct (fault-free) way to read the server.
type watched struct {
	name   string
	cache  func() map[string]string // key → resourceVersion
	views  []view
	status func() informer.SyncStatus
	server func(ctx context.Context) (map[string]string, error)
}

type view interface {
	Snapshot() map[string]string
	Broken() []string
}

// slowView is an eventcheck view behind a slow handler.
type slowView[T object.Object] struct {
	*eventcheck.View[T]
	delay time.Duration
}

func (s slowView[T]) OnAdd(obj T, initial bool) { time.Sleep(s.delay); s.View.OnAdd(obj, initial) }
func (s slowView[T]) OnUpdate(old, obj T)       { time.Sleep(s.delay); s.View.OnUpdate(old, obj) }
func (s slowView[T]) OnDelete(obj T, fsu bool)  { time.Sleep(s.delay); s.View.OnDelete(obj, fsu) }

// watch builds an informer of resource in ns with an eventcheck view (and, with slow, a
// second view behind a handler that takes slow per event).
func watch[T object.Object](ctx context.Context, f *informer.Factory, direct *listwatch.Client, resource, ns string, slow time.Duration) (*watched, error) {
	inf, err := informer.For[T](ctx, f, resource, informer.Selectors{Namespace: ns})
	if err != nil {
		return nil, err
	}
	w := &watched{name: resource, status: inf.Status}
	v := eventcheck.New[T]()
	if _, err := inf.AddEventHandler(v, informer.HandlerOptions{Name: "check"}); err != nil {
		return nil, err
	}
	w.views = append(w.views, v)
	if slow > 0 {
		sv := slowView[T]{View: eventcheck.New[T](), delay: slow}
		if _, err := inf.AddEventHandler(sv, informer.HandlerOptions{Name: "slow", BufferSize: 64}); err != nil {
			return nil, err
		}
		w.views = append(w.views, sv)
	}
	w.cache = func() map[string]string {
		out := map[string]string{}
		for _, o := range inf.Cache().List() {
			out[object.Key(o)] = o.Meta().ResourceVersion
		}
		return out
	}
	info, err := direct.Discover(ctx, resource)
	if err != nil {
		return nil, err
	}
	res := listwatch.For[*object.Raw](direct, info, ns)
	w.server = func(ctx context.Context) (map[string]string, error) {
		l, err := res.List(ctx, listwatch.ListOptions{})
		if err != nil {
			return nil, err
		}
		out := map[string]string{}
		for _, o := range l.Items {
			out[object.Key(o)] = o.ResourceVersion
		}
		return out, nil
	}
	return w, nil
}

// converged reports whether the cache and every view equal the server now, and if not,
// what differs first.
func (w *watched) converged(ctx context.Context) (bool, string) {
	server, err := w.server(ctx)
	if err != nil {
		return false, "listing: " + err.Error()
	}
	if c := w.cache(); !maps.Equal(c, server) {
		return false, fmt.Sprintf("%s cache: %s", w.name, firstDiff(server, c))
	}
	for i, v := range w.views {
		if s := v.Snapshot(); !maps.Equal(s, server) {
			return false, fmt.Sprintf("%s view %d: %s", w.name, i, firstDiff(server, s))
		}
	}
	return true, ""
}

func firstDiff(want, got map[string]string) string {
	for k, v := range want {
		if got[k] != v {
			return fmt.Sprintf("%s: server %s, here %q (%d vs %d objects)", k, v, got[k], len(want), len(got))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			return fmt.Sprintf("%s: here %s, gone on the server (%d vs %d objects)", k, v, len(want), len(got))
		}
	}
	return "?"
}

// engine is kinformer under test: informers and both controllers, all through the proxy.
type engine struct {
	factory *informer.Factory
	watched []*watched
	manager *manager.Manager
	stop    func()
}

func startEngine(t *testing.T, ctx context.Context, proxied, direct *listwatch.Client, ns string) *engine {
	t.Helper()
	// Client-go's backoff numbers except a 5 s ceiling, so a quiet point is reached in
	// seconds after a storm of faults; the report says so.
	f := informer.NewFactory(proxied, informer.FactoryOptions{Reflector: reflector.Options{PageSize: 25,
		Backoff: reflector.Backoff{Max: 5 * time.Second, ResetAfter: 30 * time.Second}}})
	e := &engine{factory: f}
	for _, build := range []func() (*watched, error){
		func() (*watched, error) { return watch[*object.Pod](ctx, f, direct, "pods", ns, 2*time.Millisecond) },
		func() (*watched, error) { return watch[*object.Raw](ctx, f, direct, "configmaps", ns, 0) },
		func() (*watched, error) {
			return watch[*object.Raw](ctx, f, direct, "widgets.chaos.kinformer.io", ns, 0)
		},
	} {
		w, err := build()
		if err != nil {
			t.Fatal(err)
		}
		e.watched = append(e.watched, w)
	}
	runCtx, cancel := context.WithCancel(ctx)
	// A resync every 20 s: a Deployment whose key was dropped after its retry cap during a
	// storm of faults is looked at again well within a quiet point's 90 s.
	m, err := manager.New(runCtx, manager.Options{Client: proxied, Namespace: ns, Workers: 2, ResyncPeriod: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e.manager = m
	done := make(chan struct{})
	go func() { _ = m.Run(runCtx); close(done) }()
	f.Start(runCtx)
	e.stop = func() { cancel(); <-done; f.Shutdown() }
	return e
}

// describeManager says what the controller manager's own informers hold and why, for a
// quiet point that did not converge.
func (e *engine) describeManager(t *testing.T, ctx context.Context, direct *listwatch.Client, ns string) {
	f := e.manager.Factory()
	sel := informer.Selectors{Namespace: ns}
	pods, _ := informer.For[*object.Pod](ctx, f, "pods", sel)
	rss, _ := informer.For[*object.ReplicaSet](ctx, f, "replicasets.apps", sel)
	deps, _ := informer.For[*object.Deployment](ctx, f, "deployments.apps", sel)
	for _, s := range []informer.SyncStatus{pods.Status(), rss.Status(), deps.Status()} {
		t.Logf("manager informer: %+v", s)
	}
	info, _ := direct.Discover(ctx, "replicasets.apps")
	l, err := listwatch.For[*object.ReplicaSet](direct, info, ns).List(ctx, listwatch.ListOptions{})
	if err != nil {
		return
	}
	podInfo, _ := direct.Discover(ctx, "pods")
	pl, _ := listwatch.For[*object.Pod](direct, podInfo, ns).List(ctx, listwatch.ListOptions{})
	for _, rs := range l.Items {
		onServer, cached := 0, 0
		for _, p := range pl.Items {
			if ref := object.ControllerRef(&p.ObjectMeta); ref != nil && ref.UID == rs.UID {
				onServer++
			}
		}
		for _, p := range pods.Cache().List() {
			if ref := object.ControllerRef(&p.ObjectMeta); ref != nil && ref.UID == rs.UID {
				cached++
			}
		}
		c, _ := rss.Cache().Get(object.Key(rs))
		cachedRV := ""
		if c != nil {
			cachedRV = c.ResourceVersion
		}
		t.Logf("rs %s rv %s (cached %s) gen %d spec %d status %d/%d/%d obsgen %d; pods on server %d, in the manager's cache %d",
			rs.Name, rs.ResourceVersion, cachedRV, rs.Generation, *rs.Spec.Replicas, rs.Status.Replicas, rs.Status.ReadyReplicas,
			rs.Status.AvailableReplicas, rs.Status.ObservedGeneration, onServer, cached)
	}
}
