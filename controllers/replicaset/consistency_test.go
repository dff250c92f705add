package replicaset

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/controllers/consistency"
	"github.com/kinformer/kinformer/controllers/expectations"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/object"
)

// holdPods holds back the pod watch events from now on, and releases them when the test
// ends at the latest.
func (e *env) holdPods() (release func()) {
	e.sim.Faults().DelayWatchEvents("pods", time.Hour)
	release = func() { e.sim.Faults().DelayWatchEvents("pods", 0) }
	e.t.Cleanup(release)
	return release
}

// caughtUp waits until the controller has no write left that its caches have not shown:
// a sync found them caught up and dropped the records.
func (e *env) caughtUp() {
	e.t.Helper()
	testwait.Eventually(e.t, 10*time.Second, func() bool { return e.ctrl.written.Len() == 0 },
		"the controller still waits for %d owners' writes", testwait.Lazy(func() any { return e.ctrl.written.Len() }))
}

// The pod informer is held behind the controller's creates for longer than the
// expectations' TTL, as behind a watch cache that lags for minutes: the expectations then
// let a sync act, but the read-your-writes guard still holds it back until the cache has
// shown the creates. No pod is created twice; once the events arrive, the controller
// carries on from what it wrote.
func TestCreatesAreWaitedForBeyondTheExpectationsTTL(t *testing.T) {
	clk := clock.NewFake(time.Now())
	e := newEnv(t, envOptions{now: clk.Now})
	rs := e.createRS(newRS("web", 2))
	testwait.Eventually(t, 10*time.Second, func() bool { return e.getRS("web").Status.Replicas == 2 },
		"%+v", testwait.Lazy(func() any { return e.getRS("web").Status }))

	release := e.holdPods()
	e.scale("web", 5)
	testwait.Eventually(t, 10*time.Second, func() bool { return len(e.ownedActive(rs)) == 5 },
		"%d pods on the server", testwait.Lazy(func() any { return len(e.ownedActive(rs)) }))
	clk.Step(expectations.DefaultTTL + time.Minute) // the expectations give up waiting
	before := e.staleSyncs(resourcePods)
	e.annotate("web", "after-the-ttl")
	testwait.Eventually(t, 10*time.Second, func() bool {
		return e.staleSyncs(resourcePods) > before || e.count("POST", "/pods") > 5
	}, "no sync after the ReplicaSet changed")
	if n := e.count("POST", "/pods"); n != 5 {
		t.Fatalf("%d pods created for 5 replicas: a sync acted on a pod cache without its own creates", n)
	}

	release()
	e.caughtUp()
	e.scale("web", 6)
	testwait.Eventually(t, 10*time.Second, func() bool {
		return len(e.ownedActive(rs)) == 6 && e.getRS("web").Status.Replicas == 6
	}, "%d pods, status %+v", testwait.Lazy(func() any { return len(e.ownedActive(rs)) }),
		testwait.Lazy(func() any { return e.getRS("web").Status }))
	if n := e.count("POST", "/pods"); n != 6 {
		t.Errorf("%d pods created for 6 replicas", n)
	}
	if n := e.count("DELETE", "/pods/"); n != 0 {
		t.Errorf("%d pods deleted: surplus pods were created", n)
	}
}

// An adoption is a patch no expectation covers: a sync that comes before the pod
// informer shows it sees the pod still an orphan, and adopts it again. The guard holds
// that sync back until the adoption is in the cache.
func TestAdoptionIsWaitedFor(t *testing.T) {
	e := newEnv(t, envOptions{})
	if _, err := e.pods.Create(context.Background(), &object.Pod{ObjectMeta: object.ObjectMeta{Name: "bare",
		Labels: map[string]string{"app": "web"}}}); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 10*time.Second, func() bool { _, ok := e.ctrl.podLister.Get("ns/bare"); return ok },
		"the orphan never reached the pod cache")

	release := e.holdPods()
	rs := e.createRS(newRS("web", 1))
	testwait.Eventually(t, 10*time.Second, func() bool { return len(e.ownedActive(rs)) == 1 }, "the orphan was not adopted")
	for i := range 3 {
		before := e.staleSyncs(resourcePods)
		e.annotate("web", fmt.Sprint(i))
		testwait.Eventually(t, 10*time.Second, func() bool {
			return e.staleSyncs(resourcePods) > before || e.count("PATCH", "/pods/bare") > 1
		}, "no sync after the ReplicaSet changed")
	}
	if n := e.count("PATCH", "/pods/bare"); n != 1 {
		t.Fatalf("the orphan was adopted %d times: a sync acted on a pod cache without the adoption", n)
	}

	release()
	e.caughtUp()
	p, ok := e.ctrl.podLister.Get("ns/bare")
	if ref := object.ControllerRef(&p.ObjectMeta); !ok || ref == nil || ref.UID != rs.UID {
		t.Fatalf("the pod cache does not show the adoption: %+v", p)
	}
	if n := e.count("PATCH", "/pods/bare"); n != 1 {
		t.Errorf("the orphan was adopted %d times", n)
	}
	if n := e.count("POST", "/pods"); n != 1 {
		t.Errorf("%d pod creations, want only the test's orphan: the adopted pod counts", n)
	}
}

// Forget, which a sharded controller manager calls for the namespaces it handed away,
// drops the controller's expectations and read-your-writes records there, and keeps the
// others. (No ReplicaSet has these keys: no sync runs for them to record or settle.)
func TestForgetDropsTheRecordsOfNamespacesHandedAway(t *testing.T) {
	e := newEnv(t, envOptions{})
	owner := func(key string) consistency.Owner { return consistency.Owner{Key: key, UID: "uid-" + key} }
	keys := []string{"gone/web", "kept/web"}
	for _, key := range keys {
		e.ctrl.exp.ExpectCreations(key, 1)
		e.ctrl.written.WroteAt(owner(key), resourcePods, "999999") // a write no cache has seen
	}

	e.ctrl.Forget(func(ns string) bool { return ns == "gone" })

	type records struct{ Expectations, Writes bool }
	got := map[string]records{}
	for _, key := range keys {
		got[key] = records{Expectations: !e.ctrl.exp.Satisfied(key), Writes: e.ctrl.written.Ready(owner(key)) != nil}
	}
	want := map[string]records{"gone/web": {}, "kept/web": {Expectations: true, Writes: true}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("records left (-want +got):\n%s", d)
	}
}
