package leaderelection

import "github.com/prometheus/client_golang/prometheus"

// statusCollector exports leader_election_master_status{name=<lease name>}, the gauge
// kube-controller-manager exposes. It is read from IsLeader when Prometheus scrapes, so it
// never disagrees with the elector and needs no goroutine to keep it current. The lease
// name is a constant label of each elector's own collector: electors of different leases
// can share a registry, while two of the same lease on one registry are refused.
type statusCollector struct {
	desc *prometheus.Desc
	e    *Elector
}

func newStatusCollector(e *Elector) *statusCollector {
	return &statusCollector{
		desc: prometheus.NewDesc("leader_election_master_status",
			"1 while this process holds the named lease (leader), 0 while it stands by.",
			nil, prometheus.Labels{"name": e.cfg.Name}),
		e: e,
	}
}

func (c *statusCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *statusCollector) Collect(ch chan<- prometheus.Metric) {
	v := 0.0
	if c.e.IsLeader() {
		v = 1
	}
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, v)
}

// UnregisterMetrics removes the elector's gauge from Config.Registerer, so that another
// elector of the same lease can register there (in tests, or after a restart within one
// process). It reports whether there was a gauge to remove.
func (e *Elector) UnregisterMetrics() bool {
	if e.metrics == nil {
		return false
	}
	return e.cfg.Registerer.Unregister(e.metrics)
}
