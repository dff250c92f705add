package controllers

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the sync metrics of every controller of a process, labelled by controller.
type Metrics struct {
	duration *prometheus.HistogramVec
	errors   *prometheus.CounterVec
	drops    *prometheus.CounterVec
	panics   *prometheus.CounterVec
	stale    *prometheus.CounterVec
	notOwn   *prometheus.CounterVec
}

// NewMetrics registers the sync metrics on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "kinformer_controller_sync_duration_seconds", Help: "Time one sync of a key took.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}, []string{"controller"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kinformer_controller_sync_errors_total", Help: "Syncs that returned an error or panicked (and were retried or dropped)."}, []string{"controller"}),
		drops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kinformer_controller_dropped_keys_total", Help: "Keys dropped after the retry limit."}, []string{"controller"}),
		panics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kinformer_controller_panics_total", Help: "Syncs that panicked (recovered and retried, unless the controller crashes on panics)."}, []string{"controller"}),
		stale: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kinformer_controller_stale_syncs_total",
			Help: "Syncs skipped, and retried, because the resource's cache had not yet seen the controller's own last write to it."},
			[]string{"controller", "resource"}),
		notOwn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kinformer_controller_not_owned_keys_total",
			Help: "Keys forgotten unsynced because this process does not own their namespace (a sharded manager): their owner syncs them."},
			[]string{"controller"}),
	}
	for _, c := range []prometheus.Collector{m.duration, m.errors, m.drops, m.panics, m.stale, m.notOwn} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Metrics) observe(name string, d time.Duration, err error) {
	if m == nil {
		return
	}
	m.duration.WithLabelValues(name).Observe(d.Seconds())
	if err != nil {
		m.errors.WithLabelValues(name).Inc()
	}
}

func (m *Metrics) dropped(name string) {
	if m != nil {
		m.drops.WithLabelValues(name).Inc()
	}
}

func (m *Metrics) panicked(name string) {
	if m != nil {
		m.panics.WithLabelValues(name).Inc()
	}
}

func (m *Metrics) notOwned(name string) {
	if m != nil {
		m.notOwn.WithLabelValues(name).Inc()
	}
}

func (m *Metrics) staleSync(name, resource string) {
	if m != nil {
		m.stale.WithLabelValues(name, resource).Inc()
	}
}
