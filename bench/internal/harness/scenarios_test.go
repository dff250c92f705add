package harness

import (
	"flag"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kinformer/kinformer/bench/internal/streamserver"
)

// argAfter is the value after name in args, and whether name is there.
func argAfter(args []string, name string) (string, bool) {
	i := slices.Index(args, name)
	if i < 0 || i+1 >= len(args) {
		return "", false
	}
	return args[i+1], true
}

// sync-1m-pods lists every namespace of a lazily served million pods, once per engine.
func TestSync1MPods(t *testing.T) {
	i := slices.IndexFunc(Full().Scenarios, func(sc Scenario) bool { return sc.ID == "sync-1m-pods" })
	if i < 0 {
		t.Fatal("the full plan has no sync-1m-pods")
	}
	sc := Full().Scenarios[i]
	if ns, ok := argAfter(sc.Runner, "-namespace"); ok && ns != "" {
		t.Errorf("the runners list namespace %q, want all namespaces", ns)
	}
	for flag, want := range map[string]string{"-objects": "1000000", "-namespaces": "1000", "-watch-events": "-1"} {
		if got, _ := argAfter(sc.Server, flag); got != want {
			t.Errorf("server %s %q, want %q", flag, got, want)
		}
	}
	if millionPods <= streamserver.LazyAbove {
		t.Errorf("%d pods would be generated eagerly", millionPods)
	}
	if got, _ := argAfter(sc.Runner, "-objects"); got != "1000000" {
		t.Errorf("runner -objects %q", got)
	}
	if len(sc.EngineRunner) != 0 {
		t.Errorf("engine flags %q: want none (the target is met with no memory limit)", sc.EngineRunner)
	}
	if sc.runs(3) != 1 || sc.Timeout < 5*60e9 {
		t.Errorf("runs %d, timeout %v", sc.runs(3), sc.Timeout)
	}
	if !slices.Equal(sc.Engines, both) || sc.servesProtobuf() {
		t.Errorf("engines %q (protobuf served: %v), want kinformer and client-go JSON: the lazy server has no protobuf", sc.Engines, sc.servesProtobuf())
	}
}

// No scenario asks a lazy stream server (-lazy, or more than LazyAbove pods of the pods
// or realistic-pods profile) for protobuf, which it refuses: pbprep would refuse to
// prepare it first.
func TestNoProtobufFromLazyServers(t *testing.T) {
	for _, sc := range Full().Scenarios {
		if !sc.servesProtobuf() {
			continue
		}
		profile, _ := argAfter(sc.Server, "-profile")
		objects, _ := argAfter(sc.Server, "-objects")
		n, _ := strconv.Atoi(objects)
		pods := profile == "" || profile == "pods" || profile == streamserver.RealisticPods // the profiles with a lazy mode
		if slices.Contains(sc.Server, "-lazy") || pods && n > streamserver.LazyAbove {
			t.Errorf("%s serves protobuf from a lazy server (%q)", sc.ID, sc.Server)
		}
	}
}

func TestScenarioRuns(t *testing.T) {
	for _, tc := range []struct{ max, min, plan, want int }{
		{0, 0, 3, 3}, {1, 0, 3, 1}, {5, 0, 3, 3}, {2, 0, 1, 1},
		{0, 5, 3, 5}, {0, 5, 7, 7},
	} {
		sc := Scenario{MaxRuns: tc.max, MinRuns: tc.min}
		if got := sc.runs(tc.plan); got != tc.want {
			t.Errorf("MaxRuns %d, MinRuns %d of a plan of %d: %d runs, want %d", tc.max, tc.min, tc.plan, got, tc.want)
		}
	}
	for _, sc := range Short().Scenarios {
		if sc.Kind == KindLatency && sc.runs(Short().Runs) < 5 {
			t.Errorf("%s: %d runs; a p99 is the median of at least five", sc.ID, sc.runs(Short().Runs))
		}
	}
}

// The realistic corpus's scenarios are in the full plan only, each right after the
// uniform scenario it repeats, listing every namespace of a server of that corpus with
// the uniform one's objects and events: all four engines and the floor of the protobuf
// bytes against an eager server (so that it serves protobuf too), but at a million pods,
// kinformer alone against a lazy one.
func TestRealisticScenarios(t *testing.T) {
	for _, p := range []Plan{Short(), Sharded()} {
		for _, sc := range p.Scenarios {
			if strings.Contains(sc.ID, "realistic") || slices.Contains(sc.Server, streamserver.RealisticPods) {
				t.Errorf("the %s plan has %s", p.Mode, sc.ID)
			}
		}
	}
	full := Full().Scenarios
	want := map[string]string{"sync-10k-realistic-pods": "sync-10k-pods", "watch-realistic-pods": "watch-pods",
		"sync-100k-realistic-pods": "sync-100k-pods", "sync-1m-realistic-pods": "sync-1m-pods"}
	for id, beside := range want {
		i := slices.IndexFunc(full, func(sc Scenario) bool { return sc.ID == id })
		if i < 1 || full[i-1].ID != beside {
			t.Errorf("%s is not right after %s in the full plan", id, beside)
			continue
		}
		sc, uniform := full[i], full[i-1]
		var f streamserver.Flags
		fs := flag.NewFlagSet("streamserver", flag.ContinueOnError)
		f.Register(fs)
		if err := fs.Parse(sc.Server); err != nil {
			t.Fatalf("%s: server flags %q: %v", id, sc.Server, err)
		}
		o := f.Resolve()
		lazy := o.Lazy || o.Objects > streamserver.LazyAbove
		if o.Profile != streamserver.RealisticPods || o.Namespaces > 1 || sc.Kind != uniform.Kind {
			t.Errorf("%s: kind %s, server %+v; %s: kind %s", id, sc.Kind, o, beside, uniform.Kind)
		}
		switch million := id == "sync-1m-realistic-pods"; {
		case million && (!lazy || !slices.Equal(sc.Engines, []string{Kinformer}) || sc.servesProtobuf()):
			t.Errorf("%s: lazy %v, engines %q, protobuf %v: want a lazy server and kinformer alone (client-go would need ~25 GB)", id, lazy, sc.Engines, sc.servesProtobuf())
		case million && (sc.runs(3) != 1 || sc.Timeout < 10*time.Minute || len(sc.EngineRunner) != 0):
			t.Errorf("%s: %d runs, timeout %v, engine flags %q: want one run of up to 10 minutes, no memory limit", id, sc.runs(3), sc.Timeout, sc.EngineRunner)
		case !million && (lazy || !slices.Equal(sc.Engines, fourAndFloor) || !sc.servesProtobuf()):
			t.Errorf("%s: lazy %v, engines %q, protobuf %v: want an eager server, all four engines and the protobuf floor", id, lazy, sc.Engines, sc.servesProtobuf())
		}
		for _, name := range []string{"-objects", "-watch-events"} {
			a, _ := argAfter(sc.Server, name)
			b, _ := argAfter(uniform.Server, name)
			if a != b {
				t.Errorf("%s: server %s %s, %s's %s", id, name, a, beside, b)
			}
		}
		if ns, ok := argAfter(sc.Runner, "-namespace"); ok && ns != "" {
			t.Errorf("%s: the runners list namespace %q, want all namespaces", id, ns)
		}
		for _, name := range []string{"-scenario", "-resource", "-objects", "-events"} {
			a, _ := argAfter(sc.Runner, name)
			b, _ := argAfter(uniform.Runner, name)
			if a != b {
				t.Errorf("%s: runner %s %s, %s's %s", id, name, a, beside, b)
			}
		}
	}
}

// kinformer-protobuf runs wherever client-go-protobuf does and nowhere else; against the
// stream server, with the floor of the protobuf bytes beside it (and in the latency
// scenarios beside the JSON floor too), against the real apiserver with no floor (the
// ceiling client reads the stream server only) and with the apiserver's CPU per sync.
func TestProtobufEngines(t *testing.T) {
	want := map[string][]string{
		"sync-10k-pods": fourAndFloor, "watch-pods": fourAndFloor,
		"latency-1k": append(slices.Clone(four), Floor, FloorProtobuf), "latency-5k": append(slices.Clone(four), Floor, FloorProtobuf),
		"latency-20k":             append(slices.Clone(four), Floor, FloorProtobuf),
		"sync-10k-realistic-pods": fourAndFloor, "watch-realistic-pods": fourAndFloor,
		"sync-100k-pods": fourAndFloor, "sync-100k-realistic-pods": fourAndFloor,
		"real-sync-10k-pods": {Kinformer, KinformerProtobuf, ClientGo, ClientGoProtobuf},
	}
	seen := map[string]bool{}
	for _, p := range []Plan{Short(), Full(), Sharded()} {
		for _, sc := range p.Scenarios {
			engines, ok := want[sc.ID]
			if !ok {
				if slices.ContainsFunc(sc.Engines, readsProtobuf) || sc.servesProtobuf() {
					t.Errorf("%s (%s plan): engines %q read protobuf", sc.ID, p.Mode, sc.Engines)
				}
				continue
			}
			seen[sc.ID] = true
			if !slices.Equal(sc.Engines, engines) {
				t.Errorf("%s (%s plan): engines %q, want %q", sc.ID, p.Mode, sc.Engines, engines)
			}
			if sc.servesProtobuf() != (sc.Server != nil) {
				t.Errorf("%s: protobuf served %v", sc.ID, sc.servesProtobuf())
			}
			if _, err := floorArgs(sc, FloorProtobuf, append(slices.Clone(sc.Runner), "-server", "http://x")); slices.Contains(sc.Engines, FloorProtobuf) && err != nil {
				t.Errorf("%s: %v", sc.ID, err)
			}
		}
	}
	for id := range want {
		if !seen[id] {
			t.Errorf("no plan has %s", id)
		}
	}
	full := Full().Scenarios
	realSync := full[slices.IndexFunc(full, func(sc Scenario) bool { return sc.ID == "real-sync-10k-pods" })]
	var names []string
	for _, m := range metricsFor(realSync) {
		names = append(names, m.Name)
	}
	if !slices.Contains(names, mAPIServerCPU.Name) || !realSync.againstRealAPIServer() || realSync.RealPods != 10000 {
		t.Errorf("real-sync-10k-pods: figures %q, %d pods", names, realSync.RealPods)
	}
	for _, m := range metricsFor(Short().Scenarios[1]) {
		if m.Name == mAPIServerCPU.Name {
			t.Errorf("%s has the apiserver's CPU", Short().Scenarios[1].ID)
		}
	}
}

// kinformer-protobuf is kinformer-runner with -protobuf added to the scenario's flags,
// as client-go-protobuf is clientgo-runner with it; the build before runs beside
// kinformer (JSON) only.
func TestRunnerCommands(t *testing.T) {
	r := &Runner{Bins: Binaries{Kinformer: "kinformer-runner", ClientGo: "clientgo-runner", Before: "kinformer-runner-before"}}
	args := []string{"-scenario", "watch", "-server", "http://x"}
	for engine, want := range map[string][]string{
		Kinformer:         {"kinformer-runner", "-scenario", "watch", "-server", "http://x"},
		KinformerProtobuf: {"kinformer-runner", "-scenario", "watch", "-server", "http://x", "-protobuf"},
		ClientGo:          {"clientgo-runner", "-scenario", "watch", "-server", "http://x"},
		ClientGoProtobuf:  {"clientgo-runner", "-scenario", "watch", "-server", "http://x", "-protobuf"},
		Before:            {"kinformer-runner-before", "-scenario", "watch", "-server", "http://x"},
	} {
		bin, got := r.runnerCommand(engine, slices.Clone(args))
		if got := append([]string{bin}, got...); !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", engine, got, want)
		}
	}
	watch := Short().Scenarios[3]
	if got, want := r.engines(watch), []string{Kinformer, Before, KinformerProtobuf, ClientGo, ClientGoProtobuf, FloorProtobuf}; !slices.Equal(got, want) {
		t.Errorf("engines with a build before: %q, want %q", got, want)
	}
	if got := (&Runner{}).engines(watch); !slices.Equal(got, watch.Engines) {
		t.Errorf("engines without a build before: %q", got)
	}
}

// The floor of a scenario reads what its runners read, as its kind measures it: the
// latency scenarios' events timed, the watch's events counted, the sync's list pages
// framed, in protobuf for read+frame-protobuf.
func TestFloorArgs(t *testing.T) {
	byID := map[string]Scenario{}
	for _, sc := range Full().Scenarios {
		byID[sc.ID] = sc
	}
	for _, tc := range []struct {
		id, engine string
		want       string
	}{
		{"latency-20k", Floor, "-url U -resource pods -namespace bench -events 60000 -modes frame -latency"},
		{"latency-20k", FloorProtobuf, "-url U -resource pods -namespace bench -protobuf -events 60000 -modes frame -latency"},
		{"watch-pods", FloorProtobuf, "-url U -resource pods -namespace bench -protobuf -events 50000 -modes frame"},
		{"watch-realistic-pods", FloorProtobuf, "-url U -resource pods -namespace - -protobuf -events 50000 -modes frame"},
		{"sync-100k-pods", FloorProtobuf, "-url U -resource pods -namespace bench -protobuf -modes  -list -list-modes frame"},
	} {
		got, err := floorArgs(byID[tc.id], tc.engine, append(slices.Clone(byID[tc.id].Runner), "-server", "U"))
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("%s %s: %q (%v), want %q", tc.id, tc.engine, strings.Join(got, " "), err, tc.want)
		}
	}
	if _, err := floorArgs(byID["real-sync-10k-pods"], FloorProtobuf, append(slices.Clone(byID["real-sync-10k-pods"].Runner), "-kubeconfig", "k")); err == nil {
		t.Errorf("a floor of the real apiserver: no error")
	}
	sync := byID["sync-10k-pods"]
	args := append(slices.Clone(sync.Runner), "-server", "U")
	res, err := floorResult(sync, FloorProtobuf, args, CeilingResult{Mode: "list-frame", Objects: 10000, Seconds: 0.4})
	if err != nil || res.SyncSeconds != 0.4 || res.Objects != 10000 || res.Engine != FloorProtobuf {
		t.Errorf("sync floor: %+v, %v", res, err)
	}
	if _, err := floorResult(sync, FloorProtobuf, args, CeilingResult{Mode: "list-frame", Objects: 9999}); err == nil {
		t.Errorf("a floor that listed 9,999 of 10,000 objects: no error")
	}
}

// The apiserver's CPU time is utime + stime of its /proc/PID/stat, fields 14 and 15 in
// ticks of 10 ms, counted after the command name however many spaces and parentheses
// that holds.
func TestParseStatCPU(t *testing.T) {
	stat := "4242 (kube-api server) x) S 1 4242 4242 0 -1 4194560 81234 0 12 0 1234 567 0 0 20 0 23 0 123456 1700000000 40000 18446744073709551615\n"
	got, err := parseStatCPU(stat)
	if err != nil || got != 18010*time.Millisecond {
		t.Errorf("parseStatCPU: %v, %v; want 18.01s", got, err)
	}
	for _, bad := range []string{"4242 kube-apiserver S 1", "4242 (kube-apiserver) S 1 2 3"} {
		if _, err := parseStatCPU(bad); err == nil {
			t.Errorf("parseStatCPU(%q): no error", bad)
		}
	}
	if cpu, err := processCPU(os.Getpid()); err != nil || cpu < 0 {
		t.Logf("this process's CPU time: %v, %v (no /proc here?)", cpu, err)
	}
}
