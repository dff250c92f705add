package harness

import (
	"math"
	"strings"

	"github.com/kinformer/kinformer/bench/internal/chart"
)

// engineColor keeps each engine's colour the same in every chart.
func engineColor(engine string) string {
	switch engine {
	case Kinformer:
		return "#2b7bba"
	case KinformerProtobuf:
		return "#1b4f7a"
	case ClientGo:
		return "#e3872d"
	case ClientGoProtobuf:
		return "#c0504d"
	}
	return "#9a9a9a" // limits and references
}

// charts returns the SVG charts by file name.
func (r *Report) charts() map[string]string {
	// bar writes its value as the tables do, with unit.
	bar := func(label string, v float64, unit, color string) chart.Bar {
		return chart.Bar{Label: label, Value: v, Text: human(v) + unit, Color: color}
	}
	perEngine := func(id string, m Metric, unit string) []chart.Bar {
		var bars []chart.Bar
		for _, e := range []string{Kinformer, KinformerProtobuf, ClientGo, ClientGoProtobuf} {
			if v := r.median(id, e, m); !math.IsNaN(v) {
				bars = append(bars, bar(e, v, unit, engineColor(e)))
			}
		}
		return bars
	}
	out := map[string]string{}

	watch := chart.Group{Label: "pods, full speed", Bars: perEngine("watch-pods", mRate, "/s")}
	for _, mode := range []string{"tokenize", "frame"} {
		if s := r.ceiling(mode); s.N > 0 {
			watch.Bars = append(watch.Bars, bar("limit: read+"+mode, s.Median, "/s", engineColor("")))
		}
	}
	if v := r.median("watch-pods", FloorProtobuf, mRate); !math.IsNaN(v) {
		watch.Bars = append(watch.Bars, bar("limit: "+FloorProtobuf, v, "/s", engineColor("")))
	}
	out["events.svg"] = chart.HBars("Watch events per second to a no-op handler", true, []chart.Group{watch})

	var mem []chart.Group
	for _, id := range []string{"sync-10k-pods", "sync-10k-pods-managedfields", "sync-10k-pods-metadata", "sync-10k-configmaps", "real-sync-10k-pods"} {
		if bars := perEngine(id, mHeapObj, " B"); len(bars) > 0 {
			mem = append(mem, chart.Group{Label: id, Bars: bars})
		}
	}
	out["memory.svg"] = chart.HBars("Heap per cached object after GC", false, mem)

	var lat []chart.Group
	for _, id := range []string{"latency-1k", "latency-5k", "latency-20k"} {
		for _, m := range []Metric{mP50, mP99, mP999} {
			var bars []chart.Bar
			for _, e := range []string{Kinformer, KinformerProtobuf, ClientGo, ClientGoProtobuf, Floor, FloorProtobuf} {
				if v := r.median(id, e, m); !math.IsNaN(v) {
					bars = append(bars, bar(e, v, " µs", engineColor(e)))
				}
			}
			if len(bars) > 0 {
				lat = append(lat, chart.Group{Label: strings.TrimPrefix(id, "latency-") + "/s " + strings.TrimPrefix(m.Name, "latency "), Bars: bars})
			}
		}
	}
	out["latency.svg"] = chart.HBars("Watch → handler latency at a fixed event rate", true, lat)

	var syncs []chart.Group
	seen := map[string]bool{}
	for _, o := range r.Outcomes {
		if o.Scenario.Kind != KindSync || seen[o.Scenario.ID] {
			continue
		}
		seen[o.Scenario.ID] = true
		if bars := perEngine(o.Scenario.ID, mSync, " s"); len(bars) > 0 {
			syncs = append(syncs, chart.Group{Label: o.Scenario.ID, Bars: bars})
		}
	}
	out["sync.svg"] = chart.HBars("Time from process start to synced", false, syncs)
	return out
}
