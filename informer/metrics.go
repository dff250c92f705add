package informer

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/reflector"
	"github.com/kinformer/kinformer/shard"
)

// Metrics exports informers to Prometheus, on a registry the caller supplies:
//
//	kinformer_reflector_lists_total{name}, kinformer_reflector_watches_total{name},
//	kinformer_reflector_relists_total{name}, kinformer_reflector_watch_events_total{name,type},
//	kinformer_reflector_last_resource_version{name},
//	kinformer_informer_handler_buffer_depth{name,handler},
//	kinformer_informer_handler_lag_seconds{name,handler} (age of the oldest waiting notification),
//	kinformer_informer_handler_coalesced_total{name,handler},
//	kinformer_informer_store_errors_total{name} (objects the cache could not take: an
//	index function failed), kinformer_informer_handler_panics_total{name,handler},
//	kinformer_informer_cache_mutations_total{name} (see MutationDetector),
//	kinformer_informer_shard_filtered_on_client{name} (1 when the server ignores the
//	informer's shard selector and the informer filters alone, 0 when the server filters;
//	absent without a shard, or before a list has told), kinformer_informer_shard_dropped_total{name}
//	(objects and events the informer dropped as outside its shard: 0 while the server filters),
//	kinformer_informer_cached_objects{name} (what the cache holds: with a shard, the
//	informer's part of the cluster), kinformer_informer_listed_objects_total{name}
//	(objects the lists and streaming lists delivered, before any was dropped as outside
//	the shard: the cost of a shard change, to compare with the objects it moved; a
//	growth lists the part gained alone from a server that filters, a shrink lists
//	nothing)
//
// Handler gauges and the cache's size are read at scrape time.
type Metrics struct {
	lists, watches, relists *prometheus.CounterVec
	events                  *prometheus.CounterVec
	lastRV                  *prometheus.GaugeVec
	storeErrors, panics     *prometheus.CounterVec
	mutations               *prometheus.CounterVec
	shardOnClient           *prometheus.GaugeVec
	shardDropped            *prometheus.CounterVec
	listed                  *prometheus.CounterVec
	depth, lag, coalesced   *prometheus.Desc
	cached                  *prometheus.Desc
	shardFraction           *prometheus.Desc

	mu        sync.Mutex
	informers map[string]handlerStats
}

type handlerStats interface {
	handlerStats() []handlerStat // read on the informer's own clock
	cachedObjects() int
	// shardFraction is the part of the hash space the shard selects; false without one.
	shardFraction() (float64, bool)
}

type handlerStat struct {
	name      string
	depth     int
	lag       time.Duration
	coalesced uint64
}

// NewMetrics registers the informer metrics on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, append([]string{"name"}, labels...))
	}
	m := &Metrics{
		lists:   counter("kinformer_reflector_lists_total", "Lists started by the reflector."),
		watches: counter("kinformer_reflector_watches_total", "Watches started by the reflector."),
		relists: counter("kinformer_reflector_relists_total", "Relists forced by 410 Gone or a too-large resourceVersion."),
		events:  counter("kinformer_reflector_watch_events_total", "Watch events received, by type.", "type"),
		lastRV:  prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kinformer_reflector_last_resource_version", Help: "Newest resourceVersion seen (when numeric)."}, []string{"name"}),
		storeErrors: counter("kinformer_informer_store_errors_total",
			"Objects the cache could not take because an index function failed on them (the key keeps its previous state)."),
		panics:    counter("kinformer_informer_handler_panics_total", "Handlers stopped by a panic.", "handler"),
		mutations: counter("kinformer_informer_cache_mutations_total", "Cached objects found changed in place by the mutation detector."),
		shardOnClient: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kinformer_informer_shard_filtered_on_client",
			Help: "1 when the server ignores the informer's shard selector (no ShardedListAndWatch feature gate) and the informer filters alone, 0 when the server filters."}, []string{"name"}),
		shardDropped: counter("kinformer_informer_shard_dropped_total",
			"Objects and watch events dropped by the informer as outside its shard, which a server that filters never sends."),
		listed: counter("kinformer_informer_listed_objects_total",
			"Objects delivered by lists and streaming lists, before any was dropped as outside the shard."),
		depth:     prometheus.NewDesc("kinformer_informer_handler_buffer_depth", "Notifications waiting for a handler.", []string{"name", "handler"}, nil),
		lag:       prometheus.NewDesc("kinformer_informer_handler_lag_seconds", "Age of the oldest notification waiting for a handler.", []string{"name", "handler"}, nil),
		coalesced: prometheus.NewDesc("kinformer_informer_handler_coalesced_total", "Notifications merged because a handler's buffer was full.", []string{"name", "handler"}, nil),
		cached:    prometheus.NewDesc("kinformer_informer_cached_objects", "Objects in the informer's cache.", []string{"name"}, nil),
		shardFraction: prometheus.NewDesc("kinformer_informer_shard_fraction",
			"The part of the hash space the informer's shard selects (absent without a shard): what its cache holds once synced. "+
				"A sharded manager's informers select at least what its member acts on (shardgroup_acting_fraction).", []string{"name"}, nil),
		informers: map[string]handlerStats{},
	}
	for _, c := range []prometheus.Collector{m.lists, m.watches, m.relists, m.events, m.lastRV, m.storeErrors, m.panics, m.mutations,
		m.shardOnClient, m.shardDropped, m.listed, (*handlerCollector)(m)} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

type handlerCollector Metrics

func (c *handlerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.depth
	ch <- c.lag
	ch <- c.coalesced
	ch <- c.cached
	ch <- c.shardFraction
}

func (c *handlerCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, inf := range c.informers {
		ch <- prometheus.MustNewConstMetric(c.cached, prometheus.GaugeValue, float64(inf.cachedObjects()), name)
		if f, ok := inf.shardFraction(); ok {
			ch <- prometheus.MustNewConstMetric(c.shardFraction, prometheus.GaugeValue, f, name)
		}
		for _, h := range inf.handlerStats() {
			ch <- prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, float64(h.depth), name, h.name)
			ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, h.lag.Seconds(), name, h.name)
			ch <- prometheus.MustNewConstMetric(c.coalesced, prometheus.CounterValue, float64(h.coalesced), name, h.name)
		}
	}
}

// forInformer registers an informer under name, or name#2, #3... when the name is taken,
// so two informers never share a series.
func (m *Metrics) forInformer(name string, inf handlerStats) *informerMetrics {
	m.mu.Lock()
	defer m.mu.Unlock()
	unique := name
	for n := 2; m.informers[unique] != nil; n++ {
		unique = name + "#" + strconv.Itoa(n)
	}
	m.informers[unique] = inf
	return &informerMetrics{m: m, name: unique}
}

// informerMetrics is one informer's view of Metrics; it is the reflector's Metrics.
type informerMetrics struct {
	m    *Metrics
	name string
}

func (im *informerMetrics) List()   { im.m.lists.WithLabelValues(im.name).Inc() }
func (im *informerMetrics) Watch()  { im.m.watches.WithLabelValues(im.name).Inc() }
func (im *informerMetrics) Relist() { im.m.relists.WithLabelValues(im.name).Inc() }
func (im *informerMetrics) Event(t listwatch.EventType) {
	im.m.events.WithLabelValues(im.name, string(t)).Inc()
}

// ShardFiltering sets the gauge once the reflector knows who filters. After a SetShard
// the reflector does not know again until the new shard's first request tells, and the
// series keeps the old answer until then; SetShard to no shard at all removes it.
func (im *informerMetrics) ShardFiltering(f reflector.ShardFiltering) {
	switch f {
	case reflector.ShardFilteringClient:
		im.m.shardOnClient.WithLabelValues(im.name).Set(1)
	case reflector.ShardFilteringServer:
		im.m.shardOnClient.WithLabelValues(im.name).Set(0)
	case "":
		im.m.shardOnClient.DeleteLabelValues(im.name)
	}
}

func (im *informerMetrics) ShardDropped(n int) {
	im.m.shardDropped.WithLabelValues(im.name).Add(float64(n))
}

func (im *informerMetrics) Listed(n int) { im.m.listed.WithLabelValues(im.name).Add(float64(n)) }

func (im *informerMetrics) storeError() { im.m.storeErrors.WithLabelValues(im.name).Inc() }
func (im *informerMetrics) mutation()   { im.m.mutations.WithLabelValues(im.name).Inc() }
func (im *informerMetrics) handlerPanic(handler string) {
	im.m.panics.WithLabelValues(im.name, handler).Inc()
}

// forget removes the informer's series, so a removed informer is not exported forever.
func (im *informerMetrics) forget() {
	m := im.m
	m.mu.Lock()
	delete(m.informers, im.name)
	m.mu.Unlock()
	for _, v := range []*prometheus.MetricVec{m.lists.MetricVec, m.watches.MetricVec, m.relists.MetricVec, m.events.MetricVec, m.lastRV.MetricVec,
		m.storeErrors.MetricVec, m.panics.MetricVec, m.mutations.MetricVec, m.shardOnClient.MetricVec, m.shardDropped.MetricVec,
		m.listed.MetricVec} {
		v.DeletePartialMatch(prometheus.Labels{"name": im.name})
	}
}

func (im *informerMetrics) ResourceVersion(rv string) {
	if v, err := strconv.ParseFloat(rv, 64); err == nil {
		im.m.lastRV.WithLabelValues(im.name).Set(v)
	}
}

func (inf *Informer[T]) cachedObjects() int { return inf.Cache().Len() }

func (inf *Informer[T]) shardFraction() (float64, bool) {
	sel := inf.reflector.Shard()
	if sel.IsZero() {
		return 0, false
	}
	return shard.SetOf(sel.Ranges...).Fraction(), true
}

func (inf *Informer[T]) handlerStats() []handlerStat {
	now := inf.clock.Now()
	inf.mu.Lock()
	listeners := append([]*listener[T](nil), inf.listeners...)
	inf.mu.Unlock()
	out := make([]handlerStat, 0, len(listeners))
	for i, l := range listeners {
		name := l.name
		if name == "" {
			name = strconv.Itoa(i)
		}
		d, lag, c := l.depth(inf.stampOf(now))
		out = append(out, handlerStat{name: name, depth: d, lag: lag, coalesced: c})
	}
	return out
}
