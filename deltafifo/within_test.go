package deltafifo

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kinformer/kinformer/indexer"
	"github.com/kinformer/kinformer/object"
)

func nsPod(ns, name, rv string) *object.Pod {
	return &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv}}
}

func inNamespace(ns string) func(*object.Pod) bool {
	return func(p *object.Pod) bool { return p.Namespace == ns }
}

// ReplaceWithin is one item that replaces the part of the cache its scope selects: the
// tombstones are the cached objects in scope that it lacks, the rest of the cache is
// left alone.
func TestReplaceWithin(t *testing.T) {
	cached := []*object.Pod{nsPod("a", "p0", "1"), nsPod("a", "p1", "1"), nsPod("b", "p0", "1")}
	tests := []struct {
		name       string
		scope      string // the namespace it selects
		objs       []*object.Pod
		tombstones []string
		cache      []string // key@rv after it
	}{
		{"drop a part", "a", nil, []string{"a/p0@1", "a/p1@1"}, []string{"b/p0@1"}},
		{"replace a part", "a", []*object.Pod{nsPod("a", "p0", "2"), nsPod("a", "p2", "2")},
			[]string{"a/p1@1"}, []string{"a/p0@2", "a/p2@2", "b/p0@1"}},
		{"add a part", "c", []*object.Pod{nsPod("c", "p0", "2")}, nil, []string{"a/p0@1", "a/p1@1", "b/p0@1", "c/p0@2"}},
		{"an empty part", "c", nil, nil, []string{"a/p0@1", "a/p1@1", "b/p0@1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := New[*object.Pod]()
			cache := indexer.New[*object.Pod]()
			if err := cache.Replace(cached, "1"); err != nil {
				t.Fatal(err)
			}
			f.ReplaceWithin(inNamespace(tt.scope), tt.objs, "2")
			var tombstones []string
			err := f.Pop(context.Background(), func(it *Item[*object.Pod]) error {
				if it.Replace == nil || it.Replace.Scope == nil || it.Replace.Initial {
					return fmt.Errorf("popped %+v, want the relist of a part", it)
				}
				replaced, gone := ReplaceDeltas[*object.Pod](it.Replace, cache)
				if len(replaced) != len(tt.objs) {
					return fmt.Errorf("%d replaced deltas for %d objects", len(replaced), len(tt.objs))
				}
				for _, d := range gone {
					tombstones = append(tombstones, fmt.Sprintf("%s@%s", d.Key, d.Object.ResourceVersion))
				}
				return cache.ReplaceWithin(it.Replace.Scope, it.Replace.Objects, it.Replace.ResourceVersion)
			})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.tombstones, tombstones, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("tombstones (-want +got):\n%s", d)
			}
			var got []string
			for _, k := range cache.ListKeys() {
				p, _ := cache.Get(k)
				got = append(got, k+"@"+p.ResourceVersion)
			}
			if d := cmp.Diff(tt.cache, got); d != "" {
				t.Errorf("the cache (-want +got):\n%s", d)
			}
		})
	}
}

// After the relist of a part, a Delete of a key in it is news again (the part may have
// brought the object back), while the dedup of keys outside it stands; and the relist of
// a part is never the initial population.
func TestReplaceWithinDedupAndSync(t *testing.T) {
	f := New[*object.Pod]()
	f.Delete(nsPod("a", "p0", "1"))
	f.Delete(nsPod("b", "p0", "1"))
	f.ReplaceWithin(inNamespace("a"), []*object.Pod{nsPod("a", "p0", "2")}, "2")
	f.Delete(nsPod("a", "p0", "3"))
	f.Delete(nsPod("b", "p0", "3")) // b/p0's delete is still pending: dropped
	want := []string{"Deleted a/p0@1", "Deleted b/p0@1", "Replace(1)@2", "Deleted a/p0@3"}
	if d := cmp.Diff(want, popAll(t, f)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}

	f = New[*object.Pod]()
	f.ReplaceWithin(inNamespace("a"), []*object.Pod{nsPod("a", "p0", "1")}, "1")
	popAll(t, f)
	if f.HasSynced() {
		t.Error("synced without a Replace")
	}
	f.Replace(nil, "2")
	popAll(t, f)
	if !f.HasSynced() {
		t.Error("the first Replace after the relist of a part was not the initial population")
	}
}
