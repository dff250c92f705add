package shardgroup

import "github.com/prometheus/client_golang/prometheus"

// metrics is a member's collector. The gauges of its part are read from the member's
// state when Prometheus scrapes, so they never disagree with Status and need no
// goroutine; the counters and the histogram count as things happen. The group and the
// member are constant labels, so that the members of several groups, or several members
// of one (in tests), can share a registry.
//
//	shardgroup_acting_fraction         share of the hash space this member acts on
//	shardgroup_acting_ranges           ranges that makes: the size of its shard selector
//	shardgroup_target_fraction         share the plan gives it
//	shardgroup_members                 live members it counts, itself included
//	shardgroup_duplicate               1 while another live process runs with its ID
//	shardgroup_rebalances_total        changes of its target (members came or went, a new plan)
//	shardgroup_losses_total            times it stopped everything (no renewal in time,
//	                                   its Lease taken, a hand-over past HandoverTimeout)
//	shardgroup_fenced_writes_total{reason}  writes its Guard refused: "deadline" (its
//	                                   renew deadline had passed) or "not-acting"
//	shardgroup_plans_total             plans it cut for the group from the members' loads
//	shardgroup_balance                 the busiest member's load over the mean, as the
//	                                   member that plans last saw it (only on that member)
//	shardgroup_handover_duration_seconds  from the moment its acting set differed from
//	                                   its target (or a callback started) to the moment
//	                                   they agreed again with no callback running
type metrics struct {
	m                                   *Member
	acting, ranges, target, memberCount *prometheus.Desc
	duplicate                           *prometheus.Desc
	rebalances, losses, plans           prometheus.Counter
	fenced                              *prometheus.CounterVec
	balance                             prometheus.Gauge
	handover                            prometheus.Histogram
}

func newMetrics(m *Member) *metrics {
	labels := prometheus.Labels{"group": m.opts.Group, "member": m.opts.ID}
	desc := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("shardgroup_"+name, help, nil, labels)
	}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: "shardgroup_" + name, Help: help, ConstLabels: labels})
	}
	c := &metrics{
		m:           m,
		acting:      desc("acting_fraction", "Share of the hash space this member acts on."),
		ranges:      desc("acting_ranges", "Ranges of the hash space this member acts on, merged: the size of its shard selector."),
		target:      desc("target_fraction", "Share of the hash space the group's plan gives this member."),
		memberCount: desc("members", "Live members of the group this member counts, itself included."),
		duplicate:   desc("duplicate", "1 while another live process runs with this member's ID (only one of them acts)."),
		rebalances:  counter("rebalances_total", "Changes of this member's target, as members came or went or the plan changed."),
		losses:      counter("losses_total", "Times this member stopped acting on everything: no renewal within the renew deadline, its Lease taken, or a hand-over past its bound."),
		plans:       counter("plans_total", "Plans this member cut for the group from the members' loads."),
		fenced: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shardgroup_fenced_writes_total",
			Help: "Writes this member's Guard refused: past its renew deadline, or in a namespace it does not act in.", ConstLabels: labels},
			[]string{"reason"}),
		balance: prometheus.NewGauge(prometheus.GaugeOpts{Name: "shardgroup_balance",
			Help: "The busiest member's load over the mean, as this member (the one that plans) last saw it.", ConstLabels: labels}),
		handover: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "shardgroup_handover_duration_seconds",
			Help:        "Time from the moment this member's acting set differed from its target to the moment they agreed again.",
			ConstLabels: labels, Buckets: prometheus.ExponentialBuckets(0.25, 2, 10)}),
	}
	// Both reasons are series from the start: a dashboard sees 0, not nothing.
	c.fenced.WithLabelValues("deadline")
	c.fenced.WithLabelValues("not-acting")
	return c
}

func (c *metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.acting, c.ranges, c.target, c.memberCount, c.duplicate} {
		ch <- d
	}
	for _, col := range []prometheus.Collector{c.rebalances, c.losses, c.plans, c.fenced, c.balance, c.handover} {
		col.Describe(ch)
	}
}

func (c *metrics) Collect(ch chan<- prometheus.Metric) {
	st := c.m.Status()
	ranges := 0
	if sel, ok := c.m.Acting(); ok {
		ranges = len(sel.Ranges)
	}
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	dup := 0.0
	if st.Duplicate != "" {
		dup = 1
	}
	gauge(c.acting, st.Acting.Fraction())
	gauge(c.ranges, float64(ranges))
	gauge(c.target, st.Target.Fraction())
	gauge(c.memberCount, float64(len(st.Members)))
	gauge(c.duplicate, dup)
	for _, col := range []prometheus.Collector{c.rebalances, c.losses, c.plans, c.fenced, c.balance, c.handover} {
		col.Collect(ch)
	}
}

// UnregisterMetrics removes the member's metrics from Options.Registerer, so that
// another member of the same group and ID can register there (in tests, or after a
// restart within one process). It reports whether there were metrics to remove.
func (m *Member) UnregisterMetrics() bool {
	if m.metrics == nil {
		return false
	}
	return m.opts.Registerer.Unregister(m.metrics)
}
