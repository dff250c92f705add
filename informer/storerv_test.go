package informer

import (
	"testing"
	"time"

	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/object"
)

// LastStoreSyncResourceVersion follows what the cache holds: the list, each event, and
// bookmarks, which move it when nothing changed (a controller waiting to read its own
// write must not wait for an unrelated change).
func TestLastStoreSyncResourceVersionFollowsTheCache(t *testing.T) {
	leakcheck.Check(t)
	src := newHandSource(podAt("a", "3", nil))
	inf := mustNew(t, src, Options[*object.Pod]{Name: "pods"})
	if got := inf.LastStoreSyncResourceVersion(); got != "" {
		t.Errorf("before the list: %q", got)
	}
	run(t, inf)
	w := src.stream(t)
	steps := []struct {
		what string
		send func()
		want string
	}{
		{"the list", func() {}, "1"},
		{"an update", func() { w.Modify(podAt("a", "5", nil)) }, "5"},
		{"a bookmark", func() { w.Bookmark(&object.Pod{ObjectMeta: object.ObjectMeta{ResourceVersion: "9"}}) }, "9"},
		{"a delete", func() { w.Delete(podAt("a", "12", nil)) }, "12"},
		{"a delete of an object never seen", func() { w.Delete(podAt("ghost", "14", nil)) }, "14"},
	}
	for _, s := range steps {
		s.send()
		testwait.Eventually(t, 10*time.Second, func() bool { return inf.LastStoreSyncResourceVersion() == s.want },
			"after %s: %q, want %q", s.what, inf.LastStoreSyncResourceVersion(), s.want)
	}
}
