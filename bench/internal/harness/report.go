package harness

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kinformer/kinformer/bench/measure"
)

// outcome returns the engine's outcome of scenario id, or nil.
func (r *Report) outcome(id, engine string) *Outcome {
	for _, o := range r.Outcomes {
		if o.Scenario.ID == id && o.Engine == engine {
			return o
		}
	}
	return nil
}

// median is the median of m for engine on scenario id (NaN when not measured).
func (r *Report) median(id, engine string, m Metric) float64 {
	o := r.outcome(id, engine)
	if o == nil {
		return math.NaN()
	}
	s := spreadOf(o.Results, m)
	if s.N == 0 {
		return math.NaN()
	}
	return s.Median
}

func (r *Report) ceiling(mode string) Spread {
	var rs []float64
	for _, c := range r.Ceilings[mode] {
		rs = append(rs, c.EventsPerSec)
	}
	if len(rs) == 0 {
		return Spread{}
	}
	slices.Sort(rs)
	return Spread{Median: rs[len(rs)/2], Min: rs[0], Max: rs[len(rs)-1], N: len(rs)}
}

func (r *Report) ceilingMBps(mode string) float64 {
	var rs []float64
	for _, c := range r.Ceilings[mode] {
		rs = append(rs, c.MBPerSec)
	}
	if len(rs) == 0 {
		return math.NaN()
	}
	slices.Sort(rs)
	return rs[len(rs)/2]
}

// target is one of the targets, as measured.
type target struct {
	What     string
	Want     float64
	AtLeast  bool // the measured value must be at least Want (else at most)
	Got      float64
	Unit     string
	Proxy    string // set when a smaller scenario stands in for the named one
	Scenario string
	// Floor, for the protobuf targets, says how far the figure and the target are from
	// the floor of the same protobuf bytes (FloorProtobuf).
	Floor string
}

func (t target) verdict() string {
	switch {
	case math.IsNaN(t.Got):
		return "not measured"
	case t.AtLeast && t.Got >= t.Want, !t.AtLeast && t.Got <= t.Want:
		return "met"
	case t.AtLeast:
		return fmt.Sprintf("missed: %.0f%% of the target", 100*t.Got/t.Want)
	}
	return fmt.Sprintf("missed: %.2f× the target", t.Got/t.Want)
}

// clientGoEngines are client-go's configurations, the default (JSON) first.
var clientGoEngines = []string{ClientGo, ClientGoProtobuf}

// ratioColumns are the ratio columns of a scenario's table, each the first engine's
// median over the second's where both ran: kinformer over each of client-go's
// configurations, kinformer-protobuf over client-go-protobuf, and kinformer-protobuf
// over the floor of the same protobuf bytes.
var ratioColumns = [][2]string{{Kinformer, ClientGo}, {Kinformer, ClientGoProtobuf}, {KinformerProtobuf, ClientGoProtobuf}, {KinformerProtobuf, FloorProtobuf}}

// bestClientGo is client-go's better median of m on scenario id, JSON or protobuf, and
// which it is: "" and NaN when neither was measured.
func (r *Report) bestClientGo(id string, m Metric) (engine string, v float64) {
	v = math.NaN()
	for _, e := range clientGoEngines {
		x := r.median(id, e, m)
		if math.IsNaN(x) {
			continue
		}
		if engine == "" || m.Higher && x > v || !m.Higher && x < v {
			engine, v = e, x
		}
	}
	return engine, v
}

// clientGoNote says which of client-go's configurations a target holds kinformer
// against: "client-go (protobuf, the better of JSON and protobuf here)", or the one
// measured.
func (r *Report) clientGoNote(id, engine string) string {
	measured := 0
	for _, e := range clientGoEngines {
		if r.outcome(id, e) != nil && len(r.outcome(id, e).Results) > 0 {
			measured++
		}
	}
	cfg := map[string]string{ClientGo: "JSON", ClientGoProtobuf: "protobuf"}[engine]
	switch {
	case cfg == "":
		return "client-go"
	case measured > 1:
		return "client-go (" + cfg + ", the better of JSON and protobuf here)"
	}
	return "client-go (" + cfg + ")"
}

func (r *Report) targets() []target {
	// against is kinformer's median of m on scenario id held against client-go's better
	// configuration's, as a ratio (client-go's ÷ kinformer's with invert), with the text
	// naming that configuration.
	against := func(id string, m Metric, invert bool, what string) target {
		e, c := r.bestClientGo(id, m)
		k := r.median(id, Kinformer, m)
		got := k / c
		if invert {
			got = c / k
		}
		return target{What: fmt.Sprintf(what, r.clientGoNote(id, e)), Got: got, Unit: "×", Scenario: id}
	}
	syncID, proxy := "sync-100k-pods", ""
	if r.outcome(syncID, Kinformer) == nil {
		syncID, proxy = "sync-10k-pods", "10k pods (100k runs in make bench-full)"
	}
	watch := against("watch-pods", mRate, false, "steady watch events/s, kinformer ÷ %s")
	watch.Want, watch.AtLeast = 10, true
	syncT := against(syncID, mSync, true, "100k-pod sync, the time of %s ÷ kinformer's")
	syncT.Want, syncT.AtLeast, syncT.Proxy = 6, true, proxy
	heap := against("sync-10k-pods", mHeapObj, false, "heap per cached pod, kinformer ÷ %s")
	heap.Want = 0.15
	rss := against(syncID, mRSS, false, "peak RSS of a 100k sync, kinformer ÷ %s")
	rss.Want, rss.Proxy = 0.5, proxy
	p99 := func(id string, want float64) target {
		t := target{What: fmt.Sprintf("kinformer p99 watch→handler at %s events/s, evenly spaced, median of the runs", strings.TrimPrefix(id, "latency-")),
			Want: want, Got: r.median(id, Kinformer, mP99), Unit: " µs", Scenario: id}
		if floor := r.median(id, Floor, mP99); !math.IsNaN(floor) {
			t.What += fmt.Sprintf(" (the read+frame floor's p99 here: %s µs)", fmtNum(floor))
		}
		return t
	}
	ts := []target{
		watch,
		{What: "kinformer steady watch events/s", Want: 60000, AtLeast: true, Got: r.median("watch-pods", Kinformer, mRate), Scenario: "watch-pods"},
		syncT,
		heap,
	}
	if r.outcome("sync-10k-realistic-pods", Kinformer) != nil {
		real := against("sync-10k-realistic-pods", mHeapObj, false, "heap per cached pod of the realistic corpus, kinformer ÷ %s")
		real.Want = 0.1
		ts = append(ts, real)
	}
	ts = append(ts,
		rss,
		p99("latency-5k", 1000),
		p99("latency-20k", 5000),
		target{What: "kinformer heap per cached object, metadata only", Want: 1000, Got: r.median("sync-10k-pods-metadata", Kinformer, mHeapObj), Unit: " B", Scenario: "sync-10k-pods-metadata"},
	)
	if r.Plan.Mode == "full" {
		ts = append(ts,
			target{What: "kinformer time to synced, 1M pods, no memory limit", Want: 15, Got: r.median("sync-1m-pods", Kinformer, mSync), Unit: " s", Scenario: "sync-1m-pods"},
			target{What: "kinformer peak RSS, 1M pods, no memory limit", Want: 1500, Got: r.median("sync-1m-pods", Kinformer, mRSS), Unit: " MB", Scenario: "sync-1m-pods"})
	}
	tok := r.ceiling("tokenize")
	frac := math.NaN()
	if tok.N > 0 {
		frac = r.median("watch-pods", Kinformer, mRate) / tok.Median
	}
	ts = append(ts, target{What: "kinformer's watch throughput ÷ read+tokenize limit", Want: 0.5, AtLeast: true, Got: frac, Unit: "×", Scenario: "watch-pods"})
	return append(ts, r.protobufTargets()...)
}

// protobufTargets are the targets of kinformer reading protobuf, against client-go
// reading protobuf on this machine, each with its distance from the floor of the same
// protobuf bytes (read+frame-protobuf, where it ran).
func (r *Report) protobufTargets() []target {
	k := func(id string, m Metric) float64 { return r.median(id, KinformerProtobuf, m) }
	c := func(id string, m Metric) float64 { return r.median(id, ClientGoProtobuf, m) }
	f := func(id string, m Metric) float64 { return r.median(id, FloorProtobuf, m) }
	const noFloor = "read+frame-protobuf was not measured here"
	syncID, proxy := "sync-100k-pods", ""
	if r.outcome(syncID, KinformerProtobuf) == nil {
		syncID, proxy = "sync-10k-pods", "10k pods (100k runs in make bench-full)"
	}

	const watch = "watch-pods"
	events := target{What: "steady watch events/s, kinformer-protobuf ÷ client-go-protobuf", Want: 3, AtLeast: true,
		Got: k(watch, mRate) / c(watch, mRate), Unit: "×", Scenario: watch, Floor: noFloor}
	if fl := f(watch, mRate); !math.IsNaN(fl) {
		want := events.Want * c(watch, mRate)
		events.Floor = fmt.Sprintf("read+frame-protobuf reads the same watch at %s events/s; kinformer-protobuf's %s events/s is %s of that (client-go-protobuf's %s: %s); the target, %s × client-go-protobuf's = %s events/s, is %s of it",
			fmtNum(fl), fmtNum(k(watch, mRate)), pct(k(watch, mRate)/fl), fmtNum(c(watch, mRate)), pct(c(watch, mRate)/fl), fmtNum(events.Want), fmtNum(want), pct(want/fl))
		if want > fl {
			events.Floor += ": above the floor, out of reach of any client here"
		}
	}

	syncT := target{What: "100k-pod sync, the time of client-go-protobuf ÷ kinformer-protobuf's", Want: 3, AtLeast: true,
		Got: c(syncID, mSync) / k(syncID, mSync), Unit: "×", Proxy: proxy, Scenario: syncID, Floor: noFloor}
	if fl := f(syncID, mSync); !math.IsNaN(fl) {
		want := c(syncID, mSync) / syncT.Want
		syncT.Floor = fmt.Sprintf("read+frame-protobuf reads and frames every page of the same list in %s s; kinformer-protobuf's sync, %s s, is %s× that (client-go-protobuf's %s s: %s×); the target, client-go-protobuf's time ÷ %s = %s s, is %s× it (the runners' times count from their process's start, the floor's from its first request)",
			fmtNum(fl), fmtNum(k(syncID, mSync)), fmtNum(k(syncID, mSync)/fl), fmtNum(c(syncID, mSync)), fmtNum(c(syncID, mSync)/fl), fmtNum(syncT.Want), fmtNum(want), fmtNum(want/fl))
		if want < fl {
			syncT.Floor += ": below the floor, out of reach of any client here"
		}
	}

	heap := target{What: "heap per cached pod, kinformer-protobuf ÷ client-go-protobuf", Want: 0.25,
		Got: k("sync-10k-pods", mHeapObj) / c("sync-10k-pods", mHeapObj), Unit: "×", Scenario: "sync-10k-pods",
		Floor: "no floor: the read-and-frame client keeps no object"}

	usPerEvent := func(v float64) float64 { return v * 1000 } // CPU s per 1k events → µs per event
	cpu := target{What: "kinformer-protobuf CPU per steady watch event", Want: 5, Got: usPerEvent(k(watch, mCPU)), Unit: " µs", Scenario: watch, Floor: noFloor}
	if fl := usPerEvent(f(watch, mCPU)); !math.IsNaN(fl) && fl > 0 {
		cpu.Floor = fmt.Sprintf("read+frame-protobuf spends %s µs of CPU per event of the same watch; kinformer-protobuf's %s µs is %s× that, %s µs above it (client-go-protobuf's %s µs); the target leaves %s µs above the floor for decoding and caching",
			fmtNum(fl), fmtNum(cpu.Got), fmtNum(cpu.Got/fl), fmtNum(cpu.Got-fl), fmtNum(usPerEvent(c(watch, mCPU))), fmtNum(cpu.Want-fl))
	}

	const lat = "latency-20k"
	p99 := target{What: "kinformer-protobuf p99 watch→handler at 20k events/s, evenly spaced, median of the runs", Want: 1000,
		Got: k(lat, mP99), Unit: " µs", Scenario: lat, Floor: noFloor}
	if fl := f(lat, mP99); !math.IsNaN(fl) {
		p99.Floor = fmt.Sprintf("read+frame-protobuf's p99 at the same rate is %s µs, the wait any client has here before decoding; kinformer-protobuf's is %s µs above it (client-go-protobuf's %s µs above); the target leaves %s µs above the floor",
			fmtNum(fl), fmtNum(p99.Got-fl), fmtNum(c(lat, mP99)-fl), fmtNum(p99.Want-fl))
	}
	return []target{events, syncT, heap, cpu, p99}
}

// pct writes a fraction as a percentage.
func pct(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", 100*v)
}

// Markdown writes the report.
func (r *Report) Markdown() string {
	var b strings.Builder
	e := r.Env
	fmt.Fprintf(&b, "# List/watch benchmark: kinformer and client-go side by side\n\n")
	command := map[string]string{"short": "make bench", "full": "make bench-full"}[r.Plan.Mode]
	switch {
	case command == "":
		command = "go run ./bench/cmd/benchharness -plan " + r.Plan.Mode
		if r.Before != "" {
			command += " -before " + r.Before
		}
	case r.Before != "":
		command += " BEFORE=" + r.Before
	}
	fmt.Fprintf(&b, "Measured %s on %s (%d cores, %.0f GiB), %s, commit %s; `%s` (%s plan, %d runs per engine and scenario, engines alternating; %s in all). ",
		e.Date.Format("2006-01-02 15:04 MST"), orUnknown(e.CPU), e.Cores, e.MemoryGiB, e.GoVersion, orUnknown(e.Commit),
		command, r.Plan.Mode, r.Plan.Runs, r.Took.Round(1e9))
	b.WriteString("Each figure is the median of the runs, with the minimum and maximum in brackets. Each run is a fresh stream server (bench/cmd/streamserver) and a fresh runner process: bench/cmd/kinformer-runner, or client-go v0.36.3's shared informer in bench/clientgo/cmd/clientgo-runner, with JSON (client-go, its default) and, where the table has a client-go-protobuf column, with protobuf, its fastest configuration, against the same server serving the encodings k8s.io/api writes (prepared by bench/clientgo/cmd/pbprep). The targets hold kinformer against whichever of the two does better on the target's figure. kinformer-protobuf is kinformer-runner -protobuf, kinformer reading the same protobuf, held against client-go-protobuf alone; read+frame-protobuf is no engine but the floor of those protobuf bytes: the ceiling client (bench/cmd/ceiling -protobuf) reading them and finding each watch frame or list item by its length prefix, decoding nothing (its time to synced is the list's reading time from its first request, the runners' counts from their process's start). Both runners measure with the same code (bench/measure), decode typed objects, and strip managedFields unless a scenario says otherwise. Targets are printed, never asserted.\n\n")

	if r.Plan.Mode != "sharded" { // the targets are the other scenarios'
		r.writeTargets(&b)
	}
	r.writeBefore(&b)
	b.WriteString("## Scenarios\n\n")
	seen := map[string]bool{}
	for _, o := range r.Outcomes {
		sc := o.Scenario
		if seen[sc.ID] {
			continue
		}
		seen[sc.ID] = true
		if sc.Kind == KindSharded {
			for _, id := range r.shardedTable(&b) {
				seen[id] = true
			}
			continue
		}
		fmt.Fprintf(&b, "### %s\n\n`%s` · server `%s` · runner `%s`\n\n", sc.Title, sc.ID, strings.Join(sc.Server, " "), strings.Join(sc.Runner, " "))
		if sc.Server == nil {
			fmt.Fprintf(&b, "(against a real kube-apiserver + etcd started on loopback, %d pods created through the API first)\n\n", sc.RealPods)
			if sc.againstRealAPIServer() {
				b.WriteString("The apiserver's CPU per sync is its process's user + system time (utime + stime of /proc/PID/stat, in ticks of 10 ms) from before each runner process starts to after it exits: the list, the watch and discovery it served, and its own background work meanwhile")
				if r.APIServerIdleCPU > 0 {
					fmt.Fprintf(&b, " (at rest it used %s CPU s per second, measured over %v before the first run)", fmtNum(r.APIServerIdleCPU), apiserverIdleWindow)
				}
				b.WriteString(".\n\n")
			}
		}
		b.WriteString("| |")
		for _, e := range sc.Engines {
			fmt.Fprintf(&b, " %s |", e)
		}
		// A ratio column per pair of ratioColumns the scenario runs.
		var versus [][2]string
		for _, p := range ratioColumns {
			if slices.Contains(sc.Engines, p[0]) && slices.Contains(sc.Engines, p[1]) {
				versus = append(versus, p)
				fmt.Fprintf(&b, " %s ÷ %s |", p[0], p[1])
			}
		}
		b.WriteString("\n| --- |" + strings.Repeat(" --- |", len(sc.Engines)+len(versus)) + "\n")
		for _, m := range metricsFor(sc) {
			unit := ""
			if m.Unit != "" {
				unit = " (" + m.Unit + ")"
			}
			fmt.Fprintf(&b, "| %s%s |", m.Name, unit)
			for _, e := range sc.Engines {
				var s Spread
				if eo := r.outcome(sc.ID, e); eo != nil { // nil: the engine was not run
					s = spreadOf(eo.Results, m)
				}
				if s.N == 0 {
					b.WriteString(" – |")
					continue
				}
				fmt.Fprintf(&b, " %s (%s–%s) |", fmtNum(s.Median), fmtNum(s.Min), fmtNum(s.Max))
			}
			for _, p := range versus {
				fmt.Fprintf(&b, " %s |", fmtNum(r.median(sc.ID, p[0], m)/r.median(sc.ID, p[1], m)))
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
		for _, e := range sc.Engines {
			if eo := r.outcome(sc.ID, e); eo != nil && len(eo.Errors) > 0 {
				fmt.Fprintf(&b, "%s failed %d run(s): %s\n\n", e, len(eo.Errors), eo.Errors[0])
			}
		}
	}
	return b.String()
}

// shardedTable writes the one table of every sharded scenario, a row each, and returns
// their IDs.
func (r *Report) shardedTable(b *strings.Builder) (ids []string) {
	var scs []Scenario
	var shards []string
	var base Scenario // the one shard, server filtering: what the others are held against
	for _, o := range r.Outcomes {
		sc := o.Scenario
		if sc.Kind != KindSharded || slices.Contains(ids, sc.ID) {
			continue
		}
		ids = append(ids, sc.ID)
		scs = append(scs, sc)
		if n := strconv.Itoa(sc.Shards); !sc.ClientFilters && !slices.Contains(shards, n) {
			shards = append(shards, n)
		}
		if sc.Shards == 1 && !sc.ClientFilters {
			base = sc
		}
	}
	over := strings.Join(shards, ", ")
	if i := strings.LastIndex(over, ", "); i >= 0 {
		over = over[:i] + " and " + over[i+2:]
	}
	fmt.Fprintf(b, "### Initial sync of 100k pods in 1,000 namespaces, split over %s shards\n\n", over)
	b.WriteString("kinformer only: client-go has no sharding. Each run is one instance of N, a runner caching shard 0: " +
		"the part of the namespaces' hash space (FNV-1a) that shard.Assign over members \"0\" … \"N-1\" gives member \"0\" (256 equal slots of the space, dealt by rendezvous hashing within 1.1 × the mean). " +
		"The server filters by the informer's shardSelector and echoes it in metadata.shardInfo, as kube-apiserver 1.36 with the ShardedListAndWatch gate; " +
		"where it ignores the selector, as without the gate, the informer drops the other shards itself. " +
		"Heap per instance is the runner's whole live heap after GC, not per object: the goal is about 1/N of the one-shard instance's, " +
		"or rather the shard's share of the pods (objects ÷ the 1-shard's), since whole slots cannot split the space exactly evenly.\n\n")
	b.WriteString("| shards | objects cached | time to synced (s) | heap per instance after GC (MB) | heap ÷ the 1-shard heap | objects ÷ the 1-shard's | peak RSS (MB) |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- |\n")
	spread := func(s Spread) string {
		if s.N == 0 {
			return "–"
		}
		return fmt.Sprintf("%s (%s–%s)", fmtNum(s.Median), fmtNum(s.Min), fmtNum(s.Max))
	}
	for _, sc := range scs {
		var results []measure.Result
		if o := r.outcome(sc.ID, Kinformer); o != nil {
			results = o.Results
		}
		label := strconv.Itoa(sc.Shards)
		if sc.ClientFilters {
			label += ", the server ignoring the selector (the informer filters)"
		}
		objects := "–"
		if s := spreadOf(results, mObjects); s.N > 0 {
			objects = thousands(int(s.Median))
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", label, objects, spread(spreadOf(results, mSync)), spread(spreadOf(results, mHeap)),
			ratio(r.median(sc.ID, Kinformer, mHeap)/r.median(base.ID, Kinformer, mHeap)),
			ratio(r.median(sc.ID, Kinformer, mObjects)/r.median(base.ID, Kinformer, mObjects)), spread(spreadOf(results, mRSS)))
	}
	b.WriteString("\n")
	for _, sc := range scs {
		fmt.Fprintf(b, "- `%s` · server `%s` · runner `%s`\n", sc.ID, strings.Join(sc.Server, " "), strings.Join(sc.Runner, " "))
	}
	b.WriteString("\n")
	for _, sc := range scs {
		if o := r.outcome(sc.ID, Kinformer); o != nil && len(o.Errors) > 0 {
			fmt.Fprintf(b, "`%s`: kinformer failed %d run(s): %s\n\n", sc.ID, len(o.Errors), o.Errors[0])
		}
	}
	return ids
}

// ratio writes a ratio to three significant figures, so that the heap's share and the
// objects' can be told apart (0.205 and 0.2).
func ratio(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return fmt.Sprintf("%.3g", v)
}

// thousands writes n with commas between thousands: 45,900.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// writeTargets writes the targets, the analysis of the misses, the charts and the limit
// line.
func (r *Report) writeTargets(b *strings.Builder) {
	b.WriteString("## Targets\n\n| target | want | measured | verdict |\n| --- | --- | --- | --- |\n")
	missed := false
	for _, t := range r.targets() {
		op := "≤"
		if t.AtLeast {
			op = "≥"
		}
		what := t.What
		if t.Proxy != "" {
			what += ", measured on " + t.Proxy
		}
		fmt.Fprintf(b, "| %s | %s %s%s | %s%s | %s |\n", what, op, human(t.Want), t.Unit, fmtNum(t.Got), t.Unit, t.verdict())
		missed = missed || strings.HasPrefix(t.verdict(), "missed")
	}
	r.writeFloors(b)
	r.writeMillion(b)
	if missed && r.Analysis != "" {
		b.WriteString("\n## The misses: what the profiles show\n\n(from bench/results/analysis.md, written by hand for the runs it names)\n\n")
		b.WriteString(strings.TrimSpace(r.Analysis) + "\n")
	}
	b.WriteString("\n![watch events per second](events.svg)\n\n![heap per cached object](memory.svg)\n\n![watch to handler latency](latency.svg)\n\n![time to synced](sync.svg)\n\n")

	if len(r.Ceilings) > 0 {
		b.WriteString("## The limit line\n\nThe same watch stream (1,000 pods, the same event sequence) read by a client that does nothing but frame the events, and by one that tokenizes them with encoding/json, next to kinformer's full decode into the cache:\n\n| reader | events/s | MB/s | kinformer as a fraction |\n| --- | --- | --- | --- |\n")
		k := r.median("watch-pods", Kinformer, mRate)
		for _, mode := range []string{"frame", "tokenize"} {
			s := r.ceiling(mode)
			if s.N == 0 {
				continue
			}
			fmt.Fprintf(b, "| read + %s | %s (%s–%s) | %.0f | %.2f |\n", map[string]string{"frame": "frame", "tokenize": "tokenize (encoding/json)"}[mode],
				human(s.Median), human(s.Min), human(s.Max), r.ceilingMBps(mode), k/s.Median)
		}
		b.WriteString("\n")
	}

}

// writeFloors writes, for each target with a floor, how far it is from the floor of the
// same protobuf bytes: nothing when no such floor ran.
func (r *Report) writeFloors(b *strings.Builder) {
	if !slices.ContainsFunc(r.Outcomes, func(o *Outcome) bool { return o.Engine == FloorProtobuf && len(o.Results) > 0 }) {
		return
	}
	first := true
	for _, t := range r.targets() {
		if t.Floor == "" {
			continue
		}
		if first {
			b.WriteString("\nThe protobuf targets against the floor of the same protobuf bytes (read+frame-protobuf: bench/cmd/ceiling -protobuf, which reads the server's protobuf and finds its watch frames and list items by their length prefixes, decoding nothing; the medians of its runs in the same scenario):\n\n")
			first = false
		}
		fmt.Fprintf(b, "- %s (`%s`): %s.\n", t.What, t.Scenario, t.Floor)
	}
}

// The million-pod syncs, a row each in writeMillion: the uniform corpus's, whose figures
// the targets hold, and the realistic corpus's beside it.
var millionRows = []struct{ id, corpus string }{
	{"sync-1m-pods", "uniform (`sync-1m-pods`: 4.2 KB of JSON a pod, 1,000 namespaces; the targets above)"},
	{"sync-1m-realistic-pods", "realistic (`sync-1m-realistic-pods`: 13.7 KB of JSON a pod, 60 namespaces; reported, no target)"},
}

// writeMillion writes kinformer's million-pod syncs side by side, uniform and realistic
// corpus: time to synced, peak RSS and heap per cached pod. Nothing when neither ran.
func (r *Report) writeMillion(b *strings.Builder) {
	if !slices.ContainsFunc(millionRows, func(row struct{ id, corpus string }) bool { return r.outcome(row.id, Kinformer) != nil }) {
		return
	}
	b.WriteString("\nA million pods, kinformer with no memory limit, listed across all namespaces: the uniform corpus (the two 1M targets) and the realistic one beside it.\n\n")
	b.WriteString("| 1M pods | time to synced (s) | peak RSS (MB) | heap per cached pod after GC (B) |\n| --- | --- | --- | --- |\n")
	for _, row := range millionRows {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", row.corpus, fmtNum(r.median(row.id, Kinformer, mSync)),
			fmtNum(r.median(row.id, Kinformer, mRSS)), fmtNum(r.median(row.id, Kinformer, mHeapObj)))
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// fmtNum writes a figure for a table: three significant figures, no exponent.
func fmtNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return human(v)
}

// human writes v with three significant figures (two below 1) and a k/M suffix.
func human(v float64) string {
	switch a := math.Abs(v); {
	case a >= 999.5e3:
		return fmt.Sprintf("%.3gM", v/1e6)
	case a >= 999.5:
		return fmt.Sprintf("%.3gk", v/1e3)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 1:
		return fmt.Sprintf("%.3g", v)
	case a == 0:
		return "0"
	}
	return fmt.Sprintf("%.2g", v)
}

// ResultsFile is the file, beside latest.md, that holds every run's figures as
// measured: what the report is made from, for anyone who wants them, and what
// ReadReport reads to make latest.md again with a rewritten analysis, without running.
const ResultsFile = "results.json"

// Write writes latest.md, the charts and ResultsFile into dir.
func (r *Report) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	saved := *r
	saved.Analysis = "" // it is read again from its own file, and may change
	data, err := json.MarshalIndent(&saved, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, ResultsFile), append(data, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "latest.md"), []byte(r.Markdown()), 0o644); err != nil {
		return err
	}
	if r.Plan.Mode == "sharded" { // no chart draws the sharded scenarios
		return nil
	}
	for name, svg := range r.charts() {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(svg), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// ReadReport reads the report that Write saved in dir (its ResultsFile).
func ReadReport(dir string) (*Report, error) {
	data, err := os.ReadFile(filepath.Join(dir, ResultsFile))
	if err != nil {
		return nil, err
	}
	r := &Report{}
	if err := json.Unmarshal(data, r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ResultsFile), err)
	}
	return r, nil
}
