package reflector

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// bookmarkStore logs what it is handed, bookmarks included.
type bookmarkStore struct{ ops []string }

func (s *bookmarkStore) Add(p *object.Pod)    { s.log("add", p) }
func (s *bookmarkStore) Update(p *object.Pod) { s.log("update", p) }
func (s *bookmarkStore) Delete(p *object.Pod) { s.log("delete", p) }
func (s *bookmarkStore) log(op string, p *object.Pod) {
	s.ops = append(s.ops, fmt.Sprintf("%s %s@%s", op, object.Key(p), p.ResourceVersion))
}
func (s *bookmarkStore) Replace([]*object.Pod, string) { s.ops = append(s.ops, "replace") }
func (s *bookmarkStore) Bookmark(rv string)            { s.ops = append(s.ops, "bookmark "+rv) }

func eventOf(t listwatch.EventType, ns, rv string) listwatch.Event[*object.Pod] {
	return listwatch.Event[*object.Pod]{Type: t, Object: &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: ns, Name: "p", ResourceVersion: rv}}}
}

// The watch that resumes from R after a part was listed fresh at F drops the events of
// that part at F or before (a DELETED too), as bookmarks, and applies those of the rest;
// the first event or bookmark past F lifts the filter, and the part's events apply
// again. The watch's position (LastSyncResourceVersion) moves with every event.
func TestWatchDropsThePartListedFreshUntilPastIt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []listwatch.Event[*object.Pod]
		want   []string
	}{{
		name: "an event past F",
		events: []listwatch.Event[*object.Pod]{
			eventOf(listwatch.Modified, "gained", "15"),
			eventOf(listwatch.Modified, "kept", "16"),
			eventOf(listwatch.Deleted, "gained", "17"),
			eventOf(listwatch.Added, "gained", "20"),
			eventOf(listwatch.Added, "kept", "21"),
			eventOf(listwatch.Modified, "gained", "22"),
		},
		want: []string{"bookmark 15", "update kept/p@16", "bookmark 17", "bookmark 20", "add kept/p@21", "update gained/p@22"},
	}, {
		name: "a bookmark at F",
		events: []listwatch.Event[*object.Pod]{
			eventOf(listwatch.Added, "gained", "18"),
			eventOf(listwatch.Bookmark, "", "20"),
			eventOf(listwatch.Modified, "gained", "21"),
		},
		want: []string{"bookmark 18", "bookmark 20", "update gained/p@21"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			store := &bookmarkStore{}
			r := New[*object.Pod](&scriptedSource{}, store, Options{Name: "pods", Clock: clock.NewFake(time.Unix(1000, 0))})
			r.storedGen, r.appliedGen, r.held = 0, 0, spanOf(r.shard.Load().sel)
			r.recordRV("10")
			r.fresh = []freshPart[*object.Pod]{{in: func(p *object.Pod) bool { return p.Namespace == "gained" }, rv: "20"}}
			if got := r.relistRV(); got != "20" {
				t.Errorf("a relist while the filter stands asks for at least %s, want the fresh list's 20", got)
			}
			stream := &scriptStream{events: tc.events, end: io.EOF, closed: make(chan struct{})}
			stream.Close() // it ends once its events are delivered
			res := r.watch(context.Background(), stream, r.shard.Load())
			if res.err != nil {
				t.Fatal(res.err)
			}
			if d := cmp.Diff(tc.want, store.ops); d != "" {
				t.Errorf("the store (-want +got):\n%s", d)
			}
			if len(r.fresh) != 0 {
				t.Errorf("the filter still stands past its list: %+v", r.fresh)
			}
			if last := tc.events[len(tc.events)-1].Object.ResourceVersion; r.LastSyncResourceVersion() != last {
				t.Errorf("resourceVersion %s, want the last event's %s", r.LastSyncResourceVersion(), last)
			}
		})
	}
}
