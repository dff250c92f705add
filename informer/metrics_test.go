package informer

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/object"
)

// TestMetricsCountWhatHappened checks the values, not just the presence, of the
// informer's metrics through a sync, some events, a forced relist and a stuck handler.
func TestMetricsCountWhatHappened(t *testing.T) {
	e := newEnv(t, apisim.Options{})
	e.create(t, "a", nil)
	pods := map[string]string{"name": "pods"}
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	inf := mustNew(t, e.pods, Options[*object.Pod]{Name: "pods", Reflector: fastReflector(), Metrics: m})
	rec := newRecorder()
	inf.AddEventHandler(rec, HandlerOptions{Name: "rec"})
	stuck := newRecorder()
	stuck.block = make(chan struct{})
	defer close(stuck.block)
	inf.AddEventHandler(stuck, HandlerOptions{Name: "stuck", BufferSize: 2})
	run(t, inf)
	testwait.Eventually(t, 10*time.Second, inf.HasSynced, "waiting for sync")
	for _, n := range []string{"b", "c", "d"} {
		e.create(t, n, nil)
	}
	e.remove(t, "b")
	testwait.Eventually(t, 10*time.Second, func() bool { return rec.count("delete ns/b") == 1 }, "waiting for the events")
	e.gapThenRelist(t, rec, func() { e.create(t, "during-gap", nil) })
	testwait.Eventually(t, 10*time.Second, func() bool {
		return metric(t, reg, "kinformer_reflector_last_resource_version", pods) == float64(e.sim.ResourceVersion())
	}, "waiting for the relist's RV")

	counts := map[string]float64{
		"lists":   metric(t, reg, "kinformer_reflector_lists_total", pods),
		"relists": metric(t, reg, "kinformer_reflector_relists_total", pods),
		"added":   metric(t, reg, "kinformer_reflector_watch_events_total", map[string]string{"name": "pods", "type": "ADDED"}),
		"deleted": metric(t, reg, "kinformer_reflector_watch_events_total", map[string]string{"name": "pods", "type": "DELETED"}),
		"listed":  metric(t, reg, "kinformer_informer_listed_objects_total", pods),
	}
	// b, c, d and the gap's "cut-1" were watched as ADDED; the relist found during-gap.
	// The first list delivered a, the relist a, c, d, cut-1 and during-gap.
	want := map[string]float64{"lists": 2, "relists": 1, "added": 4, "deleted": 1, "listed": 6}
	for k, w := range want {
		if counts[k] != w {
			t.Errorf("%s = %v, want %v", k, counts[k], w)
		}
	}
	if w := metric(t, reg, "kinformer_reflector_watches_total", pods); w < 2 {
		t.Errorf("watches = %v, want at least 2 (one before the gap, one after)", w)
	}

	handler := func(name, h string) float64 {
		return metric(t, reg, name, map[string]string{"name": "pods", "handler": h})
	}
	if d, c := handler("kinformer_informer_handler_buffer_depth", "rec"), handler("kinformer_informer_handler_coalesced_total", "rec"); d != 0 || c != 0 {
		t.Errorf("a handler that keeps up: depth %v, coalesced %v", d, c)
	}
	// stuck holds its first add; 2 wait in its buffer and the rest are coalesced.
	if d, l, c := handler("kinformer_informer_handler_buffer_depth", "stuck"), handler("kinformer_informer_handler_lag_seconds", "stuck"),
		handler("kinformer_informer_handler_coalesced_total", "stuck"); d < 3 || l <= 0 || c == 0 {
		t.Errorf("a stuck handler: depth %v, lag %v, coalesced %v", d, l, c)
	}
	if n := series(t, reg, "kinformer_informer_handler_buffer_depth"); n != 2 {
		t.Errorf("%d depth series, want one per handler", n)
	}
	if got, want := metric(t, reg, "kinformer_informer_cached_objects", pods), float64(inf.Cache().Len()); got != want || want == 0 {
		t.Errorf("kinformer_informer_cached_objects = %v, want the cache's %v", got, want)
	}
}

// metric reads one series from reg: the counter or gauge `name` with these labels, or
// -1 when there is no such series.
func metric(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range families {
		if fam.GetName() != name {
			continue
		}
	series:
		for _, m := range fam.GetMetric() {
			for _, lp := range m.GetLabel() {
				if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
					continue series
				}
			}
			if m.Counter != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return -1
}

// series counts the series of name in reg.
func series(t *testing.T, reg *prometheus.Registry, name string) int {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range families {
		if fam.GetName() == name {
			return len(fam.GetMetric())
		}
	}
	return 0
}
