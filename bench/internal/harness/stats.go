package harness

import (
	"math"
	"slices"

	"github.com/kinformer/kinformer/bench/measure"
)

// Metric is one figure a scenario reports.
type Metric struct {
	Name, Unit string
	// Higher is true when more is better (events/s).
	Higher bool
	Get    func(measure.Result) float64
}

// Spread is the median of a figure over runs, with its minimum and maximum.
type Spread struct {
	Median, Min, Max float64
	N                int
}

// spreadOf summarises m over results; N is 0 when there were none.
func spreadOf(results []measure.Result, m Metric) Spread {
	var vs []float64
	for _, r := range results {
		if v := m.Get(r); !math.IsNaN(v) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return Spread{}
	}
	slices.Sort(vs)
	med := vs[len(vs)/2]
	if len(vs)%2 == 0 {
		med = (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
	}
	return Spread{Median: med, Min: vs[0], Max: vs[len(vs)-1], N: len(vs)}
}

// The figures; engineOnly marks those a floor has not: its time to synced is its list
// read's, but it caches nothing.
var (
	mSync    = Metric{"time to synced", "s", false, func(r measure.Result) float64 { return r.SyncSeconds }}
	mHeapObj = Metric{"heap per cached object after GC", "B", false, engineOnly(func(r measure.Result) float64 { return r.HeapPerObjectBytes })}
	mRSS     = Metric{"peak RSS", "MB", false, engineOnly(func(r measure.Result) float64 { return float64(r.PeakRSSBytes) / 1e6 })}
	mRate    = Metric{"events/s", "", true, func(r measure.Result) float64 { return r.EventsPerSec }}
	mCPU     = Metric{"CPU seconds per 1k events", "s", false, func(r measure.Result) float64 { return r.CPUSecondsPerKEvent }}
	mAllocs  = Metric{"allocations per event", "", false, engineOnly(func(r measure.Result) float64 { return r.AllocsPerEvent })}
	mAllocB  = Metric{"bytes allocated per event", "B", false, engineOnly(func(r measure.Result) float64 { return r.BytesAllocPerEvent })}
	mP50     = Metric{"latency p50", "µs", false, func(r measure.Result) float64 { return r.LatencyP50US }}
	mP99     = Metric{"latency p99", "µs", false, func(r measure.Result) float64 { return r.LatencyP99US }}
	mP999    = Metric{"latency p99.9", "µs", false, func(r measure.Result) float64 { return r.LatencyP999US }}
	mObjects = Metric{"objects cached", "", true, func(r measure.Result) float64 { return float64(r.Objects) }}
	mHeap    = Metric{"heap per instance after GC", "MB", false, func(r measure.Result) float64 { return float64(r.HeapAfterGCBytes) / 1e6 }}
	mGC      = Metric{"GC cycles in the window", "", false, engineOnly(func(r measure.Result) float64 { return float64(r.GCCycles) })}
	// mAPIServerCPU is the real apiserver's CPU seconds while a runner ran (set by the
	// harness: Runner.apiserverCPU), in the real-apiserver scenarios (metricsFor).
	mAPIServerCPU = Metric{"apiserver CPU per sync", "s", false, func(r measure.Result) float64 {
		if r.APIServerCPUSeconds == 0 {
			return math.NaN()
		}
		return r.APIServerCPUSeconds
	}}
	metricsOf = map[string][]Metric{
		KindSync:    {mSync, mHeapObj, mRSS},
		KindWatch:   {mRate, mCPU, mAllocs, mAllocB, mGC},
		KindLatency: {mP50, mP99, mP999, mRate, mAllocB, mGC},
		KindFanout:  {mRate, mP99, mAllocs},
		KindSharded: {mObjects, mSync, mHeap, mRSS},
	}
)

// engineOnly is get for the engines' results, and no figure (NaN) for the floors',
// whose reader caches nothing and measures its rate, CPU and latency only.
func engineOnly(get func(measure.Result) float64) func(measure.Result) float64 {
	return func(r measure.Result) float64 {
		if isFloor(r.Engine) {
			return math.NaN()
		}
		return get(r)
	}
}

// metricsFor is sc's figures: its kind's, and against the real apiserver its CPU per run.
func metricsFor(sc Scenario) []Metric {
	ms := metricsOf[sc.Kind]
	if sc.againstRealAPIServer() {
		ms = append(slices.Clone(ms), mAPIServerCPU)
	}
	return ms
}

// againstRealAPIServer reports whether sc runs against the real kube-apiserver.
func (sc Scenario) againstRealAPIServer() bool { return sc.Server == nil && sc.RealPods > 0 }
