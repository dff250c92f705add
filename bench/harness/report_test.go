package harness

import (
	"encoding/xml"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/bench/measure"
)

func TestSpreadOf(t *testing.T) {
	rs := []measure.Result{{EventsPerSec: 30}, {EventsPerSec: 10}, {EventsPerSec: 20}, {EventsPerSec: 40}}
	got := spreadOf(rs, mRate)
	if diff := cmp.Diff(Spread{Median: 25, Min: 10, Max: 40, N: 4}, got); diff != "" {
		t.Errorf("spread (-want +got):\n%s", diff)
	}
	if got := spreadOf(nil, mRate); got.N != 0 {
		t.Errorf("spread of nothing: %+v", got)
	}
}

// TestReportSaysTargetsAndSpreads renders a report of made-up runs: the targets are
// judged from the medians, each figure carries its spread, and every chart is valid SVG.
func TestReportSaysTargetsAndSpreads(t *testing.T) {
	plan := Short()
	watch := plan.Scenarios[3]
	if watch.ID != "watch-pods" {
		t.Fatalf("plan order changed: %s", watch.ID)
	}
	rep := &Report{Plan: plan, Env: Env{CPU: "test CPU", Cores: 2}, Ceilings: map[string][]CeilingResult{
		"tokenize": {{Mode: "tokenize", EventsPerSec: 40000}, {Mode: "tokenize", EventsPerSec: 42000}, {Mode: "tokenize", EventsPerSec: 41000}},
	}}
	rep.Outcomes = []*Outcome{
		{Scenario: watch, Engine: Kinformer, Results: []measure.Result{{EventsPerSec: 25000}, {EventsPerSec: 24000}, {EventsPerSec: 26000}}},
		{Scenario: watch, Engine: ClientGo, Results: []measure.Result{{EventsPerSec: 6000}, {EventsPerSec: 6200}}, Errors: []string{"timed out"}},
	}
	md := rep.Markdown()
	for _, want := range []string{
		"| events/s | 25k (24k–26k) | 6.1k (6k–6.2k) | 4.1 |", // medians, spreads, ratio
		"| steady watch events/s, kinformer ÷ client-go | ≥ 4× | 4.1× | met |",
		"| kinformer's watch throughput ÷ read+tokenize limit | ≥ 0.5× | 0.61× | met |",
		"| heap per cached pod, kinformer ÷ client-go | ≤ 0.4× | –× | not measured |",
		"client-go failed 1 run(s): timed out",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	for name, svg := range rep.charts() {
		if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
			t.Errorf("%s is not well-formed: %v", name, err)
		}
	}
	if !strings.Contains(rep.charts()["events.svg"], ">25k/s<") {
		t.Errorf("events chart lacks kinformer's median:\n%s", rep.charts()["events.svg"])
	}
}
