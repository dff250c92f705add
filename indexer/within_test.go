package indexer

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kinformer/kinformer/object"
)

func inNamespace(ns string) func(*object.Pod) bool {
	return func(p *object.Pod) bool { return p.Namespace == ns }
}

var errNoTier = errors.New("no tier")

// byTier fails on pods labelled tier=none.
func byTier(p *object.Pod) ([]string, error) {
	if p.Labels["tier"] == "none" {
		return nil, errNoTier
	}
	return []string{p.Labels["tier"]}, nil
}

// content is the indexer as "key tier" strings, sorted, and its tier index.
func content(ix *Indexer[*object.Pod]) ([]string, map[string][]string) {
	var objs []string
	for _, k := range ix.ListKeys() {
		p, _ := ix.Get(k)
		objs = append(objs, k+" "+p.Labels["tier"])
	}
	index := map[string][]string{}
	for _, v := range ix.ListIndexFuncValues("tier") {
		index[v], _ = ix.IndexKeys("tier", v)
	}
	return objs, index
}

// ReplaceWithin replaces what its scope selects and nothing else, all or nothing per
// object, with the indexes exact.
func TestReplaceWithin(t *testing.T) {
	tier := func(ns, name, tier string) *object.Pod { return pod(ns, name, map[string]string{"tier": tier}) }
	stored := []*object.Pod{tier("a", "p0", "web"), tier("a", "p1", "db"), tier("b", "p0", "web")}
	tests := []struct {
		name   string
		scope  string
		objs   []*object.Pod
		objsAt []string
		index  map[string][]string
		failed []string
	}{
		{"drop a part", "a", nil, []string{"b/p0 web"}, map[string][]string{"web": {"b/p0"}}, nil},
		{"replace a part", "a", []*object.Pod{tier("a", "p1", "web"), tier("a", "p2", "db")},
			[]string{"a/p1 web", "a/p2 db", "b/p0 web"}, map[string][]string{"web": {"a/p1", "b/p0"}, "db": {"a/p2"}}, nil},
		{"add a part", "c", []*object.Pod{tier("c", "p0", "db")},
			[]string{"a/p0 web", "a/p1 db", "b/p0 web", "c/p0 db"}, map[string][]string{"web": {"a/p0", "b/p0"}, "db": {"a/p1", "c/p0"}}, nil},
		{"a failed object keeps its state, a failed new one stays out", "a",
			[]*object.Pod{tier("a", "p0", "none"), tier("a", "p3", "none"), tier("a", "p4", "db")},
			[]string{"a/p0 web", "a/p4 db", "b/p0 web"}, map[string][]string{"web": {"a/p0", "b/p0"}, "db": {"a/p4"}}, []string{"a/p0", "a/p3"}},
		{"a key twice keeps the last", "a", []*object.Pod{tier("a", "p1", "none"), tier("a", "p1", "web")},
			[]string{"a/p1 web", "b/p0 web"}, map[string][]string{"web": {"a/p1", "b/p0"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix := New[*object.Pod]()
			if err := ix.AddIndexers(map[string]IndexFunc[*object.Pod]{"tier": byTier}); err != nil {
				t.Fatal(err)
			}
			if err := ix.Replace(stored, "1"); err != nil {
				t.Fatal(err)
			}
			err := ix.ReplaceWithin(inNamespace(tt.scope), tt.objs, "2")
			var failed []string
			var rerr *ReplaceError
			if errors.As(err, &rerr) {
				for _, f := range rerr.Failed {
					if !errors.Is(f, errNoTier) {
						t.Errorf("failure %v", f)
					}
					failed = append(failed, f.Key)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.failed, failed); d != "" {
				t.Errorf("failed (-want +got):\n%s", d)
			}
			objs, index := content(ix)
			if d := cmp.Diff(tt.objsAt, objs); d != "" {
				t.Errorf("objects (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.index, index, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("tier index (-want +got):\n%s", d)
			}
			if rv := ix.LastStoreSyncResourceVersion(); rv != "2" {
				t.Errorf("resourceVersion %q, want 2", rv)
			}
		})
	}
}

// What changes while ReplaceWithin indexes the new objects, outside the lock, is taken
// into account at the swap: an object stored meanwhile in scope is replaced with the
// rest of the part, one outside scope stays, and an index added meanwhile indexes the
// new objects.
func TestReplaceWithinWhileTheContentChanges(t *testing.T) {
	ix := New[*object.Pod]()
	if err := ix.Replace([]*object.Pod{pod("a", "old", nil)}, "1"); err != nil {
		t.Fatal(err)
	}
	once := false
	gate := func(p *object.Pod) ([]string, error) {
		if p.Name == "new" && !once {
			once = true // the calls below run this function again
			if err := ix.Update(pod("a", "meanwhile", nil)); err != nil {
				return nil, err
			}
			if err := ix.Update(pod("b", "meanwhile", nil)); err != nil {
				return nil, err
			}
			if err := ix.AddIndexers(map[string]IndexFunc[*object.Pod]{"name": func(p *object.Pod) ([]string, error) {
				return []string{p.Name}, nil
			}}); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}
	if err := ix.AddIndexers(map[string]IndexFunc[*object.Pod]{"gate": gate}); err != nil {
		t.Fatal(err)
	}
	if err := ix.ReplaceWithin(inNamespace("a"), []*object.Pod{pod("a", "new", nil)}, "2"); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a/new", "b/meanwhile"}, ix.ListKeys()); d != "" {
		t.Errorf("keys (-want +got):\n%s", d)
	}
	got := map[string][]string{}
	for _, v := range ix.ListIndexFuncValues("name") {
		got[v], _ = ix.IndexKeys("name", v)
	}
	if d := cmp.Diff(map[string][]string{"new": {"a/new"}, "meanwhile": {"b/meanwhile"}}, got); d != "" {
		t.Errorf("the index added meanwhile (-want +got):\n%s", d)
	}
	if keys, _ := ix.IndexKeys(NamespaceIndex, "a"); fmt.Sprint(keys) != "[a/new]" {
		t.Errorf("namespace a holds %v, want [a/new]", keys)
	}
}
