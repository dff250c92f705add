package deployment

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/controllers"
	"github.com/kinformer/kinformer/controllers/consistency"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// guardEnv runs the Deployment controller alone (nothing else writes ReplicaSets, so a
// Conflict can only come from its own stale reads) on a simulator behind a proxy that
// records each write and its answer.
type guardEnv struct {
	t      *testing.T
	sim    *apisim.Server
	dc     *Controller
	reg    *prometheus.Registry
	deploy *listwatch.Resource[*object.Deployment]
	rss    *listwatch.Resource[*object.ReplicaSet]

	mu     sync.Mutex
	writes []string // "METHOD path code"
}

func newGuardEnv(t *testing.T) *guardEnv {
	t.Helper()
	leakcheck.Check(t)
	e := &guardEnv{t: t, sim: apisim.New(apisim.Options{}), reg: prometheus.NewRegistry()}
	t.Cleanup(func() { e.sim.Close() })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			e.sim.ServeHTTP(w, r) // lists and watches pass untouched
			return
		}
		rec := httptest.NewRecorder()
		e.sim.ServeHTTP(rec, r)
		e.mu.Lock()
		e.writes = append(e.writes, fmt.Sprintf("%s %s %d", r.Method, r.URL.Path, rec.Code))
		e.mu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(srv.Close)
	c, err := listwatch.New(&listwatch.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	ctx, cancel := context.WithCancel(context.Background())
	metrics, err := controllers.NewMetrics(e.reg)
	if err != nil {
		t.Fatal(err)
	}
	f := informer.NewFactory(c, informer.FactoryOptions{})
	if e.dc, err = New(ctx, f, c, Options{Metrics: metrics}); err != nil {
		t.Fatal(err)
	}
	f.Start(ctx)
	if err := informer.WaitForSync(testwait.Context(t, 10*time.Second), e.dc.Syncers()...); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); e.dc.Run(ctx, ctx, 2) }()
	t.Cleanup(func() { cancel(); <-done; f.Shutdown() })
	info := func(r string) listwatch.ResourceInfo {
		i, err := c.Discover(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	e.deploy = listwatch.For[*object.Deployment](c, info(resourceDeployments), "ns")
	e.rss = listwatch.For[*object.ReplicaSet](c, info(resourceReplicaSets), "ns")
	return e
}

// count returns how many writes had the method ("": any), a path containing part, and
// the code (0: any).
func (e *guardEnv) count(method, part string, code int) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, w := range e.writes {
		f := strings.Fields(w)
		if (method == "" || f[0] == method) && strings.Contains(f[1], part) && (code == 0 || f[2] == fmt.Sprint(code)) {
			n++
		}
	}
	return n
}

// counter returns a kinformer_controller_* counter of the Deployment controller.
func (e *guardEnv) counter(name string, labels ...string) float64 {
	e.t.Helper()
	families, err := e.reg.Gather()
	if err != nil {
		e.t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metrics:
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
					continue metrics
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

func (e *guardEnv) staleSyncs() float64 {
	return e.counter("kinformer_controller_stale_syncs_total", "resource", resourceReplicaSets)
}

// scale sets the Deployment's replicas, and waits for a sync that comes while the
// ReplicaSet informer is held: one skipped as stale, or one that wrote a ReplicaSet or
// failed (what a sync without the guard does).
func (e *guardEnv) scaleWhileHeld(replicas int) {
	e.t.Helper()
	stale, writes, errs := e.staleSyncs(), e.count("", "/replicasets", 0), e.counter("kinformer_controller_sync_errors_total")
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
	if _, err := e.deploy.Patch(context.Background(), "web", listwatch.MergePatch, []byte(patch), ""); err != nil {
		e.t.Fatal(err)
	}
	testwait.Eventually(e.t, 10*time.Second, func() bool {
		return e.staleSyncs() > stale || e.count("", "/replicasets", 0) > writes || e.counter("kinformer_controller_sync_errors_total") > errs
	}, "no sync after the Deployment was scaled")
}

// checkNoStaleActions fails the test if the controller wrote from a stale cache: a
// second create of the ReplicaSet, a write refused with a Conflict (a scale from a size
// the ReplicaSet no longer had), or a failed sync.
func (e *guardEnv) checkNoStaleActions() {
	e.t.Helper()
	if n := e.count("POST", "/replicasets", 0); n != 1 {
		e.t.Errorf("%d ReplicaSet creates, want 1", n)
	}
	if n := e.count("PATCH", "/replicasets/", http.StatusConflict); n != 0 {
		e.t.Errorf("%d ReplicaSet patches refused with a Conflict: scaled from a stale size", n)
	}
	if n := e.counter("kinformer_controller_sync_errors_total"); n != 0 {
		e.t.Errorf("%v syncs failed: the controller acted on a ReplicaSet cache without its own writes", n)
	}
}

// rs returns the Deployment's only ReplicaSet on the server.
func (e *guardEnv) rs() *object.ReplicaSet {
	e.t.Helper()
	l, err := e.rss.List(context.Background(), listwatch.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	if len(l.Items) != 1 {
		e.t.Fatalf("%d ReplicaSets, want 1", len(l.Items))
	}
	return l.Items[0]
}

// holdReplicaSets holds back the ReplicaSet watch events from now on, until release or
// the end of the test.
func (e *guardEnv) holdReplicaSets() (release func()) {
	e.sim.Faults().DelayWatchEvents("replicasets", time.Hour)
	release = func() { e.sim.Faults().DelayWatchEvents("replicasets", 0) }
	e.t.Cleanup(release)
	return release
}

// caughtUp waits until no write of the controller is left unseen by its caches.
func (e *guardEnv) caughtUp() {
	e.t.Helper()
	testwait.Eventually(e.t, 10*time.Second, func() bool { return e.dc.written.Len() == 0 },
		"the controller still waits for its writes")
}

// size waits until the ReplicaSet has spec.replicas want on the server.
func (e *guardEnv) size(want int32) {
	e.t.Helper()
	sizes := func() []int32 {
		l, err := e.rss.List(context.Background(), listwatch.ListOptions{})
		if err != nil {
			e.t.Fatal(err)
		}
		var out []int32
		for _, rs := range l.Items {
			out = append(out, rsReplicas(rs))
		}
		return out
	}
	testwait.Eventually(e.t, 10*time.Second, func() bool { s := sizes(); return len(s) == 1 && s[0] == want },
		"ReplicaSet sizes %v, want one at %d", testwait.Lazy(func() any { return sizes() }), want)
}

func (e *guardEnv) createDeployment(replicas int32) {
	e.t.Helper()
	d := newDeployment("web", `{"containers":[{"name":"c","image":"v1"}]}`, replicas)
	if _, err := e.deploy.Create(context.Background(), d); err != nil {
		e.t.Fatal(err)
	}
}

// The ReplicaSet informer is held behind the ReplicaSet the Deployment controller
// created. The syncs that come meanwhile (the Deployment scaled, its own status and
// revision written) wait instead of creating it again; once its event arrives, the new
// size is set once.
func TestCreatedReplicaSetIsWaitedFor(t *testing.T) {
	e := newGuardEnv(t)
	release := e.holdReplicaSets()
	e.createDeployment(2)
	testwait.Eventually(t, 10*time.Second, func() bool { return e.count("POST", "/replicasets", 0) == 1 }, "no ReplicaSet created")
	e.scaleWhileHeld(3)
	e.checkNoStaleActions()

	release()
	e.size(3)
	e.caughtUp()
	e.checkNoStaleActions()
	if n := e.count("PATCH", e.rs().Name, 0); n != 1 {
		t.Errorf("%d patches of the ReplicaSet, want 1 (2→3)", n)
	}
}

// The ReplicaSet informer is held behind a size the Deployment controller set. A sync
// that comes meanwhile (the Deployment scaled again) waits instead of scaling from the
// size the cache still shows (which the resourceVersion precondition would refuse with
// a Conflict); once the event arrives, the next size is set once.
func TestScaledReplicaSetIsWaitedFor(t *testing.T) {
	e := newGuardEnv(t)
	e.createDeployment(2)
	e.size(2)
	e.caughtUp()

	release := e.holdReplicaSets()
	e.scaleWhileHeld(5) // the cache is caught up: this one scales
	e.size(5)
	e.scaleWhileHeld(6)
	e.checkNoStaleActions()

	release()
	e.size(6)
	e.caughtUp()
	e.checkNoStaleActions()
	if n := e.count("PATCH", e.rs().Name, 0); n != 2 {
		t.Errorf("%d patches of the ReplicaSet, want 2 (2→5, 5→6)", n)
	}
	if e.staleSyncs() == 0 {
		t.Error("no sync was skipped as stale")
	}
}

// Forget, which a sharded controller manager calls for the namespaces it handed away,
// drops the controller's read-your-writes records there, and keeps the others. (No
// Deployment has these keys: no sync runs for them to record or settle.)
func TestForgetDropsTheRecordsOfNamespacesHandedAway(t *testing.T) {
	e := newGuardEnv(t)
	owner := func(key string) consistency.Owner { return consistency.Owner{Key: key, UID: "uid-" + key} }
	keys := []string{"gone/web", "kept/web"}
	for _, key := range keys {
		e.dc.written.WroteAt(owner(key), resourceReplicaSets, "999999") // a write no cache has seen
	}

	e.dc.Forget(func(ns string) bool { return ns == "gone" })

	got := map[string]bool{}
	for _, key := range keys {
		got[key] = e.dc.written.Ready(owner(key)) != nil
	}
	if d := cmp.Diff(map[string]bool{"gone/web": false, "kept/web": true}, got); d != "" {
		t.Errorf("owners still waiting for their writes (-want +got):\n%s", d)
	}
}
