package harness

import (
	"strings"
	"testing"

	"github.com/kinformer/kinformer/bench/measure"
)

// A figure is worse than before only beyond the margin and the runs' spread; the report
// counts and marks those.
func TestAgainstBefore(t *testing.T) {
	watch := Scenario{ID: "watch-pods", Kind: KindWatch, Engines: []string{Kinformer, Before}}
	sync := Scenario{ID: "sync-10k-pods", Kind: KindSync, Engines: []string{Kinformer, Before}}
	rates := func(vs ...float64) []measure.Result {
		var rs []measure.Result
		for _, v := range vs {
			rs = append(rs, measure.Result{EventsPerSec: v, SyncSeconds: v / 1e5, HeapPerObjectBytes: 2000, PeakRSSBytes: 50e6})
		}
		return rs
	}
	rep := &Report{Plan: Short(), Before: "6125ac0", Outcomes: []*Outcome{
		// Throughput doubled; the sync time (events/1e5 here) doubled too: slower.
		{Scenario: watch, Engine: Kinformer, Results: rates(90000, 95000, 100000)},
		{Scenario: watch, Engine: Before, Results: rates(45000, 50000, 55000)},
		{Scenario: sync, Engine: Kinformer, Results: rates(20000, 21000, 22000)},
		{Scenario: sync, Engine: Before, Results: rates(10000, 11000, 12000)},
	}}
	var worse, better []string
	for _, c := range rep.againstBefore() {
		if c.worse {
			worse = append(worse, c.scenario+" "+c.metric)
		}
		if c.better {
			better = append(better, c.scenario+" "+c.metric)
		}
	}
	if strings.Join(worse, ",") != "sync-10k-pods time to synced" || strings.Join(better, ",") != "watch-pods events/s" {
		t.Errorf("worse %q, better %q", worse, better)
	}
	md := rep.Markdown()
	for _, want := range []string{"`make bench BEFORE=6125ac0`", "## Against the code before (6125ac0)", "**1 of 4 figures are worse, 1 better.**",
		"| `sync-10k-pods` | time to synced | 0.21 (0.2–0.22) | 0.11 (0.1–0.12) | 1.91 | **worse** |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}
