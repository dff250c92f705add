package apisim_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
)

// A kubelet's registration as the simulator must take it: a cluster-scoped Node created
// with its status, heartbeats as merge patches of /status, and a Lease in kube-node-lease
// owned by the Node, collected with it.
func TestNodesAndNodeLeases(t *testing.T) {
	_, url := start(t, apisim.Options{})
	nodes := url + "/api/v1/nodes"
	code, node := call(t, "POST", nodes, "application/json",
		`{"metadata":{"name":"n1","namespace":"ignored","labels":{"kubernetes.io/hostname":"n1"}},"spec":{},`+
			`"status":{"capacity":{"cpu":"4"},"conditions":[{"type":"Ready","status":"True"}]}}`)
	if code != 201 || node["kind"] != "Node" {
		t.Fatalf("create: %d %v", code, node)
	}
	meta := node["metadata"].(map[string]any)
	if _, has := meta["namespace"]; has {
		t.Errorf("a Node has no namespace: %v", meta)
	}
	// Only Nodes keep the status they are created with.
	for _, tt := range []struct{ url, body, want string }{
		{nodes, `{"metadata":{"name":"n2"},"status":{"capacity":{"cpu":"4"}}}`, `{"capacity":{"cpu":"4"}}`},
		{url + "/api/v1/namespaces/ns/pods", `{"metadata":{"name":"p"},"spec":{},"status":{"phase":"Running"}}`, `{"phase":"Pending"}`},
		{url + "/apis/apps/v1/namespaces/ns/replicasets", `{"metadata":{"name":"r"},"spec":{},"status":{"replicas":3}}`, `null`},
	} {
		_, created := call(t, "POST", tt.url, "application/json", tt.body)
		if d := cmp.Diff(decode(t, tt.want), created["status"]); d != "" {
			t.Errorf("POST %s: status (-want +got):\n%s", tt.url, d)
		}
	}

	// A /status merge patch changes the status only; a patch of the Node keeps it.
	if code, got := call(t, "PATCH", nodes+"/n1/status", "application/merge-patch+json",
		`{"metadata":{"labels":{"x":"y"}},"spec":{"unschedulable":true},"status":{"capacity":{"memory":"8Gi"}}}`); code != 200 {
		t.Fatalf("patch status: %d %v", code, got)
	}
	_, node = call(t, "PATCH", nodes+"/n1", "application/merge-patch+json", `{"metadata":{"labels":{"a":"b"}},"status":{"capacity":null}}`)
	want := decode(t, `{"capacity":{"cpu":"4","memory":"8Gi"},"conditions":[{"type":"Ready","status":"True"}]}`)
	if d := cmp.Diff(want, node["status"]); d != "" {
		t.Errorf("status (-want +got):\n%s", d)
	}
	if d := cmp.Diff(decode(t, `{"kubernetes.io/hostname":"n1","a":"b"}`), node["metadata"].(map[string]any)["labels"]); d != "" || node["spec"].(map[string]any)["unschedulable"] != nil {
		t.Errorf("a /status patch changed more than the status: labels (-want +got):\n%s\nspec %v", d, node["spec"])
	}
	if code, got := call(t, "GET", url+"/api/v1/nodes/n1", "", ""); code != 200 || got["metadata"].(map[string]any)["resourceVersion"] != node["metadata"].(map[string]any)["resourceVersion"] {
		t.Errorf("GET node: %d %v", code, got)
	}

	leases := url + "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
	code, lease := call(t, "POST", leases, "application/json",
		`{"metadata":{"name":"n1","ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"n1","uid":"`+meta["uid"].(string)+`"}]},`+
			`"spec":{"holderIdentity":"n1","leaseDurationSeconds":40,"renewTime":"2026-01-01T00:00:00.000000Z"}}`)
	if code != 201 {
		t.Fatalf("create lease: %d %v", code, lease)
	}
	if code, _ := call(t, "DELETE", nodes+"/n1", "", ""); code != 200 {
		t.Fatalf("delete node: %d", code)
	}
	testwait.Eventually(t, 10*time.Second, func() bool {
		code, _ := call(t, "GET", leases+"/n1", "", "")
		return code == 404
	}, "the Lease of a deleted Node was not collected")
}

func decode(t *testing.T, doc string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("%v in %s", err, doc)
	}
	return v
}
