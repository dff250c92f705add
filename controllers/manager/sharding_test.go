package manager

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
)

// shardedOptions is a member of group "g" with Leases short enough for a test (the
// protocol itself is tested under a fake clock in package shardgroup).
func shardedOptions(c *listwatch.Client, id string) Options {
	return Options{Client: c, Controllers: []string{"replicaset"}, Workers: 2,
		Sharding: &Sharding{Group: "g", ID: id, LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second,
			RetryPeriod: 200 * time.Millisecond}}
}

// cachedNamespaces are the namespaces of the ReplicaSets in the manager's cache.
func cachedNamespaces(t *testing.T, m *Manager) map[string]bool {
	t.Helper()
	inf, err := informer.For[*object.ReplicaSet](context.Background(), m.Factory(), "replicasets.apps", informer.Selectors{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, rs := range inf.Lister().List(object.Everything()) {
		out[rs.Namespace] = true
	}
	return out
}

// Two sharded managers split the namespaces: each caches only those its member acts on,
// every ReplicaSet gets exactly its pods (never one too many, which two writers would
// make), and when one stops (SIGTERM), the other takes its namespaces over and
// reconciles there: a ReplicaSet scaled there gets its pods.
func TestShardedManagersSplitTheNamespaces(t *testing.T) {
	leakcheck.Check(t)
	f := newFixture(t)
	ctx := context.Background()
	rsInfo, _ := f.c.Discover(ctx, "replicasets.apps")
	// Words, not numbered names: names that differ only at their end hash close together
	// and would all land on one member (see package shard).
	names := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"}
	namespaces := len(names)
	rss := func(ns string) *listwatch.Resource[*object.ReplicaSet] {
		return listwatch.For[*object.ReplicaSet](f.c, rsInfo, ns)
	}
	for _, ns := range names {
		replicas := int32(2)
		rs := &object.ReplicaSet{ObjectMeta: object.ObjectMeta{Name: "web"},
			Spec: object.ReplicaSetSpec{Replicas: &replicas, Selector: &object.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: object.PodTemplateSpec{ObjectMeta: object.ObjectMeta{Labels: map[string]string{"app": "web"}},
					Spec: object.MustPodSpec(`{"containers":[{"name":"c","image":"nginx"}]}`)}}}
		if _, err := rss(ns).Create(ctx, rs); err != nil {
			t.Fatal(err)
		}
	}
	a := start(t, shardedOptions(f.c, "a"))
	b := start(t, shardedOptions(f.c, "b"))

	podInfo, _ := f.c.Discover(ctx, "pods")
	allPods := listwatch.For[*object.Pod](f.c, podInfo, "")
	podsIn := func() map[string]int {
		l, err := allPods.List(ctx, listwatch.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n := map[string]int{}
		for _, p := range l.Items {
			n[p.Namespace]++
		}
		return n
	}
	waitPods := func(want func(ns string) int) {
		t.Helper()
		var got map[string]int
		testwait.Eventually(t, 30*time.Second, func() bool {
			got = podsIn()
			for _, ns := range names {
				if got[ns] > want(ns) {
					t.Fatalf("%d pods in %s, more than its ReplicaSet's %d: two writers?", got[ns], ns, want(ns))
				}
				if got[ns] != want(ns) {
					return false
				}
			}
			return true
		}, "pods by namespace: %v", testwait.Lazy(func() any { return got }))
	}
	waitPods(func(string) int { return 2 })

	// Each caches exactly its part (a member that gave namespaces away drops them from
	// its cache soon after, without waiting); together, everything.
	var actsA, actsB shard.Selector
	var split string
	testwait.Eventually(t, 30*time.Second, func() bool {
		var okA, okB bool
		actsA, okA = a.m.Member().Acting()
		actsB, okB = b.m.Member().Acting()
		if !okA || !okB {
			split = fmt.Sprintf("a member acts on nothing: a %v, b %v", okA, okB)
			return false
		}
		n := 0
		for _, tc := range []struct {
			m    *Manager
			acts shard.Selector
		}{{a.m, actsA}, {b.m, actsB}} {
			cached := cachedNamespaces(t, tc.m)
			for ns := range cached {
				if !tc.acts.Matches(ns) {
					split = fmt.Sprintf("namespace %s is cached by a member that does not act on it", ns)
					return false
				}
			}
			n += len(cached)
		}
		split = fmt.Sprintf("%d namespaces cached in all, want %d", n, namespaces)
		return n == namespaces
	}, "the caches never split the namespaces: %v", testwait.Lazy(func() any { return split }))

	// b leaves (SIGTERM): a takes everything over, and acts where b did.
	if err := b.stop(t); err != nil {
		t.Fatalf("b's Run: %v", err)
	}
	var bs string
	for _, ns := range names {
		if actsB.Matches(ns) {
			bs = ns
			break
		}
	}
	testwait.Eventually(t, 30*time.Second, func() bool { return a.m.Member().Acts(bs) }, "a never took %s over", bs)
	rs, err := rss(bs).Get(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"spec":{"replicas":3}}`)
	if _, err := rss(bs).Patch(ctx, rs.Name, listwatch.MergePatch, patch, ""); err != nil {
		t.Fatal(err)
	}
	waitPods(func(ns string) int {
		if ns == bs {
			return 3
		}
		return 2
	})
}

// Two Acquires in a row make the caches hold both parts. The member publishes what it
// acts on after its round, so the second Acquire of a round cannot learn the first one's
// part from it: here the member never runs and its Status says it acts on nothing, as
// it said in that round. (Seen from outside: a member joining a group of three took two
// parts in one round, acted on both and watched only the second.)
func TestAcquiresInARowCacheBothParts(t *testing.T) {
	leakcheck.Check(t)
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m, err := New(ctx, shardedOptions(f.c, "a"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.factory.Shutdown()
	s := m.shards
	s.runCtx = ctx

	rsInfo, _ := f.c.Discover(ctx, "replicasets.apps")
	names := []string{"alpha", "bravo", "charlie", "delta"}
	for _, ns := range names {
		replicas := int32(1)
		rs := &object.ReplicaSet{ObjectMeta: object.ObjectMeta{Name: "web"},
			Spec: object.ReplicaSetSpec{Replicas: &replicas, Selector: &object.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
		if _, err := listwatch.For[*object.ReplicaSet](f.c, rsInfo, ns).Create(ctx, rs); err != nil {
			t.Fatal(err)
		}
	}
	point := func(ns string) shard.Set {
		h := shard.Hash(ns)
		return shard.SetOf(shard.Range{First: h, Last: h})
	}
	first := point("alpha").Union(point("bravo"))
	second := point("charlie")
	for _, part := range []shard.Set{first, second} {
		if err := s.acquire(ctx, part); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]bool{"alpha": true, "bravo": true, "charlie": true}
	testwait.Eventually(t, 10*time.Second, func() bool { return cmp.Equal(cachedNamespaces(t, m), want) },
		"cached namespaces after two Acquires: %v", testwait.Lazy(func() any { return cmp.Diff(want, cachedNamespaces(t, m)) }))

	// A Release drops only its own part.
	if err := s.release(ctx, first); err != nil {
		t.Fatal(err)
	}
	want = map[string]bool{"charlie": true}
	testwait.Eventually(t, 10*time.Second, func() bool { return cmp.Equal(cachedNamespaces(t, m), want) },
		"cached namespaces after releasing the first part: %v", testwait.Lazy(func() any { return cmp.Diff(want, cachedNamespaces(t, m)) }))
}
