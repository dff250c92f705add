package leaderelection

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/internal/testrig/testwait"
)

func TestMetricsAndHealth(t *testing.T) {
	env := newEnv(t)
	a := newCandidate(t, env, "a", candidateOptions{})
	leaderOf(t, 2*time.Second, a)
	b := newCandidate(t, env, "b", candidateOptions{})
	testwait.Eventually(t, 2*time.Second, func() bool { return b.e.Leader() == "a" }, "waiting for b to see a")

	for _, tt := range []struct {
		c    *candidate
		want float64
	}{{a, 1}, {b, 0}} {
		if got := masterStatus(t, tt.c.reg); got != tt.want {
			t.Errorf("%s: leader_election_master_status{name=%q} = %v, want %v", tt.c.id, leaseName, got, tt.want)
		}
		if err := tt.c.e.Check(); err != nil {
			t.Errorf("%s: Check() = %v", tt.c.id, err)
		}
	}

	// A second elector of the same lease is refused on the same registry until the
	// first one's gauge is removed.
	cfg := a.e.cfg
	if _, err := New(cfg); err == nil {
		t.Error("New with a registry that already has this lease's gauge succeeded")
	}
	if !a.e.UnregisterMetrics() {
		t.Error("UnregisterMetrics() = false")
	}
	idle, err := New(cfg)
	if err != nil {
		t.Fatalf("New after UnregisterMetrics: %v", err)
	}

	// A stuck renew loop: the elector still thinks it leads, but has not renewed for
	// longer than RenewDeadline. IsLeader already says no; Check reports the process
	// unhealthy.
	idle.mu.Lock()
	idle.leading, idle.lastRenew = true, time.Now().Add(-renewDeadline-2*retryPeriod)
	idle.mu.Unlock()
	if err := idle.Check(); err == nil {
		t.Error("Check() = nil for a leader that has not renewed for longer than RenewDeadline + RetryPeriod")
	}
	if idle.IsLeader() || masterStatus(t, idle.cfg.Registerer.(*prometheus.Registry)) != 0 {
		t.Error("IsLeader() or the gauge says leading past the renew deadline")
	}
}

func masterStatus(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "leader_election_master_status" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "name" && l.GetValue() == leaseName {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("leader_election_master_status{name=%q} not found", leaseName)
	return 0
}
