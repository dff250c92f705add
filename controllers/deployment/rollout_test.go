package deployment

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kinformer/kinformer/controllers"
	"github.com/kinformer/kinformer/object"
)

// recordingWriter is a writer that applies writes to ReplicaSets in memory and records
// them as "create NAME N", "scale NAME A→B", "delete NAME", and the statuses written.
type recordingWriter struct {
	rss      map[string]*object.ReplicaSet
	actions  []string
	status   []object.DeploymentStatus
	revision string // the Deployment's revision annotation, as last written
}

func (w *recordingWriter) createRS(_ context.Context, rs *object.ReplicaSet) (*object.ReplicaSet, error) {
	cp := object.DeepCopy(rs)
	cp.UID = "uid-" + rs.Name
	w.rss[rs.Name] = cp
	w.actions = append(w.actions, fmt.Sprintf("create %s %d", rs.Name, rsReplicas(rs)))
	return cp, nil
}

func (w *recordingWriter) patchRS(_ context.Context, _, name string, patch []byte) (*object.ReplicaSet, error) {
	var p struct {
		Metadata struct{ Annotations map[string]string }
		Spec     struct{ Replicas *int32 }
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		return nil, err
	}
	cp := object.DeepCopy(w.rss[name])
	for k, v := range p.Metadata.Annotations {
		if cp.Annotations == nil {
			cp.Annotations = map[string]string{}
		}
		cp.Annotations[k] = v
	}
	if p.Spec.Replicas != nil && *p.Spec.Replicas != rsReplicas(cp) {
		w.actions = append(w.actions, fmt.Sprintf("scale %s %d→%d", name, rsReplicas(cp), *p.Spec.Replicas))
		cp.Spec.Replicas = p.Spec.Replicas
	}
	w.rss[name] = cp
	return cp, nil
}

func (w *recordingWriter) deleteRS(_ context.Context, _, name, _ string) error {
	w.actions = append(w.actions, "delete "+name)
	delete(w.rss, name)
	return nil
}

func (w *recordingWriter) patchDeployment(_ context.Context, _ *object.Deployment, sub string, patch []byte) error {
	var p struct {
		Metadata struct{ Annotations map[string]string }
		Status   object.DeploymentStatus
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		return err
	}
	if sub == "status" {
		w.status = append(w.status, p.Status)
	} else if rev, ok := p.Metadata.Annotations[RevisionAnnotation]; ok {
		w.revision = rev
	}
	return nil
}

var stepNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// rsState is a ReplicaSet of a fixture: template "new" (the Deployment's) or "old-N".
type rsState struct {
	name, template                 string
	replicas, available, statusRep int32
	desired                        int32 // desired-replicas annotation (0: as the Deployment's)
	maxReplicas                    int32 // max-replicas annotation (0: none)
	revision                       int
	age                            time.Duration
}

func template(name string) object.PodTemplateSpec {
	return object.PodTemplateSpec{ObjectMeta: object.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: object.MustPodSpec(`{"containers":[{"name":"c","image":"` + name + `"}]}`)}
}

type fixture struct {
	replicas               int32
	surge, unavailable     string // IntOrString as written: "25%", "1"
	recreate, paused       bool
	historyLimit           *int32
	rss                    []rsState
	oldPods                int // pods still present of old ReplicaSets
	observedGen, statusRep int32
	done                   bool // the status says the rollout completed
}

func ios(s string) *object.IntOrString {
	if n, err := strconv.Atoi(s); err == nil {
		v := object.FromInt(int32(n))
		return &v
	}
	v := object.FromString(s)
	return &v
}

func (f fixture) build() (*object.Deployment, []*object.ReplicaSet, []*object.Pod) {
	d := &object.Deployment{ObjectMeta: object.ObjectMeta{Namespace: "ns", Name: "web", UID: "d-uid", Generation: 1},
		Spec: object.DeploymentSpec{Replicas: &f.replicas, Selector: &object.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: template("new"), Paused: f.paused, RevisionHistoryLimit: f.historyLimit}}
	d.Status.ObservedGeneration = int64(f.observedGen)
	d.Status.Replicas = f.statusRep
	if f.done {
		d.Status.UpdatedReplicas, d.Status.AvailableReplicas = f.replicas, f.replicas
	}
	if f.recreate {
		d.Spec.Strategy.Type = object.RecreateDeploymentStrategy
	} else if f.surge != "" || f.unavailable != "" {
		d.Spec.Strategy.RollingUpdate = &object.RollingUpdateDeployment{MaxSurge: ios(f.surge), MaxUnavailable: ios(f.unavailable)}
	}
	var rss []*object.ReplicaSet
	for _, s := range f.rss {
		rep := s.replicas
		rs := &object.ReplicaSet{ObjectMeta: object.ObjectMeta{Namespace: "ns", Name: s.name, UID: "uid-" + s.name,
			CreationTimestamp: object.NewTime(stepNow.Add(-s.age)),
			Labels:            map[string]string{"app": "web"}, Annotations: map[string]string{RevisionAnnotation: strconv.Itoa(s.revision)}},
			Spec: object.ReplicaSetSpec{Replicas: &rep, Template: template(s.template)}}
		desired := s.desired
		if desired == 0 {
			desired = f.replicas
		}
		rs.Annotations[DesiredReplicasAnnotation] = strconv.Itoa(int(desired))
		if s.maxReplicas > 0 {
			rs.Annotations[MaxReplicasAnnotation] = strconv.Itoa(int(s.maxReplicas))
		}
		rs.Status.Replicas, rs.Status.AvailableReplicas, rs.Status.ReadyReplicas = s.statusRep, s.available, s.available
		rs.Status.ObservedGeneration = rs.Generation
		rss = append(rss, rs)
	}
	var pods []*object.Pod
	yes := true
	for i := range f.oldPods {
		pods = append(pods, &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: "ns", Name: fmt.Sprint("old-", i),
			OwnerReferences: []object.OwnerReference{{Kind: "ReplicaSet", APIVersion: "apps/v1", Name: rss[0].Name, UID: rss[0].UID, Controller: &yes}}},
			Status: object.PodStatus{Phase: object.PodRunning}})
	}
	return d, rss, pods
}

// step runs one sync of the fixture and returns the writes it made.
func step(t *testing.T, f fixture) *recordingWriter {
	t.Helper()
	d, rss, pods := f.build()
	w := newRecordingWriter(rss)
	if err := newRollout(context.Background(), newTestController(t, w, pods), d, rss).run(); err != nil {
		t.Fatalf("sync: %v", err)
	}
	return w
}

func newRecordingWriter(rss []*object.ReplicaSet) *recordingWriter {
	w := &recordingWriter{rss: map[string]*object.ReplicaSet{}}
	for _, rs := range rss {
		w.rss[rs.Name] = rs
	}
	return w
}

// newTestController returns a Controller whose writes go to w, whose clock stands at
// stepNow and whose pod cache holds pods.
func newTestController(t *testing.T, w writer, pods []*object.Pod) *Controller {
	t.Helper()
	dc := &Controller{Base: controllers.NewBase(controllers.Config[*object.Deployment]{Name: Name}, controllers.Options{}), w: w,
		now: func() time.Time { return stepNow }, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		cachedPods: func(string) []*object.Pod { return pods }}
	t.Cleanup(dc.Queue().ShutDown)
	return dc
}

// The decisions of one rolling-update sync, worked out by hand from
// kube-controller-manager's rules (maxSurge rounds up, maxUnavailable down).
func TestRollingUpdateSteps(t *testing.T) {
	tests := []struct {
		name string
		f    fixture
		want []string
	}{
		{"a new template: create the new ReplicaSet at maxSurge, scale old down within maxUnavailable",
			fixture{replicas: 10, surge: "25%", unavailable: "25%", rss: []rsState{{name: "web-old", template: "old", replicas: 10, available: 10, statusRep: 10, revision: 1, age: time.Hour}}},
			[]string{"create web-NEW 3", "scale web-old 10→8"}},
		{"room to surge: scale the new one up, and nothing else this sync",
			fixture{replicas: 10, surge: "25%", unavailable: "25%", rss: []rsState{
				{name: "web-old", template: "old", replicas: 8, available: 8, statusRep: 8, revision: 1, age: time.Hour},
				{name: "web-new", template: "new", replicas: 3, available: 3, statusRep: 3, revision: 2}}},
			[]string{"scale web-new 3→5"}},
		{"surge used up: scale old down by what availability allows",
			fixture{replicas: 10, surge: "25%", unavailable: "25%", rss: []rsState{
				{name: "web-old", template: "old", replicas: 8, available: 8, statusRep: 8, revision: 1, age: time.Hour},
				{name: "web-new", template: "new", replicas: 5, available: 5, statusRep: 5, revision: 2}}},
			[]string{"scale web-old 8→3"}},
		{"new pods not available yet: only the budget they leave",
			fixture{replicas: 10, surge: "25%", unavailable: "25%", rss: []rsState{
				{name: "web-old", template: "old", replicas: 8, available: 8, statusRep: 8, revision: 1, age: time.Hour},
				{name: "web-new", template: "new", replicas: 5, available: 1, statusRep: 5, revision: 2}}},
			[]string{"scale web-old 8→7"}},
		{"unhealthy old replicas go first, oldest ReplicaSet first",
			fixture{replicas: 10, surge: "3", unavailable: "2", rss: []rsState{
				{name: "web-a", template: "old-a", replicas: 5, available: 2, statusRep: 5, revision: 1, age: 2 * time.Hour},
				{name: "web-b", template: "old-b", replicas: 5, available: 5, statusRep: 5, revision: 2, age: time.Hour},
				{name: "web-new", template: "new", replicas: 3, available: 0, statusRep: 3, revision: 3}}},
			[]string{"scale web-a 5→3"}},
		{"maxSurge 0: replace one at a time",
			fixture{replicas: 3, surge: "0", unavailable: "1", rss: []rsState{
				{name: "web-old", template: "old", replicas: 3, available: 3, statusRep: 3, revision: 1, age: time.Hour},
				{name: "web-new", template: "new", replicas: 0, revision: 2}}},
			[]string{"scale web-old 3→2"}},
		{"maxUnavailable 0: surge first, never below the desired count",
			fixture{replicas: 3, surge: "1", unavailable: "0", rss: []rsState{
				{name: "web-old", template: "old", replicas: 3, available: 3, statusRep: 3, revision: 1, age: time.Hour},
				{name: "web-new", template: "new", replicas: 1, available: 0, statusRep: 1, revision: 2}}},
			nil},
		{"both fenceposts round to zero: maxUnavailable becomes 1",
			fixture{replicas: 5, surge: "0", unavailable: "10%", rss: []rsState{
				{name: "web-old", template: "old", replicas: 5, available: 5, statusRep: 5, revision: 1, age: time.Hour},
				{name: "web-new", template: "new", replicas: 0, revision: 2}}},
			[]string{"scale web-old 5→4"}},
		{"rolled out: old ones beyond revisionHistoryLimit are deleted, oldest revision first",
			fixture{replicas: 2, historyLimit: ptr(int32(1)), observedGen: 1, statusRep: 2, done: true, rss: []rsState{
				{name: "web-r1", template: "old-1", revision: 1, age: 3 * time.Hour},
				{name: "web-r2", template: "old-2", revision: 2, age: 2 * time.Hour},
				{name: "web-r3", template: "new", replicas: 2, available: 2, statusRep: 2, revision: 3}}},
			[]string{"delete web-r1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := step(t, tt.f)
			got := normalize(w.actions)
			if d := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("writes (-want +got):\n%s", d)
			}
		})
	}
}

func TestRecreateSteps(t *testing.T) {
	tests := []struct {
		name string
		f    fixture
		want []string
	}{
		{"old ReplicaSets go to zero first, no new ReplicaSet yet",
			fixture{replicas: 3, recreate: true, rss: []rsState{{name: "web-old", template: "old", replicas: 3, available: 3, statusRep: 3, revision: 1}}},
			[]string{"scale web-old 3→0"}},
		{"old pods still there (terminating): wait",
			fixture{replicas: 3, recreate: true, oldPods: 2, rss: []rsState{{name: "web-old", template: "old", revision: 1}}},
			nil},
		{"old pods gone: create the new ReplicaSet at full size",
			fixture{replicas: 3, recreate: true, rss: []rsState{{name: "web-old", template: "old", revision: 1}}},
			[]string{"create web-NEW 3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, normalize(step(t, tt.f).actions), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("writes (-want +got):\n%s", d)
			}
		})
	}
}

// A Deployment resized mid-rollout resizes every active ReplicaSet in proportion to the
// size each had for the previous Deployment size; leftovers go to the largest.
func TestProportionalScaling(t *testing.T) {
	tests := []struct {
		name string
		f    fixture
		want []string
	}{
		{"10 → 20 mid-rollout", fixture{replicas: 20, surge: "25%", unavailable: "25%", statusRep: 13, rss: []rsState{
			{name: "web-old", template: "old", replicas: 8, available: 8, statusRep: 8, desired: 10, maxReplicas: 13, revision: 1, age: time.Hour},
			{name: "web-new", template: "new", replicas: 5, available: 0, statusRep: 5, desired: 10, maxReplicas: 13, revision: 2}}},
			[]string{"scale web-old 8→15", "scale web-new 5→10"}},
		{"10 → 5 mid-rollout", fixture{replicas: 5, surge: "25%", unavailable: "25%", statusRep: 13, rss: []rsState{
			{name: "web-old", template: "old", replicas: 8, available: 8, statusRep: 8, desired: 10, maxReplicas: 13, revision: 1, age: time.Hour},
			{name: "web-new", template: "new", replicas: 5, available: 0, statusRep: 5, desired: 10, maxReplicas: 13, revision: 2}}},
			[]string{"scale web-old 8→4", "scale web-new 5→3"}},
		{"to zero", fixture{replicas: 0, surge: "25%", unavailable: "25%", statusRep: 13, rss: []rsState{
			{name: "web-old", template: "old", replicas: 8, statusRep: 8, desired: 10, maxReplicas: 13, revision: 1, age: time.Hour},
			{name: "web-new", template: "new", replicas: 5, statusRep: 5, desired: 10, maxReplicas: 13, revision: 2}}},
			[]string{"scale web-old 8→0", "scale web-new 5→0"}},
		{"a single active ReplicaSet takes the whole count", fixture{replicas: 7, rss: []rsState{
			{name: "web-new", template: "new", replicas: 4, available: 4, statusRep: 4, desired: 4, revision: 2}}},
			[]string{"scale web-new 4→7"}},
		{"paused: scaling still happens", fixture{replicas: 6, paused: true, rss: []rsState{
			{name: "web-old", template: "old", replicas: 4, available: 4, statusRep: 4, desired: 4, revision: 1}}},
			[]string{"scale web-old 4→6"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, normalize(step(t, tt.f).actions), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("writes (-want +got):\n%s", d)
			}
		})
	}
}

// The revision step comes first in every sync that keeps the Deployment: the new
// ReplicaSet, here one brought back by `kubectl rollout undo`, takes the next revision
// and keeps its former one in revision-history, and the Deployment takes its revision,
// whatever the sync goes on to do.
func TestRevisionStep(t *testing.T) {
	undone := func(desired int32) []rsState {
		return []rsState{
			{name: "web-r1", template: "new", replicas: 3, available: 3, statusRep: 3, desired: desired, revision: 1, age: 2 * time.Hour},
			{name: "web-r2", template: "old", desired: desired, revision: 2, age: time.Hour}}
	}
	tests := []struct {
		name     string
		f        fixture
		deleting bool
		wantN    int // writes of ReplicaSet sizes, besides the revision
	}{
		{"a rolling update", fixture{replicas: 3, rss: undone(0)}, false, 0},
		{"a scaling event", fixture{replicas: 5, rss: undone(3)}, false, 1},
		{"paused", fixture{replicas: 3, paused: true, rss: undone(0)}, false, 0},
		{"being deleted", fixture{replicas: 3, rss: undone(0)}, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, rss, pods := tt.f.build()
			if tt.deleting {
				now := object.NewTime(stepNow)
				d.DeletionTimestamp = &now
			}
			w := newRecordingWriter(rss)
			if err := newRollout(context.Background(), newTestController(t, w, pods), d, rss).run(); err != nil {
				t.Fatal(err)
			}
			got := w.rss["web-r1"].Annotations
			if got[RevisionAnnotation] != "3" || got[RevisionHistoryAnnotation] != "1" {
				t.Errorf("brought back: revision %q, history %q; want 3, 1", got[RevisionAnnotation], got[RevisionHistoryAnnotation])
			}
			if w.revision != "3" {
				t.Errorf("the Deployment's revision %q, want 3", w.revision)
			}
			if len(w.actions) != tt.wantN {
				t.Errorf("writes %v, want %d", w.actions, tt.wantN)
			}
		})
	}
}

// A paused rollout does not progress: a changed template creates nothing.
func TestPausedDoesNotRoll(t *testing.T) {
	w := step(t, fixture{replicas: 3, paused: true, rss: []rsState{{name: "web-old", template: "old", replicas: 3, available: 3, statusRep: 3, revision: 1}}})
	if len(w.actions) != 0 {
		t.Errorf("a paused deployment rolled: %v", w.actions)
	}
	if c := condition(w.status[0].Conditions, condProgressing); c == nil || c.Reason != reasonPaused || c.Status != "Unknown" {
		t.Errorf("Progressing after a pause: %+v", c)
	}
}

func ptr[T any](v T) *T { return &v }

// normalize replaces the computed name of a created ReplicaSet with web-NEW.
func normalize(actions []string) []string {
	var out []string
	for _, a := range actions {
		var name string
		var n int
		if _, err := fmt.Sscanf(a, "create %s %d", &name, &n); err == nil {
			a = fmt.Sprintf("create web-NEW %d", n)
		}
		out = append(out, a)
	}
	return out
}

// A Deployment being deleted gets its status synced and nothing else: no new
// ReplicaSet for a changed template, no scaling.
func TestDeletingDeploymentOnlySyncsStatus(t *testing.T) {
	f := fixture{replicas: 5, rss: []rsState{{name: "web-old", template: "old", replicas: 3, available: 3, statusRep: 3, revision: 1}}}
	d, rss, pods := f.build()
	now := object.NewTime(stepNow)
	d.DeletionTimestamp = &now
	w := newRecordingWriter(rss)
	if err := newRollout(context.Background(), newTestController(t, w, pods), d, rss).run(); err != nil {
		t.Fatal(err)
	}
	if len(w.actions) != 0 {
		t.Errorf("a deployment being deleted was acted on: %v", w.actions)
	}
	if len(w.status) != 1 || w.status[0].Replicas != 3 || w.status[0].ObservedGeneration != 1 {
		t.Errorf("status writes %+v, want one with the ReplicaSets' 3 replicas", w.status)
	}
}

// Time spent paused must not count against progressDeadlineSeconds: resuming sets
// Progressing to DeploymentResumed with a fresh update time, and the rollout that follows
// is measured from there, not from before the pause.
func TestResumeRestartsTheProgressClock(t *testing.T) {
	// Mid-rollout and not moving: the new ReplicaSet has its 2 pods, none available yet.
	f := fixture{replicas: 2, statusRep: 2, rss: []rsState{
		{name: "web-old", template: "old", revision: 1, age: time.Hour},
		{name: "web-new", template: "new", replicas: 2, statusRep: 2, revision: 2}}}
	d, rss, _ := f.build()
	d.Status.UpdatedReplicas = 2
	longAgo := object.NewTime(stepNow.Add(-time.Hour))
	ten := int32(10)
	d.Spec.ProgressDeadlineSeconds = &ten
	d.Status.Conditions = []object.DeploymentCondition{{Type: condProgressing, Status: "Unknown", Reason: reasonPaused,
		Message: "Deployment is paused", LastUpdateTime: longAgo, LastTransitionTime: longAgo}}
	w := newRecordingWriter(rss)
	if err := newRollout(context.Background(), newTestController(t, w, nil), d, rss).run(); err != nil {
		t.Fatal(err)
	}
	if len(w.status) == 0 {
		t.Fatal("no status written")
	}
	first := condition(w.status[0].Conditions, condProgressing)
	if first == nil || first.Reason != reasonResumed || !first.LastUpdateTime.Equal(object.NewTime(stepNow)) {
		t.Fatalf("the resume was not recorded with a fresh time: %+v", first)
	}
	last := condition(w.status[len(w.status)-1].Conditions, condProgressing)
	if last == nil || last.Reason == reasonTimedOut {
		t.Errorf("a rollout resumed an hour after its last progress timed out at once: %+v", last)
	}
}
