package apisim_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
)

// Cascading deletion: the simulator's garbage collector and the propagation policies of a
// DELETE, seen through HTTP as kubectl and controllers see them.

func atFixedNow() apisim.Options { return apisim.Options{Now: func() time.Time { return fixedNow }} }

// create POSTs body to collection and returns the created object.
func create(t *testing.T, collection, body string) map[string]any {
	t.Helper()
	code, obj := call(t, "POST", collection, "application/json", body)
	if code != 201 {
		t.Fatalf("create in %s: %d %v", collection, code, obj)
	}
	return obj
}

// ownedBy is an ownerReferences entry naming owner, as the ReplicaSet and Deployment
// controllers write them: controller, and blocking the owner's foreground deletion.
func ownedBy(owner map[string]any) string {
	m := metaOf(owner)
	return fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"name":%q,"uid":%q,"controller":true,"blockOwnerDeletion":true}`,
		owner["apiVersion"], owner["kind"], m["name"], m["uid"])
}

// describe sums up an object's place in a deletion.
func describe(obj map[string]any) string {
	m := metaOf(obj)
	switch {
	case m["deletionTimestamp"] != nil && m["deletionGracePeriodSeconds"] != 0.0:
		return fmt.Sprintf("terminating %vs", m["deletionGracePeriodSeconds"])
	case m["deletionTimestamp"] != nil:
		fs, _ := m["finalizers"].([]any)
		return fmt.Sprintf("deleting %v", fs)
	}
	var owners []string
	refs, _ := m["ownerReferences"].([]any)
	for _, r := range refs {
		owners = append(owners, r.(map[string]any)["name"].(string))
	}
	if len(owners) == 0 {
		return "live, no owner"
	}
	return "live, owned by " + strings.Join(owners, ",")
}

// stateOf describes the objects at urls (by label): "gone" or as describe says.
func stateOf(t *testing.T, urls map[string]string) map[string]string {
	t.Helper()
	state := map[string]string{}
	for label, u := range urls {
		code, obj := call(t, "GET", u, "", "")
		switch code {
		case 200:
			state[label] = describe(obj)
		case 404:
			state[label] = "gone"
		default:
			t.Fatalf("GET %s: %d %v", u, code, obj)
		}
	}
	return state
}

// family is what a Deployment controller leaves behind: Deployment web owns the
// ReplicaSets web-a and web-b, which own the pods web-a-1, web-a-2 and web-b-1.
type family struct {
	urls map[string]string         // by label ("replicaset/web-a"): the object's URL
	objs map[string]map[string]any // by label: the object as created
}

// newFamily creates a family in ns; the pods named in bound are on a node, so that
// deleting them is graceful and waits for their kubelet.
func newFamily(t *testing.T, base, ns string, bound ...string) *family {
	t.Helper()
	f := &family{urls: map[string]string{}, objs: map[string]map[string]any{}}
	add := func(label, collection, body string) map[string]any {
		obj := create(t, collection, body)
		f.urls[label] = collection + "/" + metaOf(obj)["name"].(string)
		f.objs[label] = obj
		return obj
	}
	apps, pods := base+"/apis/apps/v1/namespaces/"+ns, base+"/api/v1/namespaces/"+ns+"/pods"
	web := add("deployment/web", apps+"/deployments", `{"metadata":{"name":"web"},"spec":{"replicas":3}}`)
	for _, set := range []struct {
		name string
		pods []string
	}{{"web-a", []string{"web-a-1", "web-a-2"}}, {"web-b", []string{"web-b-1"}}} {
		rs := add("replicaset/"+set.name, apps+"/replicasets",
			fmt.Sprintf(`{"metadata":{"name":%q,"ownerReferences":[%s]}}`, set.name, ownedBy(web)))
		for _, p := range set.pods {
			spec := `{"containers":[{"name":"app","image":"nginx"}]}`
			if slices.Contains(bound, p) {
				spec = `{"nodeName":"fake-node","containers":[{"name":"app","image":"nginx"}]}`
			}
			add("pod/"+p, pods, fmt.Sprintf(`{"metadata":{"name":%q,"ownerReferences":[%s]},"spec":%s}`, p, ownedBy(rs), spec))
		}
	}
	return f
}

func (f *family) state(t *testing.T) map[string]string { t.Helper(); return stateOf(t, f.urls) }

// finishTerminatingPods plays the kubelet: a pod in its grace period is deleted with
// grace 0 and a uid precondition once its containers have stopped.
func (f *family) finishTerminatingPods(t *testing.T) {
	t.Helper()
	for label, state := range f.state(t) {
		if !strings.HasPrefix(state, "terminating") {
			continue
		}
		body := fmt.Sprintf(`{"gracePeriodSeconds":0,"preconditions":{"uid":%q}}`, metaOf(f.objs[label])["uid"])
		if code, obj := call(t, "DELETE", f.urls[label], "application/json", body); code != 200 {
			t.Fatalf("the kubelet's delete of %s: %d %v", label, code, obj)
		}
	}
}

// waitForCollector returns once the collector has done what it had queued before the
// call. Its queue is first in, first out: a cascade queued after that work is done after
// it, so once a two-level cascade started now has finished, so has the earlier work.
func waitForCollector(t *testing.T, base string) {
	t.Helper()
	cms := base + "/api/v1/namespaces/gc-barrier/configmaps"
	owner := create(t, cms, `{"metadata":{"generateName":"owner-"}}`)
	dep := create(t, cms, fmt.Sprintf(`{"metadata":{"generateName":"dep-","ownerReferences":[%s]}}`, ownedBy(owner)))
	call(t, "DELETE", cms+"/"+metaOf(owner)["name"].(string), "", "")
	depURL := cms + "/" + metaOf(dep)["name"].(string)
	testwait.Until(t, 5*time.Second, func() string {
		return cmp.Diff(map[string]string{"dep": "gone"}, stateOf(t, map[string]string{"dep": depURL}))
	}, "the collector's barrier (-want +got)")
}

// TestCascadingDeletion deletes a Deployment with each policy. The pod web-a-1 runs on a
// node: the collector deletes it gracefully and the kubelet finishes it.
func TestCascadingDeletion(t *testing.T) {
	// The states a deletion of the Deployment passes through.
	var (
		// The Deployment and the ReplicaSets are gone, the running pod is in its grace period.
		backgroundWaits = map[string]string{"deployment/web": "gone", "replicaset/web-a": "gone", "replicaset/web-b": "gone",
			"pod/web-a-1": "terminating 30s", "pod/web-a-2": "gone", "pod/web-b-1": "gone"}
		// The Deployment and web-a wait for the running pod.
		foregroundWaits = map[string]string{"deployment/web": "deleting [foregroundDeletion]",
			"replicaset/web-a": "deleting [foregroundDeletion]", "replicaset/web-b": "gone",
			"pod/web-a-1": "terminating 30s", "pod/web-a-2": "gone", "pod/web-b-1": "gone"}
		// Only the Deployment is gone, and the ReplicaSets' references to it.
		orphaned = map[string]string{"deployment/web": "gone",
			"replicaset/web-a": "live, no owner", "replicaset/web-b": "live, no owner",
			"pod/web-a-1": "live, owned by web-a", "pod/web-a-2": "live, owned by web-a", "pod/web-b-1": "live, owned by web-b"}
		allGone = map[string]string{"deployment/web": "gone", "replicaset/web-a": "gone", "replicaset/web-b": "gone",
			"pod/web-a-1": "gone", "pod/web-a-2": "gone", "pod/web-b-1": "gone"}
	)
	marked := func(finalizer string) map[string]any {
		return map[string]any{"finalizers": []any{finalizer}, "deletionTimestamp": stamp(0),
			"deletionGracePeriodSeconds": 0.0, "generation": 2.0}
	}
	tests := []struct {
		name, query, body string
		code              int
		// marked is what the answer's metadata holds when the Deployment stays marked.
		marked map[string]any
		// waiting is the state once the collector is done and before the kubelet
		// finishes the running pod; final is the state after.
		waiting, final map[string]string
	}{
		{name: "background", body: `{"propagationPolicy":"Background"}`, code: 200, waiting: backgroundWaits, final: allGone},
		{name: "no policy is background", code: 200, waiting: backgroundWaits, final: allGone},
		{name: "foreground", body: `{"propagationPolicy":"Foreground"}`, code: 202, marked: marked("foregroundDeletion"),
			waiting: foregroundWaits, final: allGone},
		{name: "foreground in the query", query: "?propagationPolicy=Foreground", code: 202, marked: marked("foregroundDeletion"),
			waiting: foregroundWaits, final: allGone},
		{name: "orphan", body: `{"propagationPolicy":"Orphan"}`, code: 202, marked: marked("orphan"),
			waiting: orphaned, final: orphaned},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, base := start(t, atFixedNow())
			f := newFamily(t, base, "ns1", "web-a-1")

			code, answer := call(t, "DELETE", f.urls["deployment/web"]+tt.query, "application/json", tt.body)
			if code != tt.code {
				t.Fatalf("delete: %d %v, want %d", code, answer, tt.code)
			}
			for k, want := range tt.marked {
				if got := metaOf(answer)[k]; !cmp.Equal(want, got) {
					t.Errorf("the answer's metadata.%s = %v, want %v", k, got, want)
				}
			}
			testwait.Until(t, 5*time.Second, func() string { return cmp.Diff(tt.waiting, f.state(t)) }, "before the kubelet (-want +got)")
			f.finishTerminatingPods(t)
			testwait.Until(t, 5*time.Second, func() string { return cmp.Diff(tt.final, f.state(t)) }, "after the kubelet (-want +got)")
		})
	}
}

// TestOrphanedDependentsAreUntouched checks the dependents an orphaning deletion leaves: the
// only change is the removed ownerReference.
func TestOrphanedDependentsAreUntouched(t *testing.T) {
	_, base := start(t, atFixedNow())
	f := newFamily(t, base, "ns1")
	call(t, "DELETE", f.urls["deployment/web"], "application/json", `{"propagationPolicy":"Orphan"}`)
	testwait.Until(t, 5*time.Second, func() string {
		return cmp.Diff(map[string]string{"deployment/web": "gone"}, stateOf(t, map[string]string{"deployment/web": f.urls["deployment/web"]}))
	}, "the orphaning (-want +got)")
	for label, before := range f.objs {
		if label == "deployment/web" {
			continue
		}
		_, after := call(t, "GET", f.urls[label], "", "")
		want := copyJSON(t, before)
		if strings.HasPrefix(label, "replicaset/") {
			// The one write orphaning makes; the pods are not written at all.
			delete(metaOf(want), "ownerReferences")
			delete(metaOf(want), "resourceVersion")
			delete(metaOf(after), "resourceVersion")
		}
		if d := cmp.Diff(want, after); d != "" {
			t.Errorf("%s (-want +got):\n%s", label, d)
		}
	}
}

func copyJSON(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(v)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// watchEvent is one event of a watch, summed up: type, object name, resourceVersion and
// describe's view of the object.
type watchEvent struct {
	typ, name, state string
	rv               int
}

// readEvents reads n events from a watch, failing the test when they do not come in 5 s.
func readEvents(t *testing.T, lines *bufio.Scanner, n int) []watchEvent {
	t.Helper()
	got := make(chan []watchEvent, 1)
	go func() {
		var evs []watchEvent
		for len(evs) < n && lines.Scan() {
			var ev struct {
				Type   string
				Object map[string]any
			}
			if err := json.Unmarshal(lines.Bytes(), &ev); err != nil {
				break
			}
			m := metaOf(ev.Object)
			rv, _ := strconv.Atoi(m["resourceVersion"].(string))
			evs = append(evs, watchEvent{typ: ev.Type, name: m["name"].(string), state: describe(ev.Object), rv: rv})
		}
		got <- evs
	}()
	select {
	case evs := <-got:
		if len(evs) < n {
			t.Fatalf("the watch ended after %d of %d events: %v", len(evs), n, evs)
		}
		return evs
	case <-time.After(5 * time.Second):
		t.Fatalf("%d watch events did not come in 5 s", n)
		return nil
	}
}

// TestForegroundDeletionWatchOrder watches a foreground deletion as informers see it: the
// owner is MODIFIED (marked, with the foregroundDeletion finalizer) and is DELETED only
// after every dependent; the ReplicaSets, having dependents, go the same way.
func TestForegroundDeletionWatchOrder(t *testing.T) {
	sim, base := start(t, atFixedNow())
	f := newFamily(t, base, "ns1")
	from := "?watch=1&resourceVersion=" + strconv.FormatInt(sim.ResourceVersion(), 10)
	deployments, stop := watchLines(t, base+"/apis/apps/v1/namespaces/ns1/deployments"+from)
	defer stop()
	replicasets, stop := watchLines(t, base+"/apis/apps/v1/namespaces/ns1/replicasets"+from)
	defer stop()
	pods, stop := watchLines(t, base+"/api/v1/namespaces/ns1/pods"+from)
	defer stop()

	call(t, "DELETE", f.urls["deployment/web"], "application/json", `{"propagationPolicy":"Foreground"}`)

	deps := readEvents(t, deployments, 2)
	want := []watchEvent{{typ: "MODIFIED", name: "web", state: "deleting [foregroundDeletion]"}, {typ: "DELETED", name: "web", state: "deleting []"}}
	if d := cmp.Diff(want, deps, cmp.AllowUnexported(watchEvent{}), cmpopts.IgnoreFields(watchEvent{}, "rv")); d != "" {
		t.Errorf("Deployment events (-want +got):\n%s", d)
	}
	sets := readEvents(t, replicasets, 4)
	podEvents := readEvents(t, pods, 3)

	// rv of each event by "TYPE name".
	at := map[string]int{}
	for _, e := range slices.Concat(deps, sets, podEvents) {
		at[e.typ+" "+e.name] = e.rv
	}
	for _, e := range sets {
		if e.typ == "MODIFIED" && e.state != "deleting [foregroundDeletion]" {
			t.Errorf("ReplicaSet %s modified to %q, want marked for a foreground deletion", e.name, e.state)
		}
	}
	for _, e := range podEvents {
		if e.typ != "DELETED" {
			t.Errorf("pod event %s %s, want only deletions (the pods are on no node)", e.typ, e.name)
		}
	}
	// Each "before" event comes before its "after" event.
	for _, order := range [][2]string{
		{"MODIFIED web", "MODIFIED web-a"}, {"MODIFIED web", "MODIFIED web-b"},
		{"MODIFIED web-a", "DELETED web-a-1"}, {"MODIFIED web-a", "DELETED web-a-2"}, {"MODIFIED web-b", "DELETED web-b-1"},
		{"DELETED web-a-1", "DELETED web-a"}, {"DELETED web-a-2", "DELETED web-a"}, {"DELETED web-b-1", "DELETED web-b"},
		{"DELETED web-a", "DELETED web"}, {"DELETED web-b", "DELETED web"},
	} {
		before, ok1 := at[order[0]]
		after, ok2 := at[order[1]]
		if !ok1 || !ok2 || before >= after {
			t.Errorf("%s (rv %d) must come before %s (rv %d)", order[0], before, order[1], after)
		}
	}
}

// TestDependentWithAnotherOwnerSurvives deletes one of two owners: the shared dependent
// only loses the reference to it, and goes with the second.
func TestDependentWithAnotherOwnerSurvives(t *testing.T) {
	for _, policy := range []string{"Background", "Foreground"} {
		t.Run(policy, func(t *testing.T) {
			_, base := start(t, atFixedNow())
			cms := base + "/api/v1/namespaces/ns1/configmaps"
			a := create(t, cms, `{"metadata":{"name":"a"}}`)
			b := create(t, cms, `{"metadata":{"name":"b"}}`)
			create(t, cms, fmt.Sprintf(`{"metadata":{"name":"shared","ownerReferences":[%s,%s]}}`, ownedBy(a), ownedBy(b)))
			urls := map[string]string{"a": cms + "/a", "b": cms + "/b", "shared": cms + "/shared"}

			call(t, "DELETE", cms+"/a", "application/json", `{"propagationPolicy":"`+policy+`"}`)
			testwait.Until(t, 5*time.Second, func() string {
				return cmp.Diff(map[string]string{"a": "gone", "b": "live, no owner", "shared": "live, owned by b"}, stateOf(t, urls))
			}, "after deleting a (-want +got)")
			call(t, "DELETE", cms+"/b", "application/json", `{"propagationPolicy":"`+policy+`"}`)
			testwait.Until(t, 5*time.Second, func() string {
				return cmp.Diff(map[string]string{"a": "gone", "b": "gone", "shared": "gone"}, stateOf(t, urls))
			}, "after deleting b (-want +got)")
		})
	}
}

// TestOwnershipStaysInItsNamespace gives an object in another namespace a reference with
// the owner's uid: deleting the owner takes its own dependent and never touches that one.
func TestOwnershipStaysInItsNamespace(t *testing.T) {
	_, base := start(t, atFixedNow())
	ns1, ns2 := base+"/api/v1/namespaces/ns1/configmaps", base+"/api/v1/namespaces/ns2/configmaps"
	owner := create(t, ns1, `{"metadata":{"name":"owner"}}`)
	create(t, ns1, fmt.Sprintf(`{"metadata":{"name":"mine","ownerReferences":[%s]}}`, ownedBy(owner)))
	theirs := create(t, ns2, fmt.Sprintf(`{"metadata":{"name":"theirs","ownerReferences":[%s]}}`, ownedBy(owner)))

	call(t, "DELETE", ns1+"/owner", "application/json", `{"propagationPolicy":"Background"}`)
	testwait.Until(t, 5*time.Second, func() string {
		return cmp.Diff(map[string]string{"mine": "gone"}, stateOf(t, map[string]string{"mine": ns1 + "/mine"}))
	}, "the cascade in ns1 (-want +got)")
	// A write to it after the owner is gone must not make it look like a late dependent.
	call(t, "PATCH", ns2+"/theirs", "application/merge-patch+json", `{"metadata":{"labels":{"touched":"by-the-test"}}}`)
	waitForCollector(t, base)
	_, after := call(t, "GET", ns2+"/theirs", "", "")
	if d := cmp.Diff(metaOf(theirs)["ownerReferences"], metaOf(after)["ownerReferences"]); d != "" || metaOf(after)["deletionTimestamp"] != nil {
		t.Errorf("the object in ns2 was touched: deletionTimestamp %v, ownerReferences (-before +after):\n%s", metaOf(after)["deletionTimestamp"], d)
	}
}

// TestDependentCreatedAfterItsOwnerIsGone creates a dependent of an owner already deleted,
// as a controller working from a stale cache does: it is collected. A reference to an
// owner the simulator never saw is left alone.
func TestDependentCreatedAfterItsOwnerIsGone(t *testing.T) {
	_, base := start(t, atFixedNow())
	cms := base + "/api/v1/namespaces/ns1/configmaps"
	owner := create(t, cms, `{"metadata":{"name":"owner"}}`)
	call(t, "DELETE", cms+"/owner", "", "")
	create(t, cms, fmt.Sprintf(`{"metadata":{"name":"late","ownerReferences":[%s]}}`, ownedBy(owner)))
	create(t, cms, `{"metadata":{"name":"stranger","ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"never","uid":"never-was"}]}}`)
	testwait.Until(t, 5*time.Second, func() string {
		return cmp.Diff(map[string]string{"late": "gone"}, stateOf(t, map[string]string{"late": cms + "/late"}))
	}, "the late dependent (-want +got)")
	waitForCollector(t, base)
	if got := stateOf(t, map[string]string{"stranger": cms + "/stranger"}); got["stranger"] != "live, owned by never" {
		t.Errorf("the object whose owner never existed: %s", got["stranger"])
	}
}

// TestPropagationPolicyChoice checks how a delete picks its policy: options in the body
// or the query, the deprecated orphanDependents, finalizers the owner already carries,
// the refusals, and events, which take no part in garbage collection.
func TestPropagationPolicyChoice(t *testing.T) {
	tests := []struct {
		name       string
		owner      string // collection path and body of the owner
		ownerBody  string
		query      string
		body       string
		code       int
		message    string // of a refusal
		wantOwner  string
		wantDepend string
	}{
		{name: "Background", body: `{"propagationPolicy":"Background"}`, code: 200, wantOwner: "gone", wantDepend: "gone"},
		{name: "Orphan", body: `{"propagationPolicy":"Orphan"}`, code: 202, wantOwner: "gone", wantDepend: "live, no owner"},
		{name: "Orphan in the query", query: "?propagationPolicy=Orphan", code: 202, wantOwner: "gone", wantDepend: "live, no owner"},
		{name: "orphanDependents true", body: `{"orphanDependents":true}`, code: 202, wantOwner: "gone", wantDepend: "live, no owner"},
		{name: "orphanDependents false", body: `{"orphanDependents":false}`, code: 200, wantOwner: "gone", wantDepend: "gone"},
		{name: "orphanDependents in the query", query: "?orphanDependents=true", code: 202, wantOwner: "gone", wantDepend: "live, no owner"},
		{name: "an orphan finalizer is the owner's default", ownerBody: `{"metadata":{"name":"owner","finalizers":["orphan"]}}`,
			code: 202, wantOwner: "gone", wantDepend: "live, no owner"},
		{name: "a foregroundDeletion finalizer is the owner's default", ownerBody: `{"metadata":{"name":"owner","finalizers":["foregroundDeletion"]}}`,
			code: 202, wantOwner: "gone", wantDepend: "gone"},
		{name: "a policy beats the owner's finalizer", ownerBody: `{"metadata":{"name":"owner","finalizers":["orphan"]}}`,
			body: `{"propagationPolicy":"Background"}`, code: 200, wantOwner: "gone", wantDepend: "gone"},
		{name: "another finalizer keeps the owner", ownerBody: `{"metadata":{"name":"owner","finalizers":["example.com/hold"]}}`,
			body: `{"propagationPolicy":"Orphan"}`, code: 202, wantOwner: "deleting [example.com/hold]", wantDepend: "live, no owner"},
		{name: "events ignore the policy", owner: "/api/v1/namespaces/ns1/events",
			body: `{"propagationPolicy":"Foreground"}`, code: 200, wantOwner: "gone", wantDepend: "gone"},
		{name: "unknown policy", body: `{"propagationPolicy":"Sideways"}`, code: 422,
			message:   `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"`,
			wantOwner: "live, no owner", wantDepend: "live, owned by owner"},
		{name: "policy and orphanDependents", body: `{"propagationPolicy":"Orphan","orphanDependents":true}`, code: 422,
			message:   `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set`,
			wantOwner: "live, no owner", wantDepend: "live, owned by owner"},
		{name: "orphanDependents not a boolean", query: "?orphanDependents=maybe", code: 400,
			message: `invalid orphanDependents "maybe"`, wantOwner: "live, no owner", wantDepend: "live, owned by owner"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, base := start(t, atFixedNow())
			owners, ownerBody := base+"/api/v1/namespaces/ns1/configmaps", `{"metadata":{"name":"owner"}}`
			if tt.owner != "" {
				owners = base + tt.owner
			}
			if tt.ownerBody != "" {
				ownerBody = tt.ownerBody
			}
			owner := create(t, owners, ownerBody)
			cms := base + "/api/v1/namespaces/ns1/configmaps"
			create(t, cms, fmt.Sprintf(`{"metadata":{"name":"dependent","ownerReferences":[%s]}}`, ownedBy(owner)))

			code, answer := call(t, "DELETE", owners+"/owner"+tt.query, "application/json", tt.body)
			if code != tt.code || tt.message != "" && answer["message"] != tt.message {
				t.Fatalf("delete: %d %v, want %d %q", code, answer, tt.code, tt.message)
			}
			want := map[string]string{"owner": tt.wantOwner, "dependent": tt.wantDepend}
			urls := map[string]string{"owner": owners + "/owner", "dependent": cms + "/dependent"}
			testwait.Until(t, 5*time.Second, func() string { return cmp.Diff(want, stateOf(t, urls)) }, "after the delete (-want +got)")
		})
	}
}

// TestCloseStopsTheCollector closes the server in the middle of a large cascade: the
// collector stops (the test's leak check fails otherwise) and leaves the rest undone.
func TestCloseStopsTheCollector(t *testing.T) {
	sim, base := start(t, apisim.Options{})
	cms := base + "/api/v1/namespaces/ns1/configmaps"
	owner := create(t, cms, `{"metadata":{"name":"owner"}}`)
	for i := range 200 {
		create(t, cms, fmt.Sprintf(`{"metadata":{"name":"d%d","ownerReferences":[%s]}}`, i, ownedBy(owner)))
	}
	call(t, "DELETE", cms+"/owner", "", "")
	if err := sim.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestForegroundDeletionOfARunningPod deletes a pod on a node in the foreground: it gets
// its grace period and the foregroundDeletion finalizer; having no dependents, it loses
// the finalizer to the collector at once, and its kubelet finishes it.
func TestForegroundDeletionOfARunningPod(t *testing.T) {
	_, base := start(t, atFixedNow())
	pods := base + "/api/v1/namespaces/ns1/pods"
	pod := create(t, pods, `{"metadata":{"name":"p"},"spec":{"nodeName":"fake-node"}}`)
	code, answer := call(t, "DELETE", pods+"/p", "application/json", `{"propagationPolicy":"Foreground"}`)
	want := map[string]any{"deletionTimestamp": stamp(30 * time.Second), "deletionGracePeriodSeconds": 30.0,
		"finalizers": []any{"foregroundDeletion"}}
	for k, v := range want {
		if got := metaOf(answer)[k]; code != 200 || !cmp.Equal(v, got) {
			t.Errorf("delete: %d, metadata.%s = %v, want 200 and %v", code, k, got, v)
		}
	}
	testwait.Until(t, 5*time.Second, func() string {
		_, p := call(t, "GET", pods+"/p", "", "")
		return cmp.Diff([]any{"terminating 30s", nil}, []any{describe(p), metaOf(p)["finalizers"]})
	}, "the collector's part (-want +got)")
	body := fmt.Sprintf(`{"gracePeriodSeconds":0,"preconditions":{"uid":%q}}`, metaOf(pod)["uid"])
	if code, _ := call(t, "DELETE", pods+"/p", "application/json", body); code != 200 {
		t.Errorf("the kubelet's delete: %d", code)
	}
	if code, _ := call(t, "GET", pods+"/p", "", ""); code != 404 {
		t.Errorf("the pod outlived its kubelet's delete: %d", code)
	}
}

// TestForegroundOwnerWaitsForItsRunningPod holds an owner's foreground deletion on a pod in
// its grace period; a dependent created meanwhile is deleted too, and the owner goes when
// the kubelet has finished the pod.
func TestForegroundOwnerWaitsForItsRunningPod(t *testing.T) {
	_, base := start(t, atFixedNow())
	cms, pods := base+"/api/v1/namespaces/ns1/configmaps", base+"/api/v1/namespaces/ns1/pods"
	owner := create(t, cms, `{"metadata":{"name":"owner"}}`)
	pod := create(t, pods, fmt.Sprintf(`{"metadata":{"name":"p","ownerReferences":[%s]},"spec":{"nodeName":"fake-node"}}`, ownedBy(owner)))
	urls := map[string]string{"owner": cms + "/owner", "late": cms + "/late", "pod": pods + "/p"}

	call(t, "DELETE", cms+"/owner", "application/json", `{"propagationPolicy":"Foreground"}`)
	testwait.Until(t, 5*time.Second, func() string {
		return cmp.Diff(map[string]string{"owner": "deleting [foregroundDeletion]", "late": "gone", "pod": "terminating 30s"}, stateOf(t, urls))
	}, "waiting for the kubelet (-want +got)")
	create(t, cms, fmt.Sprintf(`{"metadata":{"name":"late","ownerReferences":[%s]}}`, ownedBy(owner)))
	testwait.Until(t, 5*time.Second, func() string {
		return cmp.Diff(map[string]string{"owner": "deleting [foregroundDeletion]", "late": "gone", "pod": "terminating 30s"}, stateOf(t, urls))
	}, "the dependent created during the deletion (-want +got)")
	body := fmt.Sprintf(`{"gracePeriodSeconds":0,"preconditions":{"uid":%q}}`, metaOf(pod)["uid"])
	call(t, "DELETE", pods+"/p", "application/json", body)
	testwait.Until(t, 5*time.Second, func() string {
		return cmp.Diff(map[string]string{"owner": "gone", "late": "gone", "pod": "gone"}, stateOf(t, urls))
	}, "after the kubelet (-want +got)")
}
