package workqueue

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics exports queues to Prometheus under the names existing workqueue dashboards
// use, each labelled with the queue's name:
//
//	workqueue_depth, workqueue_adds_total, workqueue_queue_duration_seconds,
//	workqueue_work_duration_seconds, workqueue_unfinished_work_seconds,
//	workqueue_longest_running_processor_seconds, workqueue_retries_total
//
// Depth, unfinished work and the longest-running processor are read from the queues when
// Prometheus scrapes, so no goroutine keeps them up to date.
type Metrics struct {
	adds, retries       *prometheus.CounterVec
	queueTime, workTime *prometheus.HistogramVec
	depth, unfinished   *prometheus.Desc
	longest             *prometheus.Desc

	mu     sync.Mutex
	queues map[string]statser
}

type statser interface {
	stats() (depth int, unfinished, longest time.Duration)
}

// NewMetrics registers the workqueue metrics on reg (never on a global registry).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	buckets := prometheus.ExponentialBuckets(1e-8, 10, 10)
	m := &Metrics{
		adds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "workqueue_adds_total",
			Help: "Total number of adds handled by workqueue"}, []string{"name"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "workqueue_retries_total",
			Help: "Total number of retries handled by workqueue"}, []string{"name"}),
		queueTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "workqueue_queue_duration_seconds",
			Help: "How long in seconds an item stays in workqueue before being requested.", Buckets: buckets}, []string{"name"}),
		workTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "workqueue_work_duration_seconds",
			Help: "How long in seconds processing an item from workqueue takes.", Buckets: buckets}, []string{"name"}),
		depth: prometheus.NewDesc("workqueue_depth", "Current depth of workqueue", []string{"name"}, nil),
		unfinished: prometheus.NewDesc("workqueue_unfinished_work_seconds",
			"How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads.", []string{"name"}, nil),
		longest: prometheus.NewDesc("workqueue_longest_running_processor_seconds",
			"How many seconds has the longest running processor for workqueue been running.", []string{"name"}, nil),
		queues: map[string]statser{},
	}
	for _, c := range []prometheus.Collector{m.adds, m.retries, m.queueTime, m.workTime, (*gauges)(m)} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// gauges is the scrape-time collector of the per-queue gauges.
type gauges Metrics

func (g *gauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- g.depth
	ch <- g.unfinished
	ch <- g.longest
}

func (g *gauges) Collect(ch chan<- prometheus.Metric) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for name, q := range g.queues {
		depth, unfinished, longest := q.stats()
		ch <- prometheus.MustNewConstMetric(g.depth, prometheus.GaugeValue, float64(depth), name)
		ch <- prometheus.MustNewConstMetric(g.unfinished, prometheus.GaugeValue, unfinished.Seconds(), name)
		ch <- prometheus.MustNewConstMetric(g.longest, prometheus.GaugeValue, longest.Seconds(), name)
	}
}

// forQueue binds the metrics to one queue's name. A later queue with the same name
// replaces the earlier one in the gauges.
func (m *Metrics) forQueue(name string, q statser) *queueMetrics {
	m.mu.Lock()
	m.queues[name] = q
	m.mu.Unlock()
	return &queueMetrics{
		adds: m.adds.WithLabelValues(name), retries: m.retries.WithLabelValues(name),
		queueTime: m.queueTime.WithLabelValues(name), workTime: m.workTime.WithLabelValues(name),
	}
}

// queueMetrics are one queue's children of the vectors. A nil *queueMetrics records
// nothing, so a queue without metrics pays one nil check per event.
type queueMetrics struct {
	adds, retries       prometheus.Counter
	queueTime, workTime prometheus.Observer
}

func (m *queueMetrics) added() {
	if m != nil {
		m.adds.Inc()
	}
}

func (m *queueMetrics) retried() {
	if m != nil {
		m.retries.Inc()
	}
}

func (m *queueMetrics) got(waited time.Duration) {
	if m != nil {
		m.queueTime.Observe(waited.Seconds())
	}
}

func (m *queueMetrics) done(worked time.Duration) {
	if m != nil {
		m.workTime.Observe(worked.Seconds())
	}
}
