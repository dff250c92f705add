package apisim_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/apisim"
)

// What a scheduler and a kubelet need from the apiserver: the pods/binding subresource,
// graceful pod deletion, and events.

// fixedNow is the simulator's clock in these tests, so timestamps can be compared exactly.
var fixedNow = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func stamp(d time.Duration) string { return fixedNow.Add(d).Format(time.RFC3339) }

func metaOf(obj map[string]any) map[string]any { m, _ := obj["metadata"].(map[string]any); return m }

func specOf(obj map[string]any) map[string]any { m, _ := obj["spec"].(map[string]any); return m }

func bindingBody(name, node string) string {
	return `{"apiVersion":"v1","kind":"Binding","metadata":{"name":"` + name + `"},"target":{"kind":"Node","name":"` + node + `"}}`
}

func TestBindingAssignsANode(t *testing.T) {
	_, base := start(t, apisim.Options{Now: func() time.Time { return fixedNow }})
	pods := base + "/api/v1/namespaces/ns1/pods"
	_, created := call(t, "POST", pods, "", `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`)
	rv := metaOf(created)["resourceVersion"].(string)
	lines, stop := watchLines(t, pods+"?watch=1&resourceVersion="+rv)
	defer stop()

	code, status := call(t, "POST", pods+"/p/binding", "application/json", bindingBody("p", "fake-node"))
	want := map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Success", "code": 201.0}
	if code != 201 || !cmp.Equal(want, status) {
		t.Fatalf("binding: %d %v, want 201 %v", code, status, want)
	}
	_, pod := call(t, "GET", pods+"/p", "", "")
	if got := specOf(pod)["nodeName"]; got != "fake-node" {
		t.Errorf("spec.nodeName = %v", got)
	}
	if g := metaOf(pod)["generation"]; g != 1.0 {
		t.Errorf("generation = %v, want 1 (binding is not a user's spec change)", g)
	}
	if metaOf(pod)["resourceVersion"] == rv {
		t.Error("binding kept the resourceVersion")
	}
	wantCond := []any{map[string]any{"type": "PodScheduled", "status": "True", "lastProbeTime": nil, "lastTransitionTime": stamp(0)}}
	if d := cmp.Diff(wantCond, pod["status"].(map[string]any)["conditions"]); d != "" {
		t.Errorf("conditions (-want +got):\n%s", d)
	}
	lines.Scan()
	var ev struct {
		Type   string
		Object map[string]any
	}
	if err := json.Unmarshal(lines.Bytes(), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Type != "MODIFIED" || specOf(ev.Object)["nodeName"] != "fake-node" {
		t.Errorf("watch event after binding: %s", lines.Text())
	}
}

func TestBindingRefusals(t *testing.T) {
	_, base := start(t, apisim.Options{})
	pods := base + "/api/v1/namespaces/ns1/pods"
	call(t, "POST", pods, "", `{"metadata":{"name":"bound"},"spec":{"nodeName":"node-a"}}`)
	call(t, "POST", pods, "", `{"metadata":{"name":"free"}}`)
	call(t, "POST", pods, "", `{"metadata":{"name":"gated"},"spec":{"schedulingGates":[{"name":"example.com/wait"}]}}`)
	// A finalizer keeps an unbound pod around after its delete, with a deletionTimestamp.
	call(t, "POST", pods, "", `{"metadata":{"name":"leaving","finalizers":["example.com/hold"]}}`)
	call(t, "DELETE", pods+"/leaving", "", "")
	call(t, "POST", base+"/api/v1/namespaces/ns1/configmaps", "", `{"metadata":{"name":"cm"}}`)

	tests := []struct {
		name, method, url, body string
		code                    int
		message                 string
	}{
		{"already bound", "POST", pods + "/bound/binding", bindingBody("bound", "fake-node"), 409,
			`Operation cannot be fulfilled on pods "bound": pod bound is already assigned to node "node-a"`},
		{"being deleted", "POST", pods + "/leaving/binding", bindingBody("leaving", "fake-node"), 409,
			`Operation cannot be fulfilled on pods "leaving": pod leaving is being deleted, cannot be assigned to a host`},
		{"scheduling gates", "POST", pods + "/gated/binding", bindingBody("gated", "fake-node"), 409,
			`Operation cannot be fulfilled on pods "gated": pod gated has non-empty .spec.schedulingGates`},
		{"missing pod", "POST", pods + "/nope/binding", bindingBody("nope", "fake-node"), 404, `pods "nope" not found`},
		{"uid precondition", "POST", pods + "/free/binding",
			`{"metadata":{"name":"free","uid":"not-the-uid"},"target":{"kind":"Node","name":"n"}}`, 409,
			`Operation cannot be fulfilled on pods "free": Precondition failed: UID in precondition: not-the-uid, UID in object meta: `},
		{"name mismatch", "POST", pods + "/free/binding", bindingBody("other", "fake-node"), 400,
			"name in URL does not match name in Binding object"},
		{"no target", "POST", pods + "/free/binding", `{"metadata":{"name":"free"},"target":{"kind":"Node"}}`, 422,
			`Binding "free" is invalid: target.name: Required value`},
		{"target not a node", "POST", pods + "/free/binding", `{"metadata":{"name":"free"},"target":{"kind":"Pod","name":"x"}}`, 422,
			`Binding "free" is invalid: target.kind: Unsupported value: "Pod": supported values: "Node"`},
		{"get", "GET", pods + "/free/binding", "", 405, "the server does not allow this method on the requested resource"},
		{"not a pod", "POST", base + "/api/v1/namespaces/ns1/configmaps/cm/binding", bindingBody("cm", "n"), 404,
			"the server could not find the requested resource"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, status := call(t, tt.method, tt.url, "", tt.body)
			msg, _ := status["message"].(string)
			if code != tt.code || status["kind"] != "Status" || !strings.HasPrefix(msg, tt.message) {
				t.Errorf("got %d %v, want %d %q", code, status, tt.code, tt.message)
			}
		})
	}
	if _, free := call(t, "GET", pods+"/free", "", ""); specOf(free)["nodeName"] != nil {
		t.Errorf("a refused binding changed the pod: %v", free)
	}
}

func TestGracefulPodDeletion(t *testing.T) {
	type want struct {
		gone              bool
		deletionTimestamp string
		grace             float64
	}
	tests := []struct {
		name   string
		pod    string // the pod's JSON (name "p")
		phase  string // written through /status when set
		delete string // query of the DELETE, after "?"
		body   string // DeleteOptions
		want   want
	}{
		{name: "bound: 30 s by default", pod: `{"spec":{"nodeName":"n"}}`,
			want: want{deletionTimestamp: stamp(30 * time.Second), grace: 30}},
		{name: "bound: the pod's terminationGracePeriodSeconds", pod: `{"spec":{"nodeName":"n","terminationGracePeriodSeconds":5}}`,
			want: want{deletionTimestamp: stamp(5 * time.Second), grace: 5}},
		{name: "bound: gracePeriodSeconds in the body wins", pod: `{"spec":{"nodeName":"n","terminationGracePeriodSeconds":5}}`,
			body: `{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":10}`,
			want: want{deletionTimestamp: stamp(10 * time.Second), grace: 10}},
		{name: "bound: gracePeriodSeconds in the query", pod: `{"spec":{"nodeName":"n"}}`, delete: "gracePeriodSeconds=7",
			want: want{deletionTimestamp: stamp(7 * time.Second), grace: 7}},
		{name: "bound: a negative grace period is 1 s", pod: `{"spec":{"nodeName":"n"}}`, body: `{"gracePeriodSeconds":-3}`,
			want: want{deletionTimestamp: stamp(time.Second), grace: 1}},
		{name: "bound: gracePeriodSeconds 0 in the body", pod: `{"spec":{"nodeName":"n"}}`, body: `{"gracePeriodSeconds":0}`,
			want: want{gone: true}},
		{name: "bound: gracePeriodSeconds 0 in the query", pod: `{"spec":{"nodeName":"n"}}`, delete: "gracePeriodSeconds=0",
			want: want{gone: true}},
		{name: "unbound", pod: `{"spec":{"terminationGracePeriodSeconds":5}}`, body: `{"gracePeriodSeconds":10}`,
			want: want{gone: true}},
		{name: "succeeded", pod: `{"spec":{"nodeName":"n"}}`, phase: "Succeeded", want: want{gone: true}},
		{name: "failed", pod: `{"spec":{"nodeName":"n"}}`, phase: "Failed", want: want{gone: true}},
		{name: "running", pod: `{"spec":{"nodeName":"n"}}`, phase: "Running",
			want: want{deletionTimestamp: stamp(30 * time.Second), grace: 30}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, base := start(t, apisim.Options{Now: func() time.Time { return fixedNow }})
			pods := base + "/api/v1/namespaces/ns1/pods"
			pod := map[string]any{}
			json.Unmarshal([]byte(tt.pod), &pod)
			pod["metadata"] = map[string]any{"name": "p"}
			b, _ := json.Marshal(pod)
			call(t, "POST", pods, "", string(b))
			if tt.phase != "" {
				call(t, "PATCH", pods+"/p/status", "application/merge-patch+json", `{"status":{"phase":"`+tt.phase+`"}}`)
			}
			_, before := call(t, "GET", pods+"/p", "", "")
			u := pods + "/p"
			if tt.delete != "" {
				u += "?" + tt.delete
			}
			code, answer := call(t, "DELETE", u, "application/json", tt.body)
			if code != 200 || answer["kind"] != "Pod" {
				t.Fatalf("delete: %d %v, want 200 and the pod", code, answer)
			}
			code, after := call(t, "GET", pods+"/p", "", "")
			if tt.want.gone {
				if code != 404 {
					t.Errorf("the pod is still there: %v", metaOf(after))
				}
				return
			}
			m := metaOf(after)
			got := want{deletionTimestamp: m["deletionTimestamp"].(string), grace: m["deletionGracePeriodSeconds"].(float64)}
			if d := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{})); d != "" {
				t.Errorf("deletion (-want +got):\n%s", d)
			}
			if d := cmp.Diff(metaOf(after), metaOf(answer)); d != "" {
				t.Errorf("the answer is not the stored pod (-stored +answer):\n%s", d)
			}
			if g := m["generation"]; g != metaOf(before)["generation"].(float64)+1 {
				t.Errorf("generation %v, want one more than %v", g, metaOf(before)["generation"])
			}
		})
	}
}

// TestGracefulDeletionSequence follows one pod from a graceful delete to its removal by a
// kubelet: later deletes may only shorten the grace, writes keep the deletion, and a
// delete with grace 0 (with the kubelet's uid precondition) removes it.
func TestGracefulDeletionSequence(t *testing.T) {
	_, base := start(t, apisim.Options{Now: func() time.Time { return fixedNow }})
	pods := base + "/api/v1/namespaces/ns1/pods"
	_, created := call(t, "POST", pods, "", `{"metadata":{"name":"p"},"spec":{"nodeName":"n"}}`)
	uid := metaOf(created)["uid"].(string)
	lines, stop := watchLines(t, pods+"?watch=1&resourceVersion="+metaOf(created)["resourceVersion"].(string))
	defer stop()

	deletion := func() (string, any, string) {
		t.Helper()
		_, p := call(t, "GET", pods+"/p", "", "")
		m := metaOf(p)
		return m["deletionTimestamp"].(string), m["deletionGracePeriodSeconds"], m["resourceVersion"].(string)
	}
	call(t, "DELETE", pods+"/p", "", "")
	ts, grace, rv := deletion()
	if ts != stamp(30*time.Second) || grace != 30.0 {
		t.Fatalf("first delete: %s %v", ts, grace)
	}
	for _, body := range []string{``, `{"gracePeriodSeconds":30}`, `{"gracePeriodSeconds":60}`} {
		code, answer := call(t, "DELETE", pods+"/p", "application/json", body)
		if code != 200 || metaOf(answer)["resourceVersion"] != rv {
			t.Errorf("delete %q while pending: %d %v, want 200 and the unchanged pod", body, code, metaOf(answer))
		}
	}
	if ts2, grace2, rv2 := deletion(); ts2 != ts || grace2 != grace || rv2 != rv {
		t.Errorf("a longer grace changed the deletion: %s %v rv %s", ts2, grace2, rv2)
	}

	call(t, "DELETE", pods+"/p", "", `{"gracePeriodSeconds":10}`)
	if ts, grace, _ := deletion(); ts != stamp(10*time.Second) || grace != 10.0 {
		t.Errorf("shortened to 10 s: %s %v, want %s 10", ts, grace, stamp(10*time.Second))
	}
	// A kubelet's status write, and a client trying to undo the deletion, keep it.
	call(t, "PATCH", pods+"/p/status", "application/merge-patch+json", `{"status":{"phase":"Running"}}`)
	call(t, "PATCH", pods+"/p", "application/merge-patch+json", `{"metadata":{"deletionTimestamp":null,"deletionGracePeriodSeconds":null,"labels":{"a":"b"}}}`)
	if ts, grace, _ := deletion(); ts != stamp(10*time.Second) || grace != 10.0 {
		t.Errorf("after writes: %s %v", ts, grace)
	}

	code, _ := call(t, "DELETE", pods+"/p", "", `{"gracePeriodSeconds":0,"preconditions":{"uid":"someone-else"}}`)
	if code != 409 {
		t.Errorf("grace 0 with a stale uid: %d, want 409", code)
	}
	code, _ = call(t, "DELETE", pods+"/p", "", `{"gracePeriodSeconds":0,"preconditions":{"uid":"`+uid+`"}}`)
	if code != 200 {
		t.Errorf("grace 0: %d", code)
	}
	if code, _ := call(t, "GET", pods+"/p", "", ""); code != 404 {
		t.Errorf("the pod outlived a delete with grace 0: %d", code)
	}

	var types []string
	for range 5 {
		lines.Scan()
		var ev struct{ Type string }
		json.Unmarshal(lines.Bytes(), &ev)
		types = append(types, ev.Type)
	}
	want := []string{"MODIFIED", "MODIFIED", "MODIFIED", "MODIFIED", "DELETED"} // delete, shorten, status, labels, removal
	if d := cmp.Diff(want, types); d != "" {
		t.Errorf("watch events (-want +got):\n%s", d)
	}
}

func TestGracefulDeletionWithFinalizers(t *testing.T) {
	_, base := start(t, apisim.Options{Now: func() time.Time { return fixedNow }})
	pods := base + "/api/v1/namespaces/ns1/pods"
	exists := func() bool { code, _ := call(t, "GET", pods+"/p", "", ""); return code == 200 }
	call(t, "POST", pods, "", `{"metadata":{"name":"p","finalizers":["example.com/hold"]},"spec":{"nodeName":"n"}}`)
	call(t, "DELETE", pods+"/p", "", "")
	// The finalizer goes while the grace period runs: the kubelet still has to finish.
	call(t, "PATCH", pods+"/p", "application/merge-patch+json", `{"metadata":{"finalizers":null}}`)
	if !exists() {
		t.Fatal("removing the finalizers of a pod in its grace period removed it")
	}
	call(t, "DELETE", pods+"/p", "", `{"gracePeriodSeconds":0}`)
	if exists() {
		t.Error("grace 0 without finalizers left the pod")
	}

	// The other order: grace 0 while a finalizer holds the pod, then the finalizer goes.
	call(t, "POST", pods, "", `{"metadata":{"name":"p","finalizers":["example.com/hold"]},"spec":{"nodeName":"n"}}`)
	call(t, "DELETE", pods+"/p", "", "")
	call(t, "DELETE", pods+"/p", "", `{"gracePeriodSeconds":0}`)
	_, p := call(t, "GET", pods+"/p", "", "")
	if m := metaOf(p); m["deletionGracePeriodSeconds"] != 0.0 || m["deletionTimestamp"] != stamp(0) {
		t.Fatalf("grace 0 under a finalizer: %v", m)
	}
	call(t, "PATCH", pods+"/p", "application/merge-patch+json", `{"metadata":{"finalizers":null}}`)
	if exists() {
		t.Error("the last finalizer of a due deletion left the pod")
	}
}

func TestOtherResourcesAreNotGraceful(t *testing.T) {
	_, base := start(t, apisim.Options{})
	cms := base + "/api/v1/namespaces/ns1/configmaps"
	call(t, "POST", cms, "", `{"metadata":{"name":"c"},"spec":{"nodeName":"n"}}`)
	if code, _ := call(t, "DELETE", cms+"/c", "", `{"gracePeriodSeconds":30}`); code != 200 {
		t.Fatalf("delete: %d", code)
	}
	if code, _ := call(t, "GET", cms+"/c", "", ""); code != 404 {
		t.Error("a configmap was deleted gracefully")
	}
}

func TestEvents(t *testing.T) {
	_, base := start(t, apisim.Options{})
	events := base + "/api/v1/namespaces/ns1/events"
	for _, e := range []string{
		`{"metadata":{"name":"web.1"},"involvedObject":{"kind":"Pod","namespace":"ns1","name":"web","uid":"u1"},"reason":"Scheduled","type":"Normal","source":{"component":"fake-kubelet"},"reportingComponent":"fake-kubelet"}`,
		`{"metadata":{"name":"web.2"},"involvedObject":{"kind":"Pod","namespace":"ns1","name":"web","uid":"u1"},"reason":"BackOff","type":"Warning","source":{"component":"kubelet","host":"fake-node"}}`,
		`{"metadata":{"name":"rs.1"},"involvedObject":{"kind":"ReplicaSet","namespace":"ns1","name":"web","uid":"u2"},"reason":"SuccessfulCreate","type":"Normal","source":{"component":"replicaset-controller"}}`,
	} {
		if code, obj := call(t, "POST", events, "", e); code != 201 || obj["kind"] != "Event" {
			t.Fatalf("create event: %d %v", code, obj)
		}
	}
	tests := []struct {
		selector string
		want     []string
	}{
		{"involvedObject.kind=Pod,involvedObject.name=web,involvedObject.namespace=ns1,involvedObject.uid=u1", []string{"web.1", "web.2"}},
		{"involvedObject.kind=ReplicaSet", []string{"rs.1"}},
		{"type=Warning", []string{"web.2"}},
		{"reason!=BackOff", []string{"rs.1", "web.1"}},
		{"source=kubelet", []string{"web.2"}},
		{"reportingComponent=fake-kubelet", []string{"web.1"}},
		{"involvedObject.uid=nobody", []string{}},
	}
	for _, tt := range tests {
		code, list := call(t, "GET", events+"?fieldSelector="+url.QueryEscape(tt.selector), "", "")
		got := []string{}
		for _, it := range list["items"].([]any) {
			got = append(got, metaOf(it.(map[string]any))["name"].(string))
		}
		if code != 200 || !cmp.Equal(tt.want, got) {
			t.Errorf("%s: %d %v, want %v", tt.selector, code, got, tt.want)
		}
	}
	if code, _ := call(t, "GET", events+"?fieldSelector=involvedObject.color%3Dred", "", ""); code != 400 {
		t.Errorf("unsupported event field: %d, want 400", code)
	}

	lines, stop := watchLines(t, base+"/api/v1/events?watch=1&fieldSelector="+url.QueryEscape("involvedObject.name=db"))
	defer stop()
	call(t, "POST", events, "", `{"metadata":{"name":"other"},"involvedObject":{"kind":"Pod","name":"web"}}`)
	call(t, "POST", events, "", `{"metadata":{"name":"db.1"},"involvedObject":{"kind":"Pod","name":"db"}}`)
	lines.Scan()
	if !strings.Contains(lines.Text(), `"name":"db.1"`) {
		t.Errorf("field-selected watch: %s", lines.Text())
	}

	_, disco := call(t, "GET", base+"/api/v1", "", "")
	found := false
	for _, r := range disco["resources"].([]any) {
		r := r.(map[string]any)
		if r["name"] == "events" {
			found = r["kind"] == "Event" && r["namespaced"] == true && cmp.Equal(r["shortNames"], []any{"ev"})
		}
	}
	if !found {
		t.Errorf("discovery does not list events as kubectl needs them: %v", disco["resources"])
	}
}
