package listwatch_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/simtest"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

func pods(t *testing.T, c *listwatch.Client, ns string) *listwatch.Resource[*object.Pod] {
	t.Helper()
	info, err := c.Discover(testwait.Context(t, 20*time.Second), "pods")
	if err != nil {
		t.Fatal(err)
	}
	return listwatch.For[*object.Pod](c, info, ns)
}

func newPod(name string, labels map[string]string) *object.Pod {
	return &object.Pod{ObjectMeta: object.ObjectMeta{Name: name, Labels: labels}}
}

func mustCreate(t *testing.T, r *listwatch.Resource[*object.Pod], name string, labels map[string]string) *object.Pod {
	t.Helper()
	p, err := r.Create(testwait.Context(t, 20*time.Second), newPod(name, labels))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// next reads one event or fails the test.
func next[T any](t *testing.T, w listwatch.Stream[T]) listwatch.Event[T] {
	t.Helper()
	ev, err := w.Next()
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	return ev
}

func TestDiscoveryResolvesNames(t *testing.T) {
	sim, c := simtest.Start(t, apisim.Options{})
	sim.Register(apisim.ResourceType{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true})
	tests := []struct {
		name string
		want listwatch.GroupVersionResource
	}{
		{"pods", listwatch.GroupVersionResource{Version: "v1", Resource: "pods"}},
		{"po", listwatch.GroupVersionResource{Version: "v1", Resource: "pods"}},
		{"Pod", listwatch.GroupVersionResource{Version: "v1", Resource: "pods"}},
		{"deployments.apps", listwatch.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}},
		{"deployments.v1.apps", listwatch.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}},
		{"deploy", listwatch.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}},
		{"widgets.example.com", listwatch.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}},
	}
	for _, tt := range tests {
		info, err := c.Discover(testwait.Context(t, 20*time.Second), tt.name)
		if err != nil || info.GroupVersionResource != tt.want {
			t.Errorf("Discover(%q) = %+v, %v; want %+v", tt.name, info.GroupVersionResource, err, tt.want)
		}
	}
	if _, err := c.Discover(testwait.Context(t, 20*time.Second), "gadgets"); !errors.Is(err, listwatch.ErrUnknownResource) {
		t.Errorf("unknown resource: error = %v", err)
	}
	// A type registered after the first discovery is found by the refresh.
	sim.Register(apisim.ResourceType{Group: "example.com", Version: "v1", Resource: "gadgets", Kind: "Gadget"})
	if info, err := c.Discover(testwait.Context(t, 20*time.Second), "gadgets"); err != nil || info.Namespaced {
		t.Errorf("late resource: %+v, %v", info, err)
	}
}

func TestCRUDAndConflicts(t *testing.T) {
	_, c := simtest.Start(t, apisim.Options{})
	ctx := testwait.Context(t, 20*time.Second)
	r := pods(t, c, "default")
	p := mustCreate(t, r, "a", map[string]string{"app": "web"})
	if p.UID == "" || p.ResourceVersion == "" || p.Namespace != "default" || p.Status.Phase != object.PodPending {
		t.Fatalf("create did not fill server fields: %+v", p.ObjectMeta)
	}
	if _, err := r.Create(ctx, newPod("a", nil)); !object.IsAlreadyExists(err) {
		t.Errorf("second create: %v", err)
	}
	stale := object.DeepCopy(p)
	p.Labels["tier"] = "front"
	updated, err := r.Update(ctx, p)
	if err != nil || updated.ResourceVersion == p.ResourceVersion {
		t.Fatalf("update: %v", err)
	}
	stale.Labels["x"] = "y"
	if _, err := r.Update(ctx, stale); !object.IsConflict(err) {
		t.Errorf("stale update: error = %v, want Conflict", err)
	}
	// A merge patch with a stale resourceVersion precondition conflicts too.
	patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q,"labels":{"x":"z"}}}`, stale.ResourceVersion)
	if _, err := r.Patch(ctx, "a", listwatch.MergePatch, []byte(patch), ""); !object.IsConflict(err) {
		t.Errorf("stale patch: error = %v", err)
	}
	// Status writes go through /status only.
	st, err := r.Patch(ctx, "a", listwatch.MergePatch, []byte(`{"status":{"phase":"Running"}}`), "status")
	if err != nil || st.Status.Phase != object.PodRunning {
		t.Fatalf("status patch: %v %v", err, st.Status.Phase)
	}
	main, err := r.Patch(ctx, "a", listwatch.MergePatch, []byte(`{"status":{"phase":"Failed"}}`), "")
	if err != nil || main.Status.Phase != object.PodRunning {
		t.Errorf("main-resource patch changed status: %v %v", err, main.Status.Phase)
	}
	err = r.Delete(ctx, "a", listwatch.DeleteOptions{Preconditions: &listwatch.Preconditions{UID: "wrong"}})
	if !object.IsConflict(err) {
		t.Errorf("delete with wrong uid: %v", err)
	}
	if err := r.Delete(ctx, "a", listwatch.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get(ctx, "a"); !object.IsNotFound(err) {
		t.Errorf("get after delete: %v", err)
	}
}

func TestGenerationGrowsOnSpecChangeOnly(t *testing.T) {
	_, c := simtest.Start(t, apisim.Options{})
	ctx := testwait.Context(t, 20*time.Second)
	info, _ := c.Discover(ctx, "deployments.apps")
	d := listwatch.For[*object.Deployment](c, info, "default")
	obj, err := d.Create(ctx, &object.Deployment{ObjectMeta: object.ObjectMeta{Name: "web"}})
	if err != nil || obj.Generation != 1 {
		t.Fatalf("create: %v, generation %d", err, obj.Generation)
	}
	obj, _ = d.Patch(ctx, "web", listwatch.MergePatch, []byte(`{"metadata":{"labels":{"a":"b"}}}`), "")
	if obj.Generation != 1 {
		t.Errorf("label change bumped generation to %d", obj.Generation)
	}
	obj, _ = d.Patch(ctx, "web", listwatch.MergePatch, []byte(`{"spec":{"replicas":3}}`), "")
	if obj.Generation != 2 || *obj.Spec.Replicas != 3 {
		t.Errorf("spec change: generation %d", obj.Generation)
	}
}

func TestListPaginationAndExpiredContinue(t *testing.T) {
	sim, c := simtest.Start(t, apisim.Options{})
	ctx := testwait.Context(t, 20*time.Second)
	r := pods(t, c, "default")
	for i := range 25 {
		mustCreate(t, r, fmt.Sprintf("p%02d", i), map[string]string{"even": fmt.Sprint(i%2 == 0)})
	}
	var names []string
	pages := 0
	rv, err := r.ListAll(ctx, listwatch.ListOptions{Limit: 10}, func(l *object.List[*object.Pod]) error {
		pages++
		for _, p := range l.Items {
			names = append(names, p.Name)
		}
		return nil
	})
	if err != nil || pages != 3 || len(names) != 25 || rv == "" {
		t.Fatalf("ListAll: %d pages, %d items, rv %q, %v", pages, len(names), rv, err)
	}
	// Pages serve the snapshot of the first page: a create in between does not show.
	first, _ := r.List(ctx, listwatch.ListOptions{Limit: 10, LabelSelector: "even=true"})
	if first.RemainingItemCount == nil || *first.RemainingItemCount != 3 {
		t.Errorf("remainingItemCount = %v", first.RemainingItemCount)
	}
	mustCreate(t, r, "p99", map[string]string{"even": "true"})
	rest, err := r.List(ctx, listwatch.ListOptions{Limit: 10, Continue: first.Continue, LabelSelector: "even=true"})
	if err != nil || len(rest.Items) != 3 || rest.ResourceVersion != first.ResourceVersion {
		t.Fatalf("continue: %v items=%d rv=%s want %s", err, len(rest.Items), rest.ResourceVersion, first.ResourceVersion)
	}
	// After compaction the token is too old.
	second, _ := r.List(ctx, listwatch.ListOptions{Limit: 10})
	mustCreate(t, r, "p98", nil)
	sim.Compact()
	if _, err := r.List(ctx, listwatch.ListOptions{Limit: 10, Continue: second.Continue}); !object.IsGone(err) {
		t.Errorf("continue after compaction: %v, want 410", err)
	}
	if _, err := r.List(ctx, listwatch.ListOptions{ResourceVersion: second.ResourceVersion, ResourceVersionMatch: "Exact"}); !object.IsGone(err) {
		t.Errorf("exact list at a compacted revision: %v, want 410", err)
	}
}

func TestWatchEventsAndSelectors(t *testing.T) {
	for _, ws := range []bool{false, true} {
		t.Run(fmt.Sprintf("websocket=%v", ws), func(t *testing.T) {
			_, c := simtest.Start(t, apisim.Options{})
			ctx := testwait.Context(t, 20*time.Second)
			r := pods(t, c, "default")
			list, _ := r.List(ctx, listwatch.ListOptions{})
			w, err := r.Watch(ctx, listwatch.WatchOptions{ResourceVersion: list.ResourceVersion, LabelSelector: "app=web", WebSocket: ws})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			mustCreate(t, r, "a", map[string]string{"app": "web"})
			mustCreate(t, r, "other", map[string]string{"app": "db"})
			_, _ = r.Patch(ctx, "a", listwatch.MergePatch, []byte(`{"metadata":{"annotations":{"x":"1"}}}`), "")
			_, _ = r.Patch(ctx, "a", listwatch.MergePatch, []byte(`{"metadata":{"labels":{"app":"api"}}}`), "")
			_, _ = r.Patch(ctx, "other", listwatch.MergePatch, []byte(`{"metadata":{"labels":{"app":"web"}}}`), "")
			_ = r.Delete(ctx, "other", listwatch.DeleteOptions{})
			want := []string{"ADDED a", "MODIFIED a", "DELETED a", "ADDED other", "DELETED other"}
			for _, wnt := range want {
				ev := next(t, w)
				if got := string(ev.Type) + " " + ev.Object.Name; got != wnt {
					t.Fatalf("event %q, want %q", got, wnt)
				}
			}
		})
	}
}

func TestWatchResumeBookmarksAndExpiry(t *testing.T) {
	sim, c := simtest.Start(t, apisim.Options{BookmarkInterval: 50 * time.Millisecond})
	ctx := testwait.Context(t, 20*time.Second)
	r := pods(t, c, "default")
	a := mustCreate(t, r, "a", nil)
	mustCreate(t, r, "b", nil)
	// Resuming from a's revision replays what came after it.
	w, err := r.Watch(ctx, listwatch.WatchOptions{ResourceVersion: a.ResourceVersion, AllowBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	if ev := next(t, w); ev.Type != listwatch.Added || ev.Object.Name != "b" {
		t.Fatalf("replay: %v %s", ev.Type, ev.Object.Name)
	}
	ev := next(t, w)
	if ev.Type != listwatch.Bookmark || ev.Object.ResourceVersion == "" {
		t.Fatalf("want a bookmark, got %v", ev.Type)
	}
	w.Close()
	if _, err := w.Next(); err == nil {
		t.Error("Next after Close must fail")
	}
	sim.Compact()
	mustCreate(t, r, "c", nil)
	w, err = r.Watch(ctx, listwatch.WatchOptions{ResourceVersion: a.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Next(); !object.IsGone(err) {
		t.Errorf("watch from a compacted revision: %v, want 410", err)
	}
}

func TestStreamingList(t *testing.T) {
	sim, c := simtest.Start(t, apisim.Options{})
	ctx := testwait.Context(t, 20*time.Second)
	r := pods(t, c, "default")
	for _, n := range []string{"a", "b", "c"} {
		mustCreate(t, r, n, nil)
	}
	opts := listwatch.WatchOptions{SendInitialEvents: true, AllowBookmarks: true, ResourceVersionMatch: "NotOlderThan"}
	w, err := r.Watch(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var got []string
	for {
		ev := next(t, w)
		if ev.Type == listwatch.Bookmark {
			if ev.Object.Annotations[listwatch.InitialEventsEndAnnotation] != "true" {
				t.Fatalf("first bookmark lacks the initial-events-end annotation")
			}
			if ev.Object.ResourceVersion != fmt.Sprint(sim.ResourceVersion()) {
				t.Errorf("end bookmark rv %s, want %d", ev.Object.ResourceVersion, sim.ResourceVersion())
			}
			break
		}
		got = append(got, string(ev.Type)+" "+ev.Object.Name)
	}
	if fmt.Sprint(got) != "[ADDED a ADDED b ADDED c]" {
		t.Errorf("initial events %v", got)
	}
	sim.Faults().RefuseStreamingList(true)
	if _, err := r.Watch(ctx, opts); !object.IsInvalid(err) {
		t.Errorf("refused streaming list: %v, want 422", err)
	}
}

func TestRetriesTooManyRequests(t *testing.T) {
	sim, c := simtest.Start(t, apisim.Options{})
	r := pods(t, c, "default")
	sim.Faults().FailRequests(2, http.StatusTooManyRequests, 0, nil)
	start := time.Now()
	if _, err := r.List(testwait.Context(t, 20*time.Second), listwatch.ListOptions{}); err != nil {
		t.Fatalf("list after two 429s: %v", err)
	}
	if d := time.Since(start); d < 2*time.Second {
		t.Errorf("retried after %v; the server asked for 1 s each time", d)
	}
	sim.Faults().FailRequests(1, http.StatusInternalServerError, 0, nil)
	if _, err := r.List(testwait.Context(t, 20*time.Second), listwatch.ListOptions{}); object.CodeOf(err) != 500 {
		t.Errorf("500 without Retry-After is not retried: %v", err)
	}
}

func TestWatchStreamFaults(t *testing.T) {
	tests := []struct {
		name   string
		inject func(f *apisim.Faults)
		check  func(error) bool
	}{
		{"clean cut", func(f *apisim.Faults) { f.CutWatches(1, false) }, func(err error) bool { return err == io.EOF }},
		// An aborted connection is an error, never mistaken for the clean end.
		{"abrupt cut", func(f *apisim.Faults) { f.CutWatches(1, true) }, func(err error) bool { return err != io.EOF }},
		{"malformed frame", func(f *apisim.Faults) { f.InjectMalformedFrames(1) }, func(err error) bool {
			var fe *listwatch.FrameError
			return errors.As(err, &fe)
		}},
		{"unknown event", func(f *apisim.Faults) { f.InjectUnknownEvents(1) }, func(err error) bool {
			var ue *listwatch.UnknownEventError
			return errors.As(err, &ue) && ue.Type == "SURPRISE"
		}},
		{"stalled stream", func(f *apisim.Faults) { f.StallWatches(true) }, func(err error) bool { return errors.Is(err, listwatch.ErrIdleTimeout) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim, c := simtest.Start(t, apisim.Options{})
			r := pods(t, c, "default")
			w, err := r.Watch(testwait.Context(t, 20*time.Second), listwatch.WatchOptions{IdleTimeout: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			tt.inject(sim.Faults())
			mustCreate(t, r, "a", nil)
			mustCreate(t, r, "b", nil)
			var evErr error
			for range 3 {
				if _, evErr = w.Next(); evErr != nil {
					break
				}
			}
			if evErr == nil || !tt.check(evErr) {
				t.Fatalf("stream error = %v (%T)", evErr, evErr)
			}
			if _, again := w.Next(); again == nil {
				t.Error("the stream must stay ended")
			}
		})
	}
}

func TestForbiddenAndUnauthorized(t *testing.T) {
	sim, c := simtest.Start(t, apisim.Options{Token: "s3cret"})
	r := pods(t, c, "default")
	sim.Faults().Forbid("pods", true)
	if _, err := r.List(testwait.Context(t, 20*time.Second), listwatch.ListOptions{}); !object.IsForbidden(err) {
		t.Errorf("forbidden list: %v", err)
	}
	if _, err := r.Watch(testwait.Context(t, 20*time.Second), listwatch.WatchOptions{WebSocket: true}); !object.IsForbidden(err) {
		t.Errorf("forbidden websocket watch: %v", err)
	}
	bad, err := listwatch.New(&listwatch.Config{Host: c.Config().Host, BearerToken: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	defer bad.CloseIdleConnections()
	if _, err := bad.Discover(testwait.Context(t, 20*time.Second), "pods"); !object.IsUnauthorized(err) {
		t.Errorf("wrong token: %v", err)
	}
}

func TestDelayRespectsContext(t *testing.T) {
	sim, c := simtest.Start(t, apisim.Options{})
	r := pods(t, c, "default")
	sim.Faults().Delay(5 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := r.List(ctx, listwatch.ListOptions{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("delayed list: %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Error("the client did not give up at its deadline")
	}
	sim.Faults().Delay(0)
}
