package replicaset

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

func TestCreatesScalesAndReportsStatus(t *testing.T) {
	e := newEnv(t, envOptions{})
	rs := e.createRS(newRS("web", 5))
	testwait.Eventually(t, 10*time.Second, func() bool {
		st := e.getRS("web").Status
		return len(e.ownedActive(rs)) == 5 && st.Replicas == 5 && st.FullyLabeledReplicas == 5 && st.ObservedGeneration == 1
	}, "%s", testwait.Lazy(func() any {
		return fmt.Sprintf("%d pods, status %+v", len(e.ownedActive(rs)), e.getRS("web").Status)
	}))
	for _, p := range e.ownedActive(rs) {
		ref := object.ControllerRef(&p.ObjectMeta)
		if !strings.HasPrefix(p.Name, "web-") || ref.Name != "web" || ref.Kind != "ReplicaSet" || !*ref.BlockOwnerDeletion {
			t.Errorf("pod %s: name or ControllerRef wrong: %+v", p.Name, ref)
		}
	}

	e.scale("web", 2)
	testwait.Eventually(t, 10*time.Second, func() bool {
		return len(e.ownedActive(rs)) == 2 && e.getRS("web").Status.Replicas == 2
	}, "%d pods", testwait.Lazy(func() any { return len(e.ownedActive(rs)) }))
	if got := e.getRS("web").Status.ObservedGeneration; got != 2 {
		t.Errorf("observedGeneration %d after a scale, want 2", got)
	}

	// A deleted pod is replaced.
	victim := e.ownedActive(rs)[0]
	if err := e.pods.Delete(context.Background(), victim.Name, listwatch.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 10*time.Second, func() bool {
		pods := e.ownedActive(rs)
		return len(pods) == 2 && !strings.Contains(strings.Join(names(pods), ","), victim.Name)
	}, "%v", testwait.Lazy(func() any { return names(e.ownedActive(rs)) }))
	if n := e.count("POST", "/pods"); n != 6 {
		t.Errorf("%d pod creations, want 5 + 1 replacement", n)
	}
	if n := e.count("DELETE", "/pods/"); n != 3+1 {
		t.Errorf("%d pod deletions, want 3 by the controller + 1 by the test", n)
	}
}

// Every field of the template reaches the pod unchanged, including fields this engine
// does not model and fields of API versions not written yet.
func TestTemplatePassesThroughUnchanged(t *testing.T) {
	e := newEnv(t, envOptions{})
	rs := newRS("full", 2)
	rs.Spec.Template.Annotations = map[string]string{"team": "payments"}
	rs.Spec.Template.Spec = object.MustPodSpec(`{
		"containers":[{"name":"app","image":"registry.example/app:v2",
			"resources":{"limits":{"cpu":"500m","memory":"256Mi"},"requests":{"cpu":"100m"}},
			"readinessProbe":{"httpGet":{"path":"/ready","port":8080},"periodSeconds":5},
			"env":[{"name":"POD_IP","valueFrom":{"fieldRef":{"fieldPath":"status.podIP"}}},{"name":"MODE","value":"fast"}],
			"volumeMounts":[{"name":"cache","mountPath":"/cache"}],
			"futureContainerField":{"nested":[1,2,{"x":true}]}}],
		"volumes":[{"name":"cache","emptyDir":{"sizeLimit":"1Gi"}}],
		"tolerations":[{"key":"dedicated","operator":"Equal","value":"web","effect":"NoSchedule"}],
		"terminationGracePeriodSeconds":10,
		"aFieldFromTheFuture":"kept"}`)
	created := e.createRS(rs)
	testwait.Eventually(t, 10*time.Second, func() bool { return len(e.ownedActive(created)) == 2 },
		"%d active pods", testwait.Lazy(func() any { return len(e.ownedActive(created)) }))
	var want any
	if err := jsonRoundTrip(created.Spec.Template.Spec, &want); err != nil {
		t.Fatal(err)
	}
	for _, p := range e.ownedActive(created) {
		b, _ := json.Marshal(p.Spec)
		var got any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("pod %s spec differs from the template (-template +pod):\n%s", p.Name, d)
		}
		if d := cmp.Diff(map[string]string{"team": "payments"}, p.Annotations); d != "" {
			t.Errorf("annotations (-want +got):\n%s", d)
		}
		if d := cmp.Diff(map[string]string{"app": "full", "tier": "web"}, p.Labels); d != "" {
			t.Errorf("labels (-want +got):\n%s", d)
		}
	}
}

func TestClaimsOrphansReleasesAndNeverSteals(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	orphan, err := e.pods.Create(ctx, &object.Pod{ObjectMeta: object.ObjectMeta{Name: "bare", Labels: map[string]string{"app": "web"}}})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	foreign, err := e.pods.Create(ctx, &object.Pod{ObjectMeta: object.ObjectMeta{Name: "foreign", Labels: map[string]string{"app": "web"},
		OwnerReferences: []object.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "other", UID: "other-uid", Controller: &yes}}}})
	if err != nil {
		t.Fatal(err)
	}
	// The orphans are in the controller's cache before the ReplicaSet exists: otherwise
	// its first sync may run before the pod informer shows them, and create pods that the
	// adoption then makes surplus (two informers, no order between them).
	testwait.Eventually(t, 10*time.Second, func() bool {
		_, bare := e.ctrl.podLister.Get("ns/bare")
		_, foreign := e.ctrl.podLister.Get("ns/foreign")
		return bare && foreign
	}, "the orphans never reached the pod cache")
	rs := e.createRS(newRS("web", 3))
	testwait.Eventually(t, 10*time.Second, func() bool { return len(e.ownedActive(rs)) == 3 },
		"%v", testwait.Lazy(func() any { return names(e.ownedActive(rs)) }))
	if !strings.Contains(strings.Join(names(e.ownedActive(rs)), ","), "bare") {
		t.Errorf("the matching orphan was not adopted: %v", names(e.ownedActive(rs)))
	}
	if n := e.count("POST", "/pods"); n != 2+2 {
		t.Errorf("%d pod creations, want 2 by the test + 2 by the controller (the orphan counts)", n)
	}
	if p, _ := e.pods.Get(ctx, "foreign"); p.ResourceVersion != foreign.ResourceVersion {
		t.Errorf("another controller's pod was written to")
	}
	_ = orphan

	// Relabelled out of the selector: released (no ownerReference left) and replaced.
	patch := `{"metadata":{"labels":{"app":"debug"}}}`
	if _, err := e.pods.Patch(ctx, "bare", listwatch.MergePatch, []byte(patch), ""); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 10*time.Second, func() bool {
		p, _ := e.pods.Get(ctx, "bare")
		return len(p.OwnerReferences) == 0 && len(e.ownedActive(rs)) == 3
	}, "%s", testwait.Lazy(func() any {
		p, _ := e.pods.Get(ctx, "bare")
		return fmt.Sprintf("refs %v, owned %v", p.OwnerReferences, names(e.ownedActive(rs)))
	}))
}

// While the pod informer lags the server, syncs keep coming (the ReplicaSet changes), yet
// the controller never creates or deletes more than needed: expectations hold it back
// until the informer has seen its writes.
func TestExpectationsPreventActingOnAStaleCache(t *testing.T) {
	e := newEnv(t, envOptions{podWatchDelay: 150 * time.Millisecond})
	rs := e.createRS(newRS("web", 6))
	// Each change of the ReplicaSet is followed by a sync (run, or skipped as stale)
	// before the next change: the syncs come while the pod informer lags.
	poke := func(rounds int) {
		for i := range rounds {
			before := e.syncsOrSkips()
			e.annotate("web", fmt.Sprint(i))
			testwait.Eventually(t, 10*time.Second, func() bool { return e.syncsOrSkips() > before },
				"no sync after the ReplicaSet changed")
		}
	}
	poke(20)
	testwait.Eventually(t, 20*time.Second, func() bool { return e.getRS("web").Status.Replicas == 6 },
		"status %+v", testwait.Lazy(func() any { return e.getRS("web").Status }))
	if n := e.count("POST", "/pods"); n != 6 {
		t.Errorf("%d pods created for 6 replicas: the controller acted on a stale cache", n)
	}
	e.scale("web", 2)
	poke(20)
	testwait.Eventually(t, 20*time.Second, func() bool { return e.getRS("web").Status.Replicas == 2 },
		"status %+v", testwait.Lazy(func() any { return e.getRS("web").Status }))
	if n := e.count("DELETE", "/pods/"); n != 4 {
		t.Errorf("%d pod deletions for a scale from 6 to 2: a pod was deleted twice", n)
	}
	if got := len(e.ownedActive(rs)); got != 2 {
		t.Errorf("%d active pods, want 2", got)
	}
}

// A refused create (a ResourceQuota) sets ReplicaFailure with the server's message; the
// slow start stops at the first failure; the condition goes once creates succeed.
func TestReplicaFailureCondition(t *testing.T) {
	e := newEnv(t, envOptions{})
	isCreate := func(r *http.Request) bool {
		return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/pods")
	}
	e.sim.Faults().FailRequests(1<<20, http.StatusForbidden, 0, isCreate)
	e.createRS(newRS("web", 4))
	testwait.Eventually(t, 10*time.Second, func() bool {
		c := e.getRS("web").Status.Conditions
		return len(c) == 1 && c[0].Type == "ReplicaFailure" && c[0].Reason == "FailedCreate" && strings.Contains(c[0].Message, "injected failure")
	}, "%+v", testwait.Lazy(func() any { return e.getRS("web").Status.Conditions }))
	syncs := e.count("PATCH", "/replicasets/web/status") // at least the one that set the condition
	if creates := e.count("POST", "/pods"); creates > syncs+2 {
		t.Errorf("%d create calls for about %d syncs: slow start must stop at the first failure", creates, syncs)
	}
	e.sim.Faults().FailRequests(0, 0, 0, nil)
	testwait.Eventually(t, 20*time.Second, func() bool {
		st := e.getRS("web").Status
		return st.Replicas == 4 && len(st.Conditions) == 0
	}, "%+v", testwait.Lazy(func() any { return e.getRS("web").Status }))
}

func TestMinReadySecondsRequeuesForTheTimeLeft(t *testing.T) {
	e := newEnv(t, envOptions{})
	rs := newRS("slow", 2)
	rs.Spec.MinReadySeconds = 2
	created := e.createRS(rs)
	testwait.Eventually(t, 10*time.Second, func() bool { return len(e.ownedActive(created)) == 2 },
		"waiting for 2 active pods")
	readyAt := time.Now().Truncate(time.Second)
	for _, p := range e.ownedActive(created) {
		e.setReady(p, readyAt)
	}
	testwait.Eventually(t, 5*time.Second, func() bool { return e.getRS("slow").Status.ReadyReplicas == 2 },
		"%+v", testwait.Lazy(func() any { return e.getRS("slow").Status }))
	if st := e.getRS("slow").Status; st.AvailableReplicas != 0 && time.Since(readyAt) < 2*time.Second {
		t.Errorf("available %d before minReadySeconds passed", st.AvailableReplicas)
	}
	// Nothing changes on the server after this: only the requeue can make them available.
	testwait.Eventually(t, 6*time.Second, func() bool { return e.getRS("slow").Status.AvailableReplicas == 2 },
		"%+v", testwait.Lazy(func() any { return e.getRS("slow").Status }))
}

// Status is written only when it changed: syncs that change nothing send no request.
func TestStatusWrittenOnlyWhenChanged(t *testing.T) {
	e := newEnv(t, envOptions{noRecorder: true})
	e.createRS(newRS("web", 2))
	// The status with both pods is the last one to write: no kubelet makes them ready,
	// and nothing else changes.
	testwait.Eventually(t, 10*time.Second, func() bool { return e.getRS("web").Status.Replicas == 2 },
		"waiting for 2 replicas")
	before, syncs := e.count("PATCH", "/status"), e.syncs()
	for range 5 {
		e.syncOnce("ns/web")
	}
	if after := e.count("PATCH", "/status"); after != before {
		t.Errorf("%d status writes by syncs that changed nothing", after-before)
	}
	if n := e.syncs() - syncs; n < 5 {
		t.Errorf("%v syncs ran, want at least 5", n)
	}
}

func TestEventsOnTheReplicaSet(t *testing.T) {
	e := newEnv(t, envOptions{})
	rs := e.createRS(newRS("web", 2))
	info, err := e.c.Discover(context.Background(), "events")
	if err != nil {
		t.Fatal(err)
	}
	evs := listwatch.For[*object.Raw](e.c, info, "ns")
	testwait.Eventually(t, 10*time.Second, func() bool {
		l, err := evs.List(context.Background(), listwatch.ListOptions{})
		if err != nil {
			return false
		}
		n := 0
		for _, ev := range l.Items {
			var body struct {
				Reason         string
				InvolvedObject struct{ UID, Kind string }
			}
			b, _ := json.Marshal(ev)
			_ = json.Unmarshal(b, &body)
			if body.Reason == "SuccessfulCreate" && body.InvolvedObject.UID == rs.UID && body.InvolvedObject.Kind == "ReplicaSet" {
				n++
			}
		}
		return n == 2
	}, "no SuccessfulCreate events")
}

// A create the server performed but whose answer was lost must not be replaced by a
// second pod: it stays expected until the informer shows it.
func TestLostCreateAnswersDoNotOvercreate(t *testing.T) {
	e := newEnv(t, envOptions{podWatchDelay: 300 * time.Millisecond})
	e.mu.Lock()
	e.lostAnswers = 3
	e.mu.Unlock()
	rs := e.createRS(newRS("web", 4))
	testwait.Eventually(t, 15*time.Second, func() bool { return e.getRS("web").Status.Replicas == 4 },
		"%+v", testwait.Lazy(func() any { return e.getRS("web").Status }))
	// Settled: every create, answered or not, has been seen, and the caches show the
	// controller's writes. A sync now decides from all four pods: one that believed a
	// lost create was never made would create its surplus pod here.
	testwait.Eventually(t, 15*time.Second, func() bool { return e.ctrl.exp.Satisfied("ns/web") && e.ctrl.written.Len() == 0 },
		"the controller still expects creates or waits for its writes")
	e.syncOnce("ns/web")
	if n := len(e.ownedActive(rs)); n != 4 {
		t.Errorf("%d active pods for 4 replicas", n)
	}
	if n := e.count("DELETE", "/pods/"); n != 0 {
		t.Errorf("%d deletions: surplus pods were created and then removed", n)
	}
}

// jsonRoundTrip decodes the JSON encoding of v into out: a typed value as generic JSON.
func jsonRoundTrip(v, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
