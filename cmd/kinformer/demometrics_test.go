package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/controllers"
	"github.com/kinformer/kinformer/controllers/consistency"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/internal/testrig/simtest"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/workqueue"
)

func TestCounterRead(t *testing.T) {
	family := func(name string, kind dto.MetricType, metrics ...*dto.Metric) map[string]*dto.MetricFamily {
		return map[string]*dto.MetricFamily{name: {Name: &name, Type: &kind, Metric: metrics}}
	}
	series := func(value float64, labels ...string) *dto.Metric {
		m := &dto.Metric{Counter: &dto.Counter{Value: &value}}
		for i := 0; i < len(labels); i += 2 {
			m.Label = append(m.Label, &dto.LabelPair{Name: &labels[i], Value: &labels[i+1]})
		}
		return m
	}
	histogram := func(count uint64, label, value string) *dto.Metric {
		return &dto.Metric{Histogram: &dto.Histogram{SampleCount: &count}, Label: []*dto.LabelPair{{Name: &label, Value: &value}}}
	}
	events := counter{family: "events_total", kind: dto.MetricType_COUNTER, by: "name"}
	syncs := counter{family: "sync_seconds", kind: dto.MetricType_HISTOGRAM, by: "controller"}
	tests := []struct {
		name     string
		c        counter
		families map[string]*dto.MetricFamily
		want     map[string]float64
		present  bool
		err      string
	}{
		{"summed over the other labels", events, family("events_total", dto.MetricType_COUNTER,
			series(3, "name", "pods", "type", "ADDED"), series(4, "name", "pods", "type", "MODIFIED"), series(1, "name", "rs", "type", "ADDED")),
			map[string]float64{"pods": 7, "rs": 1}, true, ""},
		{"a histogram's observations", syncs, family("sync_seconds", dto.MetricType_HISTOGRAM, histogram(5, "controller", "replicaset")),
			map[string]float64{"replicaset": 5}, true, ""},
		{"no series yet", events, family("other_total", dto.MetricType_COUNTER), map[string]float64{}, false, ""},
		{"another type", events, family("events_total", dto.MetricType_GAUGE, series(1, "name", "pods")), nil, true,
			"events_total is a GAUGE, not a COUNTER"},
		{"a series without the label", events, family("events_total", dto.MetricType_COUNTER, series(1, "informer", "pods")), nil, true,
			`events_total has a series without the label "name"`},
	}
	for _, tt := range tests {
		got, present, err := tt.c.read(tt.families)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil || present != tt.present {
			t.Errorf("%s: present %v, error %v; want present %v", tt.name, present, err, tt.present)
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, d)
		}
	}
}

// The view reads the engine's counters under the names and labels the engine's own
// collectors give them: each is driven through the engine's API, then read back.
func TestEngineCountersReadTheEngine(t *testing.T) {
	_, c := simtest.Start(t, apisim.Options{BookmarkInterval: time.Hour})
	reg := prometheus.NewRegistry()
	syncMetrics, err := controllers.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	queueMetrics, err := workqueue.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	infMetrics, err := informer.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// A controller's workers sync one key, fail one, and skip one on a stale cache. The
	// queue's clock stands still, so neither of the two is retried before the end.
	q := workqueue.New(workqueue.Options[string]{Name: "ctl", Metrics: queueMetrics, Clock: clock.NewFake(time.Now())})
	defer q.ShutDown()
	pool := &controllers.WorkerPool{Name: "ctl", Queue: q, Metrics: syncMetrics, Sync: func(_ context.Context, key string) error {
		switch key {
		case "fails":
			return errors.New("conflict")
		case "stale":
			return &consistency.StaleError{Owner: key, Resource: "pods", Wrote: "2", Read: "1"}
		}
		return nil
	}}
	done := make(chan struct{})
	go func() { defer close(done); pool.Run(ctx, ctx, 1) }()
	defer func() { cancel(); <-done }()
	for _, key := range []string{"syncs", "fails", "stale"} {
		q.Add(key)
	}

	// An informer receives one watch event.
	f := informer.NewFactory(c, informer.FactoryOptions{Metrics: infMetrics})
	defer f.Shutdown()
	pods, err := informer.For[*object.Pod](ctx, f, "pods", informer.Selectors{Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx)
	if err := informer.WaitForSync(ctx, pods); err != nil {
		t.Fatal(err)
	}
	info, err := c.Discover(ctx, "pods")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := listwatch.For[*object.Pod](c, info, "default").Create(ctx, &object.Pod{ObjectMeta: object.ObjectMeta{Name: "p"}}); err != nil {
		t.Fatal(err)
	}

	r := newEngineCounters(reg, []string{"ctl"})
	want := engineCounts{events: map[string]float64{pods.Name(): 1}, syncs: map[string]float64{"ctl": 2},
		retries: map[string]float64{"ctl": 1}, stale: map[string]float64{"ctl": 1}}
	var got engineCounts
	testwait.Eventually(t, 10*time.Second, func() bool {
		got, err = r.read()
		return err == nil && cmp.Equal(want, got, cmp.AllowUnexported(engineCounts{}))
	}, "read %v (error %v), want %v", testwait.Lazy(func() any { return got }), testwait.Lazy(func() any { return err }), want)
	if m := r.missing(); len(m) != 0 {
		t.Errorf("missing after every counter counted: %v", m)
	}
}

// A queue of the controllers without its retries series means the view reads the wrong
// family: an error, not a zero. So is a family the story must have made appear and that
// never did.
func TestEngineCountersFailLoudly(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := newEngineCounters(reg, []string{"ctl"})
	if _, err := r.read(); err == nil || !strings.Contains(err.Error(), "no series for the ctl queue") {
		t.Errorf("read without the queue's retries: %v", err)
	}
	want := []string{r.events.family, r.syncs.family}
	if d := cmp.Diff(want, r.missing()); d != "" {
		t.Errorf("missing (-want +got):\n%s", d)
	}
	// Without controllers in this process, only the events are read.
	if d := cmp.Diff([]string{r.events.family}, newEngineCounters(reg, nil).missing()); d != "" {
		t.Errorf("missing without controllers (-want +got):\n%s", d)
	}
}

// The rates are over the time between two samples, on the clock the data is given; the
// stale skips are taken out of the retries.
func TestEngineDataRates(t *testing.T) {
	_, c := simtest.Start(t, apisim.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := informer.NewFactory(c, informer.FactoryOptions{})
	defer f.Shutdown()
	caches, err := newDemoCaches(ctx, f, "demo")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	q := workqueue.New(workqueue.Options[string]{Name: "ctl"})
	defer q.ShutDown()
	counters := newEngineCounters(reg, []string{"ctl"})
	events := prometheus.NewCounterVec(prometheus.CounterOpts{Name: counters.events.family}, []string{"name", "type"})
	syncs := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: counters.syncs.family}, []string{"controller"})
	retries := prometheus.NewCounterVec(prometheus.CounterOpts{Name: counters.retries.family}, []string{"name"})
	stale := prometheus.NewCounterVec(prometheus.CounterOpts{Name: counters.stale.family}, []string{"controller", "resource"})
	reg.MustRegister(events, syncs, retries, stale)
	retries.WithLabelValues("ctl") // as the work queue does when it is made
	clk := clock.NewFake(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	d := &engineData{caches: caches, queues: []namedQueue{{"ctl", q}}, counters: counters, clock: clk}

	first := d.sample()
	events.WithLabelValues(caches.pods.Name(), "ADDED").Add(10)
	for range 4 {
		syncs.WithLabelValues("ctl").Observe(0.01)
	}
	retries.WithLabelValues("ctl").Add(3)
	stale.WithLabelValues("ctl", "pods").Add(1)
	stale.WithLabelValues("ctl", "replicasets").Add(1)
	q.Add("a")
	q.Add("b")
	clk.Step(2 * time.Second)
	second := d.sample()

	for _, tt := range []struct {
		name string
		s    snapshot
		want snapshot
	}{
		{"first: no rates yet", first, snapshot{
			informers: []informerRow{{"deployments", "deploy", 0, 0}, {"replicasets", "rs", 0, 0}, {"pods", "pods", 0, 0}},
			queues:    []queueRow{{name: "ctl"}}}},
		{"second: over the two seconds between", second, snapshot{
			informers: []informerRow{{"deployments", "deploy", 0, 0}, {"replicasets", "rs", 0, 0}, {"pods", "pods", 5, 0}},
			queues:    []queueRow{{name: "ctl", depth: 2, syncsPerSec: 2, retries: 3, stale: 2}}}},
	} {
		if d := cmp.Diff(tt.want, tt.s, cmp.AllowUnexported(snapshot{}, informerRow{}, queueRow{})); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, d)
		}
	}
}
