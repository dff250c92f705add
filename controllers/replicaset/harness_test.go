package replicaset

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/controllers"
	"github.com/kinformer/kinformer/controllers/events"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// env is a simulator behind a request-counting (and optionally delaying) proxy, and a
// running ReplicaSet controller on a client through it.
type env struct {
	t    *testing.T
	sim  *apisim.Server
	c    *listwatch.Client
	ctrl *Controller
	pods *listwatch.Resource[*object.Pod]
	rss  *listwatch.Resource[*object.ReplicaSet]
	reg  *prometheus.Registry // the controller's sync metrics

	mu       sync.Mutex
	requests []string // "METHOD path"
	// podWatchDelay holds back every write of a pod watch stream: the informer then
	// lags the server, as under load.
	podWatchDelay time.Duration
	// lostAnswers is how many more pod creates the server performs but whose answer
	// is lost (the connection aborted after the write), as under a network fault.
	lostAnswers int
}

type envOptions struct {
	podWatchDelay time.Duration
	now           func() time.Time
	noRecorder    bool
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	leakcheck.Check(t)
	e := &env{t: t, sim: apisim.New(apisim.Options{}), podWatchDelay: o.podWatchDelay}
	t.Cleanup(func() { e.sim.Close() })
	srv := httptest.NewServer(e.wrap(e.sim))
	t.Cleanup(srv.Close)
	c, err := listwatch.New(&listwatch.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	e.c = c
	ctx := context.Background()
	podInfo, _ := c.Discover(ctx, "pods")
	rsInfo, _ := c.Discover(ctx, "replicasets.apps")
	e.pods = listwatch.For[*object.Pod](c, podInfo, "ns")
	e.rss = listwatch.For[*object.ReplicaSet](c, rsInfo, "ns")

	runCtx, cancel := context.WithCancel(ctx)
	f := informer.NewFactory(c, informer.FactoryOptions{})
	e.reg = prometheus.NewRegistry()
	metrics, err := controllers.NewMetrics(e.reg)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Now: o.now, Metrics: metrics}
	var rec *events.Recorder
	if !o.noRecorder {
		if rec, err = events.NewRecorder(c, events.Options{Component: "replicaset-controller"}); err != nil {
			t.Fatal(err)
		}
		opts.Recorder = rec
	}
	e.ctrl, err = New(ctx, f, c, opts)
	if err != nil {
		t.Fatal(err)
	}
	f.Start(runCtx)
	if err := informer.WaitForSync(testwait.Context(t, 10*time.Second), e.ctrl.Syncers()...); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); e.ctrl.Run(runCtx, runCtx, 3) }()
	go func() {
		defer wg.Done()
		if rec != nil {
			rec.Run(runCtx)
		}
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		f.Shutdown()
	})
	return e
}

func (e *env) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.requests = append(e.requests, r.Method+" "+r.URL.Path)
		delay := e.podWatchDelay
		lose := r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/pods") && e.lostAnswers > 0
		if lose {
			e.lostAnswers--
		}
		e.mu.Unlock()
		if lose {
			h.ServeHTTP(httptest.NewRecorder(), r) // the pod is created...
			panic(http.ErrAbortHandler)            // ...and the answer never arrives
		}
		if delay > 0 && r.URL.Path == "/api/v1/pods" && r.URL.Query().Get("watch") == "1" {
			w = &slowWriter{ResponseWriter: w, delay: delay}
		}
		h.ServeHTTP(w, r)
	})
}

// slowWriter delays each write of a watch stream.
type slowWriter struct {
	http.ResponseWriter
	delay time.Duration
}

func (s *slowWriter) Write(b []byte) (int, error) {
	// A real sleep: it plays a slow network between the apiserver and the informer,
	// which no clock of the code under test governs (the controller never waits on it),
	// and the informer must really fall behind the server while the controller syncs.
	time.Sleep(s.delay)
	return s.ResponseWriter.Write(b)
}

func (s *slowWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// count returns how many requests had the method and a path containing part.
func (e *env) count(method, part string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, r := range e.requests {
		if strings.HasPrefix(r, method+" ") && strings.Contains(r, part) {
			n++
		}
	}
	return n
}

const templateSpec = `{"containers":[{"name":"web","image":"nginx:1.27"}]}`

// newRS builds a ReplicaSet selecting app=name.
func newRS(name string, replicas int32) *object.ReplicaSet {
	return &object.ReplicaSet{
		ObjectMeta: object.ObjectMeta{Name: name, Namespace: "ns"},
		Spec: object.ReplicaSetSpec{Replicas: &replicas,
			Selector: &object.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: object.PodTemplateSpec{ObjectMeta: object.ObjectMeta{Labels: map[string]string{"app": name, "tier": "web"}},
				Spec: object.MustPodSpec(templateSpec)}},
	}
}

func (e *env) createRS(rs *object.ReplicaSet) *object.ReplicaSet {
	e.t.Helper()
	got, err := e.rss.Create(context.Background(), rs)
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

func (e *env) getRS(name string) *object.ReplicaSet {
	e.t.Helper()
	rs, err := e.rss.Get(context.Background(), name)
	if err != nil {
		e.t.Fatal(err)
	}
	return rs
}

// annotate changes an annotation of a ReplicaSet: an update that makes the controller
// sync it, and nothing else.
func (e *env) annotate(name, value string) {
	e.t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"poke":%q}}}`, value)
	if _, err := e.rss.Patch(context.Background(), name, listwatch.MergePatch, []byte(patch), ""); err != nil {
		e.t.Fatal(err)
	}
}

// metric returns the value of a kinformer_controller_* counter, or the sample count of
// a histogram, summed over the controller's series whose labels include the given
// name-value pairs.
func (e *env) metric(name string, labels ...string) float64 {
	e.t.Helper()
	families, err := e.reg.Gather()
	if err != nil {
		e.t.Fatal(err)
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if got["controller"] != Name {
				continue
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if got[labels[i]] != labels[i+1] {
					continue series
				}
			}
			sum += m.GetCounter().GetValue() + float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum
}

// staleSyncs counts the syncs skipped because the cache of resource was behind.
func (e *env) staleSyncs(resource string) float64 {
	return e.metric("kinformer_controller_stale_syncs_total", "resource", resource)
}

// syncs counts the syncs that ran to the end (a stale one is skipped, not run).
func (e *env) syncs() float64 { return e.metric("kinformer_controller_sync_duration_seconds") }

// syncsOrSkips counts the syncs that ran and the syncs skipped as stale.
func (e *env) syncsOrSkips() float64 {
	return e.syncs() + e.metric("kinformer_controller_stale_syncs_total")
}

// syncOnce enqueues key and waits until a sync has run to the end after that: one that
// found the caches behind the controller's writes is retried until one runs.
func (e *env) syncOnce(key string) {
	e.t.Helper()
	before := e.syncs()
	e.ctrl.Queue().Add(key)
	testwait.Eventually(e.t, 10*time.Second, func() bool { return e.syncs() > before }, "%s was not synced", key)
}

func (e *env) scale(name string, replicas int32) {
	e.t.Helper()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
	if _, err := e.rss.Patch(context.Background(), name, listwatch.MergePatch, []byte(patch), ""); err != nil {
		e.t.Fatal(err)
	}
}

// serverPods lists the pods on the server (not the controller's cache).
func (e *env) serverPods() []*object.Pod {
	e.t.Helper()
	l, err := e.pods.List(context.Background(), listwatch.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return l.Items
}

// ownedActive returns the active pods on the server controlled by rs.
func (e *env) ownedActive(rs *object.ReplicaSet) []*object.Pod {
	var out []*object.Pod
	for _, p := range e.serverPods() {
		if ref := object.ControllerRef(&p.ObjectMeta); ref != nil && ref.UID == rs.UID && isActive(p) {
			out = append(out, p)
		}
	}
	return out
}

func names(pods []*object.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

// setReady marks a pod Running and Ready since `since`, as a kubelet would.
func (e *env) setReady(p *object.Pod, since time.Time) {
	e.t.Helper()
	patch := fmt.Sprintf(`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastTransitionTime":%q}]}}`,
		since.UTC().Format(time.RFC3339))
	if _, err := e.pods.Patch(context.Background(), p.Name, listwatch.MergePatch, []byte(patch), "status"); err != nil {
		e.t.Fatal(err)
	}
}
