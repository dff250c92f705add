package manager

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/simtest"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// running is a manager started in the background.
type running struct {
	m      *Manager
	cancel context.CancelFunc
	done   chan error
}

func start(t *testing.T, opts Options) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m, err := New(ctx, opts)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	r := &running{m: m, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- m.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

func (r *running) stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	select {
	case err, ok := <-r.done:
		if ok {
			close(r.done)
		}
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the manager did not stop")
		return nil
	}
}

func get(t *testing.T, addr, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

type fixture struct {
	sim  *apisim.Server
	c    *listwatch.Client
	rss  *listwatch.Resource[*object.ReplicaSet]
	pods *listwatch.Resource[*object.Pod]
}

func newFixture(t *testing.T) *fixture {
	sim, c := simtest.Start(t, apisim.Options{})
	ctx := context.Background()
	rsInfo, _ := c.Discover(ctx, "replicasets.apps")
	podInfo, _ := c.Discover(ctx, "pods")
	return &fixture{sim: sim, c: c, rss: listwatch.For[*object.ReplicaSet](c, rsInfo, "ns"), pods: listwatch.For[*object.Pod](c, podInfo, "ns")}
}

func (f *fixture) createRS(t *testing.T, name string, replicas int32) {
	t.Helper()
	rs := &object.ReplicaSet{ObjectMeta: object.ObjectMeta{Name: name},
		Spec: object.ReplicaSetSpec{Replicas: &replicas, Selector: &object.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: object.PodTemplateSpec{ObjectMeta: object.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: object.MustPodSpec(`{"containers":[{"name":"c","image":"nginx"}]}`)}}}
	if _, err := f.rss.Create(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) podCount(t *testing.T) int {
	l, err := f.pods.List(context.Background(), listwatch.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return len(l.Items)
}

func (f *fixture) holder(t *testing.T) string {
	info, _ := f.c.Discover(context.Background(), "leases.coordination.k8s.io")
	l, err := listwatch.For[*object.Lease](f.c, info, "kube-system").Get(context.Background(), LeaseName)
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func TestRunsControllersAndServesEndpoints(t *testing.T) {
	f := newFixture(t)
	r := start(t, Options{Client: f.c, MetricsAddr: "127.0.0.1:0", Workers: 2})
	f.createRS(t, "web", 3)
	testwait.Eventually(t, 10*time.Second, func() bool { return f.podCount(t) == 3 },
		"%d pods", testwait.Lazy(func() any { return f.podCount(t) }))
	testwait.Eventually(t, 5*time.Second, func() bool { code, _ := get(t, r.m.Addr(), "/readyz"); return code == 200 },
		"not ready")
	if code, body := get(t, r.m.Addr(), "/healthz"); code != 200 {
		t.Errorf("/healthz: %d %s", code, body)
	}
	// The sync that created the pods is observed once it returns, which may be just
	// after the third pod shows: wait for it.
	var metrics string
	testwait.Eventually(t, 5*time.Second, func() bool {
		_, metrics = get(t, r.m.Addr(), "/metrics")
		return strings.Contains(metrics, `kinformer_controller_sync_duration_seconds_count{controller="replicaset"}`)
	}, "no sync observed in /metrics")
	for _, want := range []string{
		`workqueue_adds_total{name="replicaset"}`,
		`workqueue_depth{name="replicaset"}`,
		`kinformer_controller_sync_duration_seconds_count{controller="replicaset"}`,
		`go_goroutines`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(metrics, "leader_election_master_status") {
		t.Error("leader_election_master_status exported without leader election")
	}
	if err := r.stop(t); err != nil {
		t.Errorf("Run ended with %v", err)
	}
}

// Two managers on one apiserver: one leads and acts; the other is a warm standby (ready,
// informers synced, no workers). When the leader stops, it releases the lease and the
// standby takes over at once and acts on its already-synced cache.
func TestLeaderElectionHandsOver(t *testing.T) {
	f := newFixture(t)
	le := func(id string) Options {
		return Options{Client: f.c, MetricsAddr: "127.0.0.1:0", LeaderElect: true, Workers: 2,
			LeaderElection: LeaderElection{Identity: id, LeaseDuration: 1500 * time.Millisecond,
				RenewDeadline: time.Second, RetryPeriod: 200 * time.Millisecond}}
	}
	a := start(t, le("a"))
	testwait.Eventually(t, 5*time.Second, func() bool { return f.holder(t) == "a" },
		"holder %s", testwait.Lazy(func() any { return f.holder(t) }))
	b := start(t, le("b"))
	f.createRS(t, "web", 2)
	testwait.Eventually(t, 10*time.Second, func() bool { return f.podCount(t) == 2 },
		"%d pods", testwait.Lazy(func() any { return f.podCount(t) }))
	testwait.Eventually(t, 5*time.Second, func() bool { code, _ := get(t, b.m.Addr(), "/readyz"); return code == 200 },
		"the standby is not ready")
	for _, c := range []struct {
		r    *running
		want string
	}{{a, "1"}, {b, "0"}} {
		_, metrics := get(t, c.r.m.Addr(), "/metrics")
		if want := `leader_election_master_status{name="` + LeaseName + `"} ` + c.want; !strings.Contains(metrics, want) {
			t.Errorf("%s: /metrics lacks %s", c.r.m.Identity(), want)
		}
	}

	stopped := time.Now()
	if err := a.stop(t); err != nil {
		t.Fatalf("the leader's Run ended with %v", err)
	}
	testwait.Eventually(t, 2*time.Second, func() bool { return f.holder(t) == "b" },
		"holder %s", testwait.Lazy(func() any { return f.holder(t) }))
	if took := time.Since(stopped); took > 1500*time.Millisecond {
		t.Errorf("hand-over took %s: the lease was not released", took)
	}
	// The new leader acts at once on its synced cache.
	patch := []byte(`{"spec":{"replicas":4}}`)
	if _, err := f.rss.Patch(context.Background(), "web", listwatch.MergePatch, patch, ""); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 5*time.Second, func() bool { return f.podCount(t) == 4 },
		"%d pods", testwait.Lazy(func() any { return f.podCount(t) }))
}

// A leader cut off from the apiserver stops acting within the renew deadline and Run
// reports the lost lease (the command then exits non-zero).
func TestLostLeaseStopsTheLeader(t *testing.T) {
	f := newFixture(t)
	r := start(t, Options{Client: f.c, LeaderElect: true,
		LeaderElection: LeaderElection{Identity: "a", LeaseDuration: 1500 * time.Millisecond, RenewDeadline: time.Second, RetryPeriod: 200 * time.Millisecond}})
	testwait.Eventually(t, 5*time.Second, func() bool { return f.holder(t) == "a" },
		"holder %s", testwait.Lazy(func() any { return f.holder(t) }))
	f.sim.Faults().Forbid("leases", true)
	var once sync.Once
	select {
	case err := <-r.done:
		once.Do(func() { close(r.done) })
		if err == nil || !strings.Contains(err.Error(), "lost") {
			t.Errorf("Run ended with %v, want the lost lease", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the leader kept running without its lease")
	}
}
