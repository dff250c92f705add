package indexer

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/object"
)

func pod(ns, name string, labels map[string]string) *object.Pod {
	return &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
}

func byApp(p *object.Pod) ([]string, error) {
	if a, ok := p.Labels["app"]; ok {
		return []string{a}, nil
	}
	return nil, nil
}

func names(ps []*object.Pod) []string {
	var out []string
	for _, p := range ps {
		out = append(out, object.Key(p))
	}
	return out
}

func TestIndexesFollowUpdatesAndDeletes(t *testing.T) {
	ix := New[*object.Pod]()
	if err := ix.AddIndexers(map[string]IndexFunc[*object.Pod]{"app": byApp}); err != nil {
		t.Fatal(err)
	}
	ix.Add(pod("a", "p1", map[string]string{"app": "web"}))
	ix.Add(pod("a", "p2", map[string]string{"app": "web"}))
	ix.Add(pod("b", "p3", map[string]string{"app": "db"}))
	ix.Update(pod("a", "p2", map[string]string{"app": "db"}))
	ix.Delete(pod("b", "p3", nil))
	tests := []struct {
		index, value string
		want         []string
	}{
		{"app", "web", []string{"a/p1"}},
		{"app", "db", []string{"a/p2"}},
		{NamespaceIndex, "a", []string{"a/p1", "a/p2"}},
		{NamespaceIndex, "b", nil},
	}
	for _, tt := range tests {
		keys, err := ix.IndexKeys(tt.index, tt.value)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tt.want, keys, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("%s=%s (-want +got):\n%s", tt.index, tt.value, d)
		}
		objs, _ := ix.ByIndex(tt.index, tt.value)
		if d := cmp.Diff(tt.want, names(objs), cmpopts.EquateEmpty(), cmpopts.SortSlices(func(a, b string) bool { return a < b })); d != "" {
			t.Errorf("ByIndex %s=%s:\n%s", tt.index, tt.value, d)
		}
	}
	if d := cmp.Diff([]string{"a"}, ix.ListIndexFuncValues(NamespaceIndex)); d != "" {
		t.Errorf("the emptied namespace value must be gone:\n%s", d)
	}
	if _, err := ix.ByIndex("nope", "x"); err == nil {
		t.Error("unknown index must be an error")
	}
	if err := ix.AddIndexers(map[string]IndexFunc[*object.Pod]{"app": byApp}); err == nil {
		t.Error("a duplicate index name must be an error")
	}
}

func TestIndexAddedLateIsBackfilled(t *testing.T) {
	ix := New[*object.Pod]()
	ix.Add(pod("a", "p1", map[string]string{"app": "web"}))
	ix.AddIndexers(map[string]IndexFunc[*object.Pod]{"app": byApp})
	if keys, _ := ix.IndexKeys("app", "web"); !cmp.Equal(keys, []string{"a/p1"}) {
		t.Errorf("backfill: %v", keys)
	}
}

// TestAddIndexersIsAllOrNothing: a failing index function, or a taken name, leaves the
// indexer exactly as it was.
func TestAddIndexersIsAllOrNothing(t *testing.T) {
	failing := func(p *object.Pod) ([]string, error) {
		if p.Name == "bad" {
			return nil, fmt.Errorf("cannot index %s", p.Name)
		}
		return []string{"x"}, nil
	}
	tests := []struct {
		name  string
		funcs map[string]IndexFunc[*object.Pod]
	}{
		{"a function fails on a stored object", map[string]IndexFunc[*object.Pod]{"app": byApp, "failing": failing}},
		{"a name is taken", map[string]IndexFunc[*object.Pod]{"app": byApp, NamespaceIndex: byApp}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix := New[*object.Pod]()
			ix.Add(pod("a", "good", map[string]string{"app": "web"}))
			ix.Add(pod("a", "bad", nil))
			if err := ix.AddIndexers(tt.funcs); err == nil {
				t.Fatal("no error")
			}
			if _, err := ix.ByIndex("app", "web"); err == nil {
				t.Error("index app exists after a failed AddIndexers")
			}
			if d := cmp.Diff([]string{NamespaceIndex}, slices.Sorted(maps.Keys(ix.funcs))); d != "" {
				t.Errorf("indexes (-want +got):\n%s", d)
			}
			if err := ix.AddIndexers(map[string]IndexFunc[*object.Pod]{"app": byApp}); err != nil {
				t.Errorf("the name must still be free: %v", err)
			}
		})
	}
}

func TestReplaceAndNoLeaks(t *testing.T) {
	ix := New[*object.Pod]()
	ix.AddIndexers(map[string]IndexFunc[*object.Pod]{"app": byApp})
	for i := range 1000 {
		ix.Add(pod(fmt.Sprint("ns", i%10), fmt.Sprint("p", i), map[string]string{"app": fmt.Sprint("app", i)}))
	}
	for i := range 1000 {
		ix.DeleteKey(fmt.Sprintf("ns%d/p%d", i%10, i))
	}
	if n := len(ix.indices["app"]) + len(ix.indices[NamespaceIndex]) + len(ix.values["app"]); n != 0 {
		t.Errorf("%d index entries left after deleting everything", n)
	}
	ix.Add(pod("x", "old", map[string]string{"app": "gone"}))
	ix.Replace([]*object.Pod{pod("y", "new", map[string]string{"app": "web"})}, "")
	if d := cmp.Diff([]string{"y/new"}, ix.ListKeys()); d != "" {
		t.Error(d)
	}
	if vals := ix.ListIndexFuncValues("app"); !cmp.Equal(vals, []string{"web"}) {
		t.Errorf("app values after Replace: %v", vals)
	}
}

// TestReplaceIsAtomic: a reader never sees a mix of the old and new content.
func TestReplaceIsAtomic(t *testing.T) {
	leakcheck.Check(t)
	ix := New[*object.Pod]()
	gen := func(tag string) []*object.Pod {
		var ps []*object.Pod
		for i := range 200 {
			ps = append(ps, pod(tag, fmt.Sprint("p", i), nil))
		}
		return ps
	}
	ix.Replace(gen("old"), "")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			ix.Replace(gen([]string{"old", "new"}[i%2]), "")
		}
	}()
	for range 2000 {
		vals := ix.ListIndexFuncValues(NamespaceIndex)
		if len(vals) != 1 {
			t.Fatalf("a reader saw namespaces %v: a half-replaced cache", vals)
		}
	}
	close(stop)
	wg.Wait()
}

// Indexes added while a Replace is building its new content (a relist arriving as a
// controller starts) must index that content too, and must not race with it.
func TestAddIndexersDuringReplace(t *testing.T) {
	leakcheck.Check(t)
	ix := New[*object.Pod]()
	building := make(chan struct{})
	proceed := make(chan struct{})
	var once sync.Once
	slow := func(p *object.Pod) ([]string, error) {
		if p.Name == "block" {
			once.Do(func() { close(building); <-proceed })
		}
		return []string{p.Name}, nil
	}
	if err := ix.AddIndexers(map[string]IndexFunc[*object.Pod]{"slow": slow}); err != nil {
		t.Fatal(err)
	}
	objs := []*object.Pod{
		pod("a", "block", map[string]string{"app": "web"}),
		pod("a", "p1", map[string]string{"app": "web"}),
		pod("b", "p2", map[string]string{"app": "db"}),
	}
	done := make(chan error)
	go func() { done <- ix.Replace(objs, "") }()
	<-building // Replace is between its snapshot of the index functions and its swap
	if err := ix.AddIndexers(map[string]IndexFunc[*object.Pod]{"app": byApp}); err != nil {
		t.Fatal(err)
	}
	close(proceed)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		index, value string
		want         []string
	}{
		{"app", "web", []string{"a/block", "a/p1"}},
		{"app", "db", []string{"b/p2"}},
		{"slow", "p2", []string{"b/p2"}},
		{NamespaceIndex, "a", []string{"a/block", "a/p1"}},
	} {
		keys, err := ix.IndexKeys(tt.index, tt.value)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tt.want, keys); d != "" {
			t.Errorf("%s=%s (-want +got):\n%s", tt.index, tt.value, d)
		}
	}
}

// Every object stored is found, and removed, by its key: also one with no namespace and
// a slash in its name, which the API refuses but a fake may make (the store splits keys
// at their slash), whether stored one at a time or by a Replace.
func TestEveryObjectIsFoundByItsKey(t *testing.T) {
	for _, replace := range []bool{false, true} {
		ix := New[*object.Pod]()
		objs := []*object.Pod{pod("", "node-1", nil), pod("", "a/b", nil), pod("ns", "web", nil), pod("ns", "x/y", nil)}
		if replace {
			if err := ix.Replace(objs, "1"); err != nil {
				t.Fatal(err)
			}
		} else {
			for _, p := range objs {
				if err := ix.Add(p); err != nil {
					t.Fatal(err)
				}
			}
		}
		if ix.Len() != len(objs) {
			t.Fatalf("replace %v: Len %d, want %d", replace, ix.Len(), len(objs))
		}
		for _, p := range objs {
			if got, ok := ix.Get(object.Key(p)); !ok || got != p {
				t.Errorf("replace %v: Get(%q) = %v, %v", replace, object.Key(p), got, ok)
			}
		}
		for _, p := range objs {
			ix.DeleteKey(object.Key(p))
		}
		if ix.Len() != 0 || len(ix.ListKeys()) != 0 {
			t.Errorf("replace %v: after deleting every key: Len %d, keys %q", replace, ix.Len(), ix.ListKeys())
		}
	}
}
