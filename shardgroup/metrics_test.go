package shardgroup

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// metricOf returns the one sample of family name on reg whose labels include the
// name-value pairs given.
func metricOf(t *testing.T, reg *prometheus.Registry, name string, labels ...string) *dto.Metric {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var found []*dto.Metric
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	samples:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if have[labels[i]] != labels[i+1] {
					continue samples
				}
			}
			found = append(found, m)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d samples of %s%v on the registry, want one", len(found), name, labels)
	}
	return found[0]
}

func testutilCounter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	return metricOf(t, reg, name).GetCounter().GetValue()
}

func testutilHistogramCount(t *testing.T, reg *prometheus.Registry, name string) uint64 {
	t.Helper()
	return metricOf(t, reg, name).GetHistogram().GetSampleCount()
}

func TestMetrics(t *testing.T) {
	h := newHarness(t)
	a := h.start("a")
	h.until(time.Minute, "a converged", func() bool { return h.converged("a") })
	h.start("b")
	h.until(time.Minute, "a, b converged", func() bool { return h.converged("a", "b") })

	st := a.m.Status()
	got := map[string]float64{}
	for _, name := range []string{"shardgroup_acting_fraction", "shardgroup_acting_ranges", "shardgroup_target_fraction", "shardgroup_members", "shardgroup_duplicate"} {
		got[name] = metricOf(t, a.reg, name).GetGauge().GetValue()
	}
	got["shardgroup_rebalances_total"] = testutilCounter(t, a.reg, "shardgroup_rebalances_total")
	got["shardgroup_losses_total"] = testutilCounter(t, a.reg, "shardgroup_losses_total")
	got["handovers"] = float64(testutilHistogramCount(t, a.reg, "shardgroup_handover_duration_seconds"))
	want := map[string]float64{
		"shardgroup_acting_fraction":  st.Acting.Fraction(),
		"shardgroup_acting_ranges":    float64(len(st.Acting.Ranges())),
		"shardgroup_target_fraction":  st.Target.Fraction(),
		"shardgroup_members":          2,
		"shardgroup_duplicate":        0,
		"shardgroup_rebalances_total": 1, // b came
		"shardgroup_losses_total":     0,
		"handovers":                   2, // joining (from nothing to everything), then giving b its part
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("a's metrics (-want +got):\n%s", d)
	}
	labels := map[string]string{}
	for _, l := range metricOf(t, a.reg, "shardgroup_members").GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	if d := cmp.Diff(map[string]string{"group": group, "member": "a"}, labels); d != "" {
		t.Errorf("labels (-want +got):\n%s", d)
	}

	// A second member of the same name is refused on the same registry until the first
	// one's metrics are removed.
	o := a.m.opts
	if _, err := New(a.client, o); err == nil {
		t.Error("New with a registry that already has this member's metrics succeeded")
	}
	if !a.m.UnregisterMetrics() {
		t.Error("UnregisterMetrics() = false")
	}
	if _, err := New(a.client, o); err != nil {
		t.Errorf("New after UnregisterMetrics: %v", err)
	}
}
