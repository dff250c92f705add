package main

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/controllers/manager"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/workqueue"
)

// snapshot is what the view shows at one moment.
type snapshot struct {
	informers   []informerRow
	queues      []queueRow // none when a cluster's own controller manager does the work
	deployment  *object.Deployment
	replicaSets []*object.ReplicaSet // the Deployment's, by revision
	// err: the engine's counters could not be read, and the figures that come from
	// them (events, syncs, retries, stale skips) are unknown.
	err error
}

type informerRow struct {
	label, short string // in the table, in the summary line
	eventsPerSec float64
	cached       int
}

type queueRow struct {
	name        string
	depth       int
	syncsPerSec float64
	// retries are the keys put back after a failed sync; stale are the syncs skipped,
	// and retried, because a cache had not yet seen the controller's own write.
	retries, stale float64
}

// engineData reads the snapshots from the engine: cache lengths from the informers,
// queue depths from the controllers' work queues, the Deployment and its ReplicaSets
// from the caches, and the counts behind the rates from the engine's registry.
type engineData struct {
	caches   *demoCaches
	queues   []namedQueue
	counters *engineCounters
	clock    clock.Clock

	last   engineCounts
	lastAt time.Time // zero before the first read
}

type namedQueue struct {
	name  string
	queue *workqueue.Queue[string]
}

// newEngineData reads the engine of m: its informers (from the factory its controllers
// share), its controllers' queues and its registry. With m nil (a cluster's own
// controller manager does the work) it starts informers of its own, with a registry
// of their own for the events; stop ends them.
func newEngineData(ctx context.Context, env *demoEnv, m *manager.Manager, clk clock.Clock) (*engineData, func(), error) {
	var f *informer.Factory
	var g prometheus.Gatherer
	var queues []namedQueue
	stop := func() {}
	if m != nil {
		f, g = m.Factory(), m.Gatherer()
		for _, name := range manager.Known() {
			if q, ok := m.Queue(name); ok {
				queues = append(queues, namedQueue{name, q})
			}
		}
	} else {
		reg := prometheus.NewRegistry()
		metrics, err := informer.NewMetrics(reg)
		if err != nil {
			return nil, nil, err
		}
		f, g = informer.NewFactory(env.client, informer.FactoryOptions{Metrics: metrics}), reg
	}
	caches, err := newDemoCaches(ctx, f, env.namespace)
	if err != nil {
		return nil, nil, err
	}
	if m == nil {
		f.Start(ctx)
		stop = f.Shutdown
	}
	names := make([]string, len(queues))
	for i, q := range queues {
		names[i] = q.name
	}
	return &engineData{caches: caches, queues: queues, counters: newEngineCounters(g, names), clock: clk}, stop, nil
}

// sample reads a snapshot; the rates are over the time since the previous one (zero the
// first time).
func (d *engineData) sample() snapshot {
	now := d.clock.Now()
	var s snapshot
	cur, err := d.counters.read()
	s.err = err
	dt := now.Sub(d.lastAt).Seconds()
	rate := func(m map[string]float64, prev map[string]float64, key string) float64 {
		if d.lastAt.IsZero() || dt <= 0 || err != nil {
			return 0
		}
		return (m[key] - prev[key]) / dt
	}
	for _, inf := range []struct {
		label, short, name string
		cached             int
	}{
		{"deployments", "deploy", d.caches.deploys.Name(), d.caches.deploys.Cache().Len()},
		{"replicasets", "rs", d.caches.rss.Name(), d.caches.rss.Cache().Len()},
		{"pods", "pods", d.caches.pods.Name(), d.caches.pods.Cache().Len()},
	} {
		s.informers = append(s.informers, informerRow{label: inf.label, short: inf.short, cached: inf.cached,
			eventsPerSec: rate(cur.events, d.last.events, inf.name)})
	}
	for _, q := range d.queues {
		// The work queue's retries are failed syncs; a sync skipped because the cache had
		// not yet seen the controller's own write (the read-your-writes guard at work, and
		// a rollout makes many) is put back on a backoff of its own, and shown apart.
		s.queues = append(s.queues, queueRow{name: q.name, depth: q.queue.Len(),
			syncsPerSec: rate(cur.syncs, d.last.syncs, q.name),
			retries:     cur.retries[q.name], stale: cur.stale[q.name]})
	}
	if dep, ok := d.caches.deployment(); ok {
		s.deployment, s.replicaSets = dep, d.caches.owned(dep)
	}
	if err == nil {
		d.last, d.lastAt = cur, now
	}
	return s
}
