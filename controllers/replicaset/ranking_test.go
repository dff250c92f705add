package replicaset

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/object"
)

var rankNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// rpod builds a candidate: node "" is unassigned; readyAgo < 0 is not ready.
type rpod struct {
	name, node string
	phase      object.PodPhase
	readyAgo   time.Duration
	restarts   int32
	age        time.Duration
	cost       string
}

func (r rpod) pod() *object.Pod {
	p := &object.Pod{ObjectMeta: object.ObjectMeta{Name: r.name, UID: "uid-" + r.name,
		CreationTimestamp: object.NewTime(rankNow.Add(-r.age))}}
	p.Spec.NodeName = r.node
	p.Status.Phase = r.phase
	if r.readyAgo >= 0 {
		p.Status.Conditions = []object.PodCondition{object.NewPodCondition("Ready", "True", object.NewTime(rankNow.Add(-r.readyAgo)))}
	}
	if r.restarts > 0 {
		a, b := object.NewContainerStatus("a", true), object.NewContainerStatus("b", true)
		a.RestartCount, b.RestartCount = 1, r.restarts
		p.Status.ContainerStatuses = []object.ContainerStatus{a, b}
	}
	if r.cost != "" {
		p.Annotations = map[string]string{deletionCostAnnotation: r.cost}
	}
	return p
}

// Each case has two pods that differ in one rule (and in the later ones in the opposite
// direction, so only that rule's order can put the first one first).
func TestDeletionRanking(t *testing.T) {
	running := object.PodRunning
	base := rpod{node: "n1", phase: running, readyAgo: time.Hour, age: 2 * time.Hour}
	with := func(name string, f func(*rpod)) rpod { r := base; r.name = name; f(&r); return r }
	tests := []struct {
		rule        string
		first, last rpod
		related     []rpod // extra pods of the family, for colocation
	}{
		{"unassigned before assigned",
			with("a", func(r *rpod) { r.node = ""; r.phase = running }), with("b", func(r *rpod) { r.phase = object.PodPending; r.readyAgo = -1 }), nil},
		{"pending before unknown",
			with("a", func(r *rpod) { r.phase = object.PodPending }), with("b", func(r *rpod) { r.phase = object.PodUnknown; r.readyAgo = -1 }), nil},
		{"unknown before running",
			with("a", func(r *rpod) { r.phase = object.PodUnknown }), with("b", func(r *rpod) { r.readyAgo = -1 }), nil},
		{"not ready before ready",
			with("a", func(r *rpod) { r.readyAgo = -1; r.cost = "100" }), with("b", func(r *rpod) {}), nil},
		{"lower deletion cost before higher",
			with("a", func(r *rpod) { r.cost = "-5"; r.readyAgo = 10 * time.Hour }), with("b", func(r *rpod) { r.cost = "3" }), nil},
		{"invalid deletion cost counts as zero",
			with("a", func(r *rpod) { r.cost = "bogus"; r.readyAgo = 10 * time.Hour }), with("b", func(r *rpod) { r.cost = "1" }), nil},
		{"doubled up before alone",
			with("a", func(r *rpod) { r.node = "busy"; r.readyAgo = 10 * time.Hour }), with("b", func(r *rpod) { r.node = "quiet" }),
			[]rpod{{name: "x", node: "busy", phase: running}, {name: "y", node: "busy", phase: running}}},
		{"ready for less time before longer",
			with("a", func(r *rpod) { r.readyAgo = time.Minute; r.restarts = 0 }), with("b", func(r *rpod) { r.readyAgo = 10 * time.Hour; r.restarts = 9 }), nil},
		{"more restarts before fewer",
			with("a", func(r *rpod) { r.restarts = 7; r.age = 10 * time.Hour }), with("b", func(r *rpod) { r.restarts = 2 }), nil},
		{"newer before older",
			with("a", func(r *rpod) { r.age = time.Minute }), with("b", func(r *rpod) { r.age = 10 * time.Hour }), nil},
		{"ages in one logarithmic bucket fall back to the UID",
			with("a", func(r *rpod) { r.age = 2*time.Hour + 10*time.Minute }), with("b", func(r *rpod) { r.age = 2 * time.Hour }), nil},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			first, last := tt.first.pod(), tt.last.pod()
			related := []*object.Pod{first, last}
			for _, r := range tt.related {
				related = append(related, r.pod())
			}
			for _, order := range [][]*object.Pod{{first, last}, {last, first}} {
				got := podsToDelete(order, related, 1, rankNow)
				if got[0].Name != first.Name {
					t.Errorf("deleted %s first, want %s", got[0].Name, first.Name)
				}
			}
		})
	}
}

func TestPodsToDeleteOrdersAMix(t *testing.T) {
	pods := []*object.Pod{
		rpod{name: "ready-old", node: "n1", phase: object.PodRunning, readyAgo: 5 * time.Hour, age: 6 * time.Hour}.pod(),
		rpod{name: "pending", node: "n1", phase: object.PodPending, readyAgo: -1, age: time.Hour}.pod(),
		rpod{name: "unassigned", phase: object.PodPending, readyAgo: -1, age: 3 * time.Hour}.pod(),
		rpod{name: "running-not-ready", node: "n2", phase: object.PodRunning, readyAgo: -1, age: time.Hour}.pod(),
		rpod{name: "ready-new", node: "n2", phase: object.PodRunning, readyAgo: time.Second, age: time.Minute}.pod(),
	}
	got := names(podsToDelete(pods, pods, 4, rankNow))
	want := []string{"unassigned", "pending", "running-not-ready", "ready-new"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("deletion order (-want +got):\n%s", d)
	}
}

func TestSlowStart(t *testing.T) {
	tests := []struct {
		name       string
		n          int
		failFrom   int // calls numbered from 1 at or after this fail (0: none fails)
		wantOK     int
		wantCalls  int
		wantFailed bool
	}{
		{name: "all succeed in batches 1+2+4+3", n: 10, wantOK: 10, wantCalls: 10},
		{name: "first call fails: one call, not ten", n: 10, failFrom: 1, wantOK: 0, wantCalls: 1, wantFailed: true},
		{name: "fails in the third batch: it finishes, no fourth", n: 20, failFrom: 5, wantOK: 4, wantCalls: 7, wantFailed: true},
		{name: "a single pod", n: 1, wantOK: 1, wantCalls: 1},
		{name: "none", n: 0, wantOK: 0, wantCalls: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			ok, err := slowStart(tt.n, func() error {
				if c := calls.Add(1); tt.failFrom > 0 && int(c) >= tt.failFrom {
					return errors.New("quota exceeded")
				}
				return nil
			})
			if ok != tt.wantOK || int(calls.Load()) != tt.wantCalls || (err != nil) != tt.wantFailed {
				t.Errorf("slowStart(%d) = %d, %v after %d calls; want %d ok after %d calls, failed %v",
					tt.n, ok, err, calls.Load(), tt.wantOK, tt.wantCalls, tt.wantFailed)
			}
		})
	}
}

func TestAvailability(t *testing.T) {
	now := rankNow
	tests := []struct {
		name      string
		readyAgo  time.Duration
		minReady  int32
		available bool
		wait      time.Duration
	}{
		{"not ready", -1, 0, false, 0},
		{"ready, no minReadySeconds", 0, 0, true, 0},
		{"ready long enough", 11 * time.Second, 10, true, 0},
		{"ready for 4 of 10 s", 4 * time.Second, 10, false, 6 * time.Second},
		{"ready exactly minReadySeconds: not yet", 10 * time.Second, 10, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := rpod{name: "p", node: "n", phase: object.PodRunning, readyAgo: tt.readyAgo}.pod()
			available, wait := availableIn(p, tt.minReady, now)
			if available != tt.available || wait != tt.wait {
				t.Errorf("availableIn = %v, %s; want %v, %s", available, wait, tt.available, tt.wait)
			}
		})
	}
}
