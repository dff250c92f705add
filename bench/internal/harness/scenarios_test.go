package harness

import (
	"flag"
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
// the uniform one's objects and events: all three engines against an eager server (so
// that it serves protobuf too), but at a million pods, kinformer alone against a lazy
// one.
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
		case !million && (lazy || !slices.Equal(sc.Engines, three) || !sc.servesProtobuf()):
			t.Errorf("%s: lazy %v, engines %q, protobuf %v: want an eager server and all three engines", id, lazy, sc.Engines, sc.servesProtobuf())
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
