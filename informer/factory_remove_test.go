package informer

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
)

// TestFactoryRemoveStopsAndUnregisters: a removed informer stops (its handlers hear
// nothing more), its series leave the registry, and the others run on.
func TestFactoryRemoveStopsAndUnregisters(t *testing.T) {
	e := newEnv(t, apisim.Options{}) // checks for leaked goroutines after its cleanup
	f, reg := meteredFactory(t, e)
	defer f.Shutdown()
	ctx := context.Background()
	pods, _ := For[*object.Pod](ctx, f, "pods", Selectors{Namespace: "ns"})
	if _, err := For[*object.Raw](ctx, f, "deployments.apps", Selectors{}); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	pods.AddEventHandler(rec, HandlerOptions{Name: "rec"})
	f.Start(ctx)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := f.WaitForSync(wctx); err != nil {
		t.Fatal(err)
	}
	e.create(t, "a", nil)
	testwait.Eventually(t, 10*time.Second, func() bool { return rec.count("add ns/a") == 1 }, "waiting for ns/a")
	if series := seriesNamed(t, reg, "ns/pods"); series == 0 {
		t.Fatal("no series for ns/pods before the removal: the test would prove nothing")
	}

	if !Remove(f, pods) {
		t.Fatal("Remove did not find the factory's informer")
	}
	if Remove(f, pods) {
		t.Error("a second Remove found it again")
	}
	// Remove returns once the removed informer's goroutines have exited: it has stopped
	// before b exists, so no later wait could make it (wrongly) deliver b.
	if st := pods.Status().State; st != reflector.StateStopped {
		t.Errorf("the removed informer's reflector is %s once Remove returned, want %s", st, reflector.StateStopped)
	}
	e.create(t, "b", nil)
	if series := seriesNamed(t, reg, "ns/pods"); series != 0 {
		t.Errorf("%d series of the removed informer are still exported", series)
	}
	if seriesNamed(t, reg, "deployments.apps") == 0 {
		t.Error("the other informer's series went too")
	}
	if err := f.WaitForSync(wctx); err != nil {
		t.Errorf("WaitForSync after Remove: %v", err)
	}
	again, _ := For[*object.Pod](ctx, f, "pods", Selectors{Namespace: "ns"})
	if again == pods {
		t.Error("For after Remove returned the removed informer")
	}
	testwait.Eventually(t, 10*time.Second, again.HasSynced, "waiting for the new informer")
	if _, ok := again.Lister().Get("ns/b"); !ok {
		t.Error("the new informer misses ns/b")
	}
	if rec.count("add ns/b") != 0 {
		t.Error("a handler of the removed informer still hears events")
	}
}

// seriesNamed counts the exported series whose name label is name.
func seriesNamed(t *testing.T, g prometheus.Gatherer, name string) int {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fam := range families {
		if !strings.HasPrefix(fam.GetName(), "kinformer_") {
			continue
		}
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "name" && l.GetValue() == name {
					n++
				}
			}
		}
	}
	return n
}

// meteredFactory is a factory on e's server whose informers export to reg.
func meteredFactory(t *testing.T, e *env) (*Factory, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	return NewFactory(e.client, FactoryOptions{Reflector: fastReflector(), Metrics: m}), reg
}
