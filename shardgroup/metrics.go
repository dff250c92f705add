package shardgroup

import "github.com/prometheus/client_golang/prometheus"

// metrics is a member's collector. The gauges are read from the member's state when
// Prometheus scrapes, so they never disagree with Status and need no goroutine; the
// counters and the histogram count as things happen. The group and the member are
// constant labels, so that the members of several groups, or several members of one
// (in tests), can share a registry.
//
//	shardgroup_acting_buckets          buckets this member acts on
//	shardgroup_acting_ranges           ranges they make: the size of its shard selector
//	shardgroup_target_buckets          buckets the assignment gives it
//	shardgroup_members                 live members it counts, itself included
//	shardgroup_rebalances_total        changes of its target (members came or went)
//	shardgroup_losses_total            times it stopped everything, unable to renew
//	shardgroup_handover_duration_seconds  from the moment its acting set differed from
//	                                   its target (or a callback started) to the moment
//	                                   they agreed again with no callback running
type metrics struct {
	m                                    *Member
	buckets, ranges, target, memberCount *prometheus.Desc
	rebalances, losses                   prometheus.Counter
	handover                             prometheus.Histogram
}

func newMetrics(m *Member) *metrics {
	labels := prometheus.Labels{"group": m.opts.Group, "member": m.opts.ID}
	desc := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("shardgroup_"+name, help, nil, labels)
	}
	return &metrics{
		m:           m,
		buckets:     desc("acting_buckets", "Buckets of the hash space this member acts on."),
		ranges:      desc("acting_ranges", "Ranges the buckets this member acts on make, merged: the size of its shard selector."),
		target:      desc("target_buckets", "Buckets the assignment of the live members gives this member."),
		memberCount: desc("members", "Live members of the group this member counts, itself included."),
		rebalances: prometheus.NewCounter(prometheus.CounterOpts{Name: "shardgroup_rebalances_total",
			Help: "Changes of this member's target, as members came or went.", ConstLabels: labels}),
		losses: prometheus.NewCounter(prometheus.CounterOpts{Name: "shardgroup_losses_total",
			Help: "Times this member stopped acting on everything, unable to renew its Lease within the renew deadline.", ConstLabels: labels}),
		handover: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "shardgroup_handover_duration_seconds",
			Help:        "Time from the moment this member's acting set differed from its target to the moment they agreed again.",
			ConstLabels: labels, Buckets: prometheus.ExponentialBuckets(0.25, 2, 10)}),
	}
}

func (c *metrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.buckets
	ch <- c.ranges
	ch <- c.target
	ch <- c.memberCount
	c.rebalances.Describe(ch)
	c.losses.Describe(ch)
	c.handover.Describe(ch)
}

func (c *metrics) Collect(ch chan<- prometheus.Metric) {
	st := c.m.Status()
	ranges := 0
	if _, ok := c.m.Acting(); ok {
		ranges = len(st.Acting.Ranges())
	}
	gauge := func(d *prometheus.Desc, v int) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v))
	}
	gauge(c.buckets, st.Acting.Len())
	gauge(c.ranges, ranges)
	gauge(c.target, st.Target.Len())
	gauge(c.memberCount, len(st.Members))
	c.rebalances.Collect(ch)
	c.losses.Collect(ch)
	c.handover.Collect(ch)
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
