package indexer

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kinformer/kinformer/object"
)

var errNoOwner = errors.New("no owner label")

// byOwner fails on pods without an "owner" label, as a user's index function may.
func byOwner(p *object.Pod) ([]string, error) {
	o, ok := p.Labels["owner"]
	if !ok {
		return nil, errNoOwner
	}
	return []string{o}, nil
}

// indexState is every index's content, for comparing a store before and after.
func indexState(ix *Indexer[*object.Pod]) map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for _, name := range []string{NamespaceIndex, "app", "owner"} {
		out[name] = map[string][]string{}
		for _, v := range ix.ListIndexFuncValues(name) {
			keys, _ := ix.IndexKeys(name, v)
			out[name][v] = keys
		}
	}
	return out
}

func TestFailedUpdateChangesNothing(t *testing.T) {
	ix := New[*object.Pod]()
	if err := ix.AddIndexers(map[string]IndexFunc[*object.Pod]{"app": byApp, "owner": byOwner}); err != nil {
		t.Fatal(err)
	}
	before := pod("a", "p1", map[string]string{"app": "web", "owner": "alice"})
	if err := ix.Update(before); err != nil {
		t.Fatal(err)
	}
	want := indexState(ix)
	err := ix.Update(pod("a", "p1", map[string]string{"app": "db"})) // no owner: "owner" fails
	var ierr *IndexError
	if !errors.As(err, &ierr) || ierr.Key != "a/p1" || ierr.Index != "owner" || !errors.Is(err, errNoOwner) {
		t.Fatalf("Update = %v, want an IndexError for a/p1 under owner wrapping errNoOwner", err)
	}
	if got, _ := ix.Get("a/p1"); got != before {
		t.Errorf("a failed update replaced the stored object")
	}
	if d := cmp.Diff(want, indexState(ix), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("a failed update changed the indexes (-before +after):\n%s", d)
	}
}

func TestReplaceSkipsObjectsItCannotIndex(t *testing.T) {
	ix := New[*object.Pod]()
	if err := ix.AddIndexers(map[string]IndexFunc[*object.Pod]{"owner": byOwner}); err != nil {
		t.Fatal(err)
	}
	kept := pod("a", "kept", map[string]string{"owner": "alice"})
	if err := ix.Replace([]*object.Pod{kept}, "10"); err != nil {
		t.Fatal(err)
	}
	err := ix.Replace([]*object.Pod{
		pod("a", "kept", nil),                               // fails: keeps its previous state
		pod("a", "new", nil),                                // fails: stays absent
		pod("b", "fine", map[string]string{"owner": "bob"}), // replaced
	}, "20")
	var rerr *ReplaceError
	if !errors.As(err, &rerr) {
		t.Fatalf("Replace = %v, want a ReplaceError", err)
	}
	var failed []string
	for _, f := range rerr.Failed {
		failed = append(failed, f.Key)
	}
	if d := cmp.Diff([]string{"a/kept", "a/new"}, failed); d != "" {
		t.Errorf("failed keys (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"a/kept", "b/fine"}, ix.ListKeys()); d != "" {
		t.Errorf("keys after the Replace (-want +got):\n%s", d)
	}
	if got, _ := ix.Get("a/kept"); got != kept {
		t.Errorf("a/kept is not its previous state")
	}
	want := map[string][]string{"alice": {"a/kept"}, "bob": {"b/fine"}}
	got := indexState(ix)["owner"]
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("owner index (-want +got):\n%s", d)
	}
	if rv := ix.LastStoreSyncResourceVersion(); rv != "20" {
		t.Errorf("LastStoreSyncResourceVersion = %q after a Replace at 20", rv)
	}
}

func TestLastStoreSyncResourceVersion(t *testing.T) {
	ix := New[*object.Pod]()
	at := func(name, rv string) *object.Pod {
		p := pod("a", name, nil)
		p.ResourceVersion = rv
		return p
	}
	steps := []struct {
		name string
		do   func()
		want string
	}{
		{"empty", func() {}, ""},
		{"replace", func() { _ = ix.Replace([]*object.Pod{at("p1", "3")}, "5") }, "5"},
		{"update", func() { _ = ix.Update(at("p2", "7")) }, "7"},
		{"delete carries the deletion's version", func() { ix.Delete(at("p1", "8")) }, "8"},
		{"bookmark", func() { ix.Bookmark("12") }, "12"},
		{"an empty bookmark changes nothing", func() { ix.Bookmark("") }, "12"},
		{"delete by key has no version", func() { ix.DeleteKey("a/p2") }, "12"},
	}
	for _, s := range steps {
		s.do()
		if got := ix.LastStoreSyncResourceVersion(); got != s.want {
			t.Errorf("after %s: %q, want %q", s.name, got, s.want)
		}
	}
}
