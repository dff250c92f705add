package main

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// The engine counts watch events, syncs, retries and stale skips only in the registry it
// serves on /metrics, under names it exports as no Go identifier. So every read checks
// what it finds, and what does not fit is an error the view shows, never a zero: a
// failed Gather, a family of another type, a series without its label, a queue without
// its retries series (the work queue creates it with the queue); and, once the story is
// over, a family that never appeared although the story made the engine count it
// (missing). TestEngineCountersReadTheEngine reads them from the engine's own
// collectors, so a rename fails a test before it reaches the view.

// counter is one family the view reads: its name, its type, and the label whose values
// key the result (the other labels are summed). A histogram is read as its number of
// observations.
type counter struct {
	family string
	kind   dto.MetricType
	by     string
	// expected: the story cannot end without the engine counting this (a watch event,
	// a sync); retries and stale skips may never happen.
	expected bool
}

// read sums the family's series by the label; present is false when the registry holds
// no series of the family (yet).
func (c counter) read(families map[string]*dto.MetricFamily) (values map[string]float64, present bool, err error) {
	mf, ok := families[c.family]
	if !ok {
		return map[string]float64{}, false, nil
	}
	if mf.GetType() != c.kind {
		return nil, true, fmt.Errorf("%s is a %s, not a %s", c.family, mf.GetType(), c.kind)
	}
	values = map[string]float64{}
	for _, m := range mf.GetMetric() {
		key, ok := labelValue(m, c.by)
		if !ok {
			return nil, true, fmt.Errorf("%s has a series without the label %q", c.family, c.by)
		}
		if c.kind == dto.MetricType_HISTOGRAM {
			values[key] += float64(m.GetHistogram().GetSampleCount())
		} else {
			values[key] += m.GetCounter().GetValue()
		}
	}
	return values, true, nil
}

func labelValue(m *dto.Metric, name string) (string, bool) {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue(), true
		}
	}
	return "", false
}

// engineCounts are the engine's counters at one moment.
type engineCounts struct {
	events  map[string]float64 // watch events, by informer name
	syncs   map[string]float64 // finished syncs (not the skipped ones), by controller
	retries map[string]float64 // keys put back after a failed sync, by queue (the controller's name)
	stale   map[string]float64 // syncs skipped because a cache had not seen the controller's own write, by controller
}

// engineCounters reads engineCounts from a registry.
type engineCounters struct {
	gatherer prometheus.Gatherer
	// queues are the work queues of the controllers this process runs, by name; with
	// none (a cluster's own controller manager does the work), only events are read.
	queues                        []string
	events, syncs, retries, stale counter
	seen                          map[string]bool // families read at least once
}

func newEngineCounters(g prometheus.Gatherer, queues []string) *engineCounters {
	return &engineCounters{gatherer: g, queues: queues, seen: map[string]bool{},
		events:  counter{family: "kinformer_reflector_watch_events_total", kind: dto.MetricType_COUNTER, by: "name", expected: true},
		syncs:   counter{family: "kinformer_controller_sync_duration_seconds", kind: dto.MetricType_HISTOGRAM, by: "controller", expected: true},
		retries: counter{family: "workqueue_retries_total", kind: dto.MetricType_COUNTER, by: "name"},
		stale:   counter{family: "kinformer_controller_stale_syncs_total", kind: dto.MetricType_COUNTER, by: "controller"},
	}
}

// reading is a counter read, and where its values go.
type reading struct {
	counter
	into *map[string]float64
}

// readings are the counters read, into c.
func (r *engineCounters) readings(c *engineCounts) []reading {
	rs := []reading{{r.events, &c.events}}
	if len(r.queues) > 0 {
		rs = append(rs, reading{r.syncs, &c.syncs}, reading{r.retries, &c.retries}, reading{r.stale, &c.stale})
	}
	return rs
}

func (r *engineCounters) read() (engineCounts, error) {
	families, err := r.gatherer.Gather()
	if err != nil {
		return engineCounts{}, fmt.Errorf("reading the metrics: %w", err)
	}
	byName := make(map[string]*dto.MetricFamily, len(families))
	for _, mf := range families {
		byName[mf.GetName()] = mf
	}
	var c engineCounts
	var errs []error
	for _, k := range r.readings(&c) {
		values, present, err := k.read(byName)
		errs = append(errs, err)
		if present {
			r.seen[k.family] = true
		}
		*k.into = values
	}
	if err := errors.Join(errs...); err != nil {
		return engineCounts{}, err
	}
	for _, q := range r.queues {
		if _, ok := c.retries[q]; !ok {
			return engineCounts{}, fmt.Errorf("%s has no series for the %s queue", r.retries.family, q)
		}
	}
	return c, nil
}

// missing names the families the story must have made appear that no read has found:
// renamed, or no longer counted.
func (r *engineCounters) missing() []string {
	var out []string
	for _, k := range r.readings(&engineCounts{}) {
		if k.expected && !r.seen[k.family] {
			out = append(out, k.family)
		}
	}
	return out
}
