package informer

import (
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/deltafifo"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/logbuf"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/object"
)

// mutations collects what a detector reports.
type mutations struct {
	mu  sync.Mutex
	got []Mutation
}

func (m *mutations) add(x Mutation) { m.mu.Lock(); m.got = append(m.got, x); m.mu.Unlock() }
func (m *mutations) list() []Mutation {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Mutation(nil), m.got...)
}

// A handler that sets a label on the object it was handed changes the cache under every
// other reader. The detector names the object and the field, in the log, the status, a
// metric and OnMutation: at the next periodic check, and when the cache replaces the
// object.
func TestMutationDetectorNamesTheObjectAndTheField(t *testing.T) {
	for _, when := range []string{"periodic check", "object replaced"} {
		t.Run(when, func(t *testing.T) {
			leakcheck.Check(t)
			clk := clock.NewFake(time.Unix(1000, 0))
			src := newHandSource(podAt("web-1", "1", map[string]string{"app": "web"}), podAt("db-1", "1", map[string]string{"app": "db"}))
			reg := prometheus.NewRegistry()
			metrics, _ := NewMetrics(reg)
			var logs logbuf.Buffer
			var found mutations
			inf := mustNew(t, src, Options[*object.Pod]{Name: "pods", Clock: clk, Metrics: metrics, Logger: logs.Logger(slog.LevelInfo),
				MutationDetector: MutationDetector{Enabled: true, Period: time.Minute, OnMutation: found.add}})
			mutated := make(chan struct{})
			careless := HandlerFuncs[*object.Pod]{UpdateFunc: func(_, p *object.Pod) {
				if p.Name == "web-1" && p.ResourceVersion == "2" {
					p.Labels["app"] = "hacked" // the mistake: a cached object changed in place
					close(mutated)
				}
			}}
			if _, err := inf.AddEventHandler(careless, HandlerOptions{Name: "careless"}); err != nil {
				t.Fatal(err)
			}
			run(t, inf)
			w := src.stream(t)
			w.Modify(podAt("web-1", "2", map[string]string{"app": "web"}))
			<-mutated
			switch when {
			case "periodic check":
				testwait.Eventually(t, 10*time.Second, func() bool {
					clk.Step(time.Minute)
					return len(found.list()) > 0
				}, "waiting for the periodic check")
			case "object replaced":
				w.Modify(podAt("web-1", "3", map[string]string{"app": "web"}))
				testwait.Eventually(t, 10*time.Second, func() bool { return len(found.list()) > 0 }, "waiting for the check on replace")
			}
			want := []Mutation{{Key: "ns/web-1", Path: "metadata.labels.app", Before: `"web"`, After: `"hacked"`, Fields: 1}}
			if d := cmp.Diff(want, found.list()); d != "" {
				t.Errorf("mutations found (-want +got):\n%s", d)
			}
			if st := inf.Status(); st.Mutations != 1 || st.LastMutation == nil || st.LastMutation.Key != "ns/web-1" {
				t.Errorf("status: %d mutations, last %v", st.Mutations, st.LastMutation)
			}
			if got := metric(t, reg, "kinformer_informer_cache_mutations_total", map[string]string{"name": "pods"}); got != 1 {
				t.Errorf("kinformer_informer_cache_mutations_total = %v", got)
			}
			if log := logs.String(); !strings.Contains(log, "changed in place") || !strings.Contains(log, "metadata.labels.app") {
				t.Errorf("the log does not name the field:\n%s", log)
			}
			// Reported once, not at every check: let one more whole-cache check run.
			checks := func() int { inf.mutations.mu.Lock(); defer inf.mutations.mu.Unlock(); return inf.mutations.checks }
			before := checks()
			testwait.Eventually(t, 10*time.Second, func() bool { clk.Step(time.Minute); return checks() > before }, "waiting for another check")
			if n := len(found.list()); n != 1 {
				t.Errorf("%d reports of one mutation", n)
			}
		})
	}
}

func TestMutationDetectorIsOffUnlessAsked(t *testing.T) {
	t.Setenv(MutationDetectorEnv, "")
	inf := mustNew(t, newHandSource(), Options[*object.Pod]{Name: "pods"})
	if inf.mutations != nil {
		t.Error("the detector runs though nothing asked for it")
	}
	t.Setenv(MutationDetectorEnv, "true")
	inf = mustNew(t, newHandSource(), Options[*object.Pod]{Name: "pods"})
	if inf.mutations == nil {
		t.Errorf("%s=true did not turn the detector on", MutationDetectorEnv)
	}
}

func TestDescribeMutation(t *testing.T) {
	tests := []struct {
		name          string
		before, after string
		want          Mutation
	}{
		{"a label changed", `{"metadata":{"labels":{"app":"web"}}}`, `{"metadata":{"labels":{"app":"api"}}}`,
			Mutation{Path: "metadata.labels.app", Before: `"web"`, After: `"api"`, Fields: 1}},
		{"a label added, with a key that needs quoting", `{"metadata":{"labels":{}}}`, `{"metadata":{"labels":{"app.kubernetes.io/name":"x"}}}`,
			Mutation{Path: `metadata.labels["app.kubernetes.io/name"]`, After: `"x"`, Fields: 1}},
		{"a field removed", `{"spec":{"nodeName":"n1","x":1}}`, `{"spec":{"x":1}}`,
			Mutation{Path: "spec.nodeName", Before: `"n1"`, Fields: 1}},
		{"in a list", `{"spec":{"containers":[{"image":"a"},{"image":"b"}]}}`, `{"spec":{"containers":[{"image":"a"},{"image":"c"}]}}`,
			Mutation{Path: "spec.containers[1].image", Before: `"b"`, After: `"c"`, Fields: 1}},
		{"a list grown, and another field", `{"a":[1],"b":1}`, `{"a":[1,2],"b":2}`,
			Mutation{Path: "a", Before: `[1]`, After: `[1,2]`, Fields: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.Key = "ns/p"
			if d := cmp.Diff(tt.want, describeMutation("ns/p", []byte(tt.before), []byte(tt.after))); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// BenchmarkUpdateDetector is the cost of applying one watch update, with the mutation
// detector off (the default: it must cost nothing) and on.
func BenchmarkUpdateDetector(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			inf := mustNew(b, newHandSource(), Options[*object.Pod]{Name: "pods", MutationDetector: MutationDetector{Enabled: on}})
			pods := make([]*object.Pod, 2)
			for i := range pods {
				var p object.Pod
				if err := json.Unmarshal([]byte(`{"metadata":{"namespace":"ns","name":"p","uid":"u","resourceVersion":"`+string(rune('1'+i))+`","labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`), &p); err != nil {
					b.Fatal(err)
				}
				pods[i] = &p
			}
			b.ReportAllocs()
			batch := make([]*deltafifo.Item[*object.Pod], 1)
			for i := range b.N {
				batch[0] = deltaItem(pods[i%2])
				inf.process(batch)
			}
		})
	}
}

func deltaItem(p *object.Pod) *deltafifo.Item[*object.Pod] {
	return &deltafifo.Item[*object.Pod]{Delta: deltafifo.Delta[*object.Pod]{Type: deltafifo.Updated, Key: object.Key(p), Object: p}}
}
