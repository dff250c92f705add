package harness

import (
	"encoding/xml"
	"fmt"
	"strconv"
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
		"| | kinformer | client-go | client-go-protobuf | kinformer ÷ client-go | kinformer ÷ client-go-protobuf |",
		"| events/s | 25k (24k–26k) | 6.1k (6k–6.2k) | – | 4.1 | – |", // medians, spreads, ratios
		"| steady watch events/s, kinformer ÷ client-go (JSON) | ≥ 10× | 4.1× | missed: 41% of the target |",
		"| kinformer steady watch events/s | ≥ 60k | 25k | missed: 42% of the target |",
		"| kinformer p99 watch→handler at 20k events/s, evenly spaced, median of the runs | ≤ 5k µs | – µs | not measured |",
		"| kinformer's watch throughput ÷ read+tokenize limit | ≥ 0.5× | 0.61× | met |",
		"| heap per cached pod, kinformer ÷ client-go | ≤ 0.15× | –× | not measured |",
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

// Each target that compares kinformer with client-go holds it against client-go's
// better configuration on the target's figure, JSON or protobuf, and says which.
func TestTargetsAgainstClientGosBetterConfiguration(t *testing.T) {
	plan := Short()
	byID := map[string]Scenario{}
	for _, sc := range plan.Scenarios {
		byID[sc.ID] = sc
	}
	for _, id := range []string{"sync-10k-pods", "watch-pods", "latency-1k", "latency-5k", "latency-20k"} {
		if !byID[id].servesProtobuf() {
			t.Errorf("%s does not run client-go-protobuf against a protobuf server", id)
		}
	}
	if byID["sync-10k-pods-streaming"].servesProtobuf() {
		t.Errorf("sync-10k-pods-streaming prepares protobuf objects no engine reads")
	}
	rep := &Report{Plan: plan}
	add := func(id, engine string, res measure.Result) {
		rep.Outcomes = append(rep.Outcomes, &Outcome{Scenario: byID[id], Engine: engine, Results: []measure.Result{res}})
	}
	add("watch-pods", Kinformer, measure.Result{EventsPerSec: 25000})
	add("watch-pods", ClientGo, measure.Result{EventsPerSec: 6000})
	add("watch-pods", ClientGoProtobuf, measure.Result{EventsPerSec: 10000})
	add("sync-10k-pods", Kinformer, measure.Result{SyncSeconds: 0.5, HeapPerObjectBytes: 1000, PeakRSSBytes: 50e6})
	add("sync-10k-pods", ClientGo, measure.Result{SyncSeconds: 2, HeapPerObjectBytes: 3000, PeakRSSBytes: 120e6})
	add("sync-10k-pods", ClientGoProtobuf, measure.Result{SyncSeconds: 1, HeapPerObjectBytes: 3500, PeakRSSBytes: 100e6})
	md := rep.Markdown()
	for _, want := range []string{
		"| steady watch events/s, kinformer ÷ client-go (protobuf, the better of JSON and protobuf here) | ≥ 10× | 2.5× | missed: 25% of the target |",
		"| 100k-pod sync, the time of client-go (protobuf, the better of JSON and protobuf here) ÷ kinformer's, measured on 10k pods",
		"| ≥ 6× | 2× | missed: 33% of the target |",
		"| heap per cached pod, kinformer ÷ client-go (JSON, the better of JSON and protobuf here) | ≤ 0.15× | 0.33× | missed: 2.22× the target |",
		"| peak RSS of a 100k sync, kinformer ÷ client-go (protobuf, the better of JSON and protobuf here), measured on 10k pods (100k runs in make bench-full) | ≤ 0.5× | 0.5× | met |",
		"| events/s | 25k (25k–25k) | 6k (6k–6k) | 10k (10k–10k) | 4.17 | 2.5 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	for _, want := range []string{">10k/s<", "client-go-protobuf"} {
		if !strings.Contains(rep.charts()["events.svg"], want) {
			t.Errorf("events chart lacks %q", want)
		}
	}
}

// The hand-written analysis is quoted when a target is missed, and only then; the floor
// has a column of its own and no allocation figures.
func TestReportQuotesTheAnalysisOfMisses(t *testing.T) {
	plan := Short()
	var lat Scenario
	for _, sc := range plan.Scenarios {
		if sc.ID == "latency-5k" {
			lat = sc
		}
	}
	for _, p99 := range []float64{900, 1200} {
		rep := &Report{Plan: plan, Analysis: "GC stalls the pipeline.\n"}
		rep.Outcomes = []*Outcome{
			{Scenario: lat, Engine: Kinformer, Results: []measure.Result{{LatencyP99US: p99, BytesAllocPerEvent: 3000}}},
			{Scenario: lat, Engine: Floor, Results: []measure.Result{{Engine: Floor, LatencyP99US: 140}}},
		}
		md := rep.Markdown()
		quoted := strings.Contains(md, "GC stalls the pipeline.")
		if missed := p99 > 1000; quoted != missed {
			t.Errorf("p99 %v µs: analysis quoted = %v", p99, quoted)
		}
		for _, want := range []string{
			"| | kinformer | client-go | client-go-protobuf | read+frame | kinformer ÷ client-go | kinformer ÷ client-go-protobuf |",
			"| bytes allocated per event (B) | 3k (3k–3k) | – | – | – | – | – |",
			"(the read+frame floor's p99 here: 140 µs)",
		} {
			if !strings.Contains(md, want) {
				t.Errorf("report lacks %q:\n%s", want, md)
			}
		}
	}
}

// The sharded scenarios share one table, each row held against the one shard's; a run
// whose cache is not exactly the shard, or that the other side filtered, fails.
func TestShardedTable(t *testing.T) {
	plan := Sharded()
	if got := shardObjects(1); got != shardedPods {
		t.Fatalf("one shard holds %d pods", got)
	}
	if two, four := shardObjects(2), shardObjects(4); !(0 < four && four < two && two < shardedPods) {
		t.Fatalf("shard 0 holds %d pods of 2 shards, %d of 4", two, four)
	}
	rep := &Report{Plan: plan}
	heaps := map[int]uint64{1: 200e6, 2: 100e6, 4: 50e6}
	for _, sc := range plan.Scenarios {
		o := &Outcome{Scenario: sc, Engine: Kinformer}
		for _, d := range []float64{0.9, 1, 1.2} {
			o.Results = append(o.Results, measure.Result{Objects: sc.ShardObjects, SyncSeconds: d * float64(sc.ShardObjects) / 1e5,
				HeapAfterGCBytes: uint64(d * float64(heaps[sc.Shards])), PeakRSSBytes: 300e6})
		}
		if sc.ClientFilters {
			o.Errors = []string{"timed out"}
		}
		rep.Outcomes = append(rep.Outcomes, o)
	}
	md := rep.Markdown()
	for _, want := range []string{
		"### Initial sync of 100k pods in 1,000 namespaces, split over 1, 2 and 4 shards",
		"| 1 | 100,000 | 1 (0.9–1.2) | 200 (180–240) | 1 | 1 | 300 (300–300) |",
		fmt.Sprintf("| 2 | %s | ", thousands(shardObjects(2))),
		"| 200 (180–240) | 1 | 1 |",
		"| 50 (45–60) | 0.25 | ",
		"| 4, the server ignoring the selector (the informer filters) | ",
		"- `sync-100k-pods-sharded-4-client` · server `-profile pods -objects 100000 -namespace bench -watch-events -1 -rate 0 -namespaces 1000 -ignore-shard-selector` · runner `-scenario sync -resource pods -objects " + strconv.Itoa(shardObjects(4)) + " -events 0 -shards 4 -shard 0`",
		"`sync-100k-pods-sharded-4-client`: kinformer failed 1 run(s): timed out",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "## Targets") || strings.Count(md, "### ") != 1 {
		t.Errorf("the sharded plan's report has targets or more than one section:\n%s", md)
	}

	sc := plan.Scenarios[2]
	good := measure.Result{Objects: sc.ShardObjects, ShardFiltering: "server"}
	if err := checkShard(sc, good); err != nil {
		t.Errorf("checkShard(%+v): %v", good, err)
	}
	for _, bad := range []measure.Result{{Objects: sc.ShardObjects + 1, ShardFiltering: "server"}, {Objects: sc.ShardObjects, ShardFiltering: "client"}} {
		if err := checkShard(sc, bad); err == nil {
			t.Errorf("checkShard(%+v): no error", bad)
		}
	}
	if err := checkShard(plan.Scenarios[3], measure.Result{Objects: sc.ShardObjects, ShardFiltering: "client"}); err != nil {
		t.Errorf("the client-filtering scenario: %v", err)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 45900: "45,900", 100000: "100,000", 1234567: "1,234,567", -1000: "-1,000"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// The full plan's report shows kinformer's million-pod syncs side by side, the uniform
// corpus's (the targets') and the realistic one's, and the realistic 1M scenario's table
// right after the uniform one's.
func TestReportMillionRows(t *testing.T) {
	plan := Full()
	byID := map[string]Scenario{}
	for _, sc := range plan.Scenarios {
		byID[sc.ID] = sc
	}
	rep := &Report{Plan: plan, Outcomes: []*Outcome{
		{Scenario: byID["sync-1m-pods"], Engine: Kinformer, Results: []measure.Result{{SyncSeconds: 14, PeakRSSBytes: 1.4e9, HeapPerObjectBytes: 1290}}},
		{Scenario: byID["sync-1m-pods"], Engine: ClientGo, Results: []measure.Result{{SyncSeconds: 20, PeakRSSBytes: 12e9, HeapPerObjectBytes: 2220}}},
		{Scenario: byID["sync-1m-realistic-pods"], Engine: Kinformer, Results: []measure.Result{{SyncSeconds: 61, PeakRSSBytes: 3.1e9, HeapPerObjectBytes: 2150}}},
	}}
	md := rep.Markdown()
	for _, want := range []string{
		"| kinformer time to synced, 1M pods, no memory limit | ≤ 15 s | 14 s | met |",
		"| 1M pods | time to synced (s) | peak RSS (MB) | heap per cached pod after GC (B) |",
		"| uniform (`sync-1m-pods`: 4.2 KB of JSON a pod, 1,000 namespaces; the targets above) | 14 | 1.4k | 1.29k |",
		"| realistic (`sync-1m-realistic-pods`: 13.7 KB of JSON a pod, 60 namespaces; reported, no target) | 61 | 3.1k | 2.15k |",
		"`sync-1m-realistic-pods` · server `-profile realistic-pods -objects 1000000 -watch-events -1 -rate 0`",
		"| | kinformer |\n| --- | --- |\n| time to synced (s) | 61 (61–61) |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if u, r := strings.Index(md, "`sync-1m-pods` · server"), strings.Index(md, "`sync-1m-realistic-pods` · server"); u < 0 || r < u {
		t.Errorf("the realistic 1M table is not after the uniform one (at %d and %d)", u, r)
	}
	if md := (&Report{Plan: plan}).Markdown(); strings.Contains(md, "| 1M pods |") {
		t.Errorf("a report without the 1M syncs has their table:\n%s", md)
	}
}

// A report written and read again makes the same latest.md: a rewritten analysis can be
// quoted without running the plan again.
func TestReportReadBackRendersTheSame(t *testing.T) {
	plan := Short()
	rep := &Report{Plan: plan, Before: "abc1234", Analysis: "Why.\n"}
	for i, sc := range plan.Scenarios {
		rep.Outcomes = append(rep.Outcomes, &Outcome{Scenario: sc, Engine: Kinformer,
			Results: []measure.Result{{EventsPerSec: float64(1000 + i), HeapPerObjectBytes: 1200, LatencyP99US: 900}}})
	}
	dir := t.TempDir()
	if err := rep.Write(dir); err != nil {
		t.Fatal(err)
	}
	back, err := ReadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	if back.Analysis != "" {
		t.Errorf("the saved results hold the analysis %q; it is read from its own file", back.Analysis)
	}
	back.Analysis = rep.Analysis
	if d := cmp.Diff(rep.Markdown(), back.Markdown()); d != "" {
		t.Errorf("latest.md made again differs (-written +read back):\n%s", d)
	}
}
