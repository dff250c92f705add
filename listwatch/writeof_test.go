package listwatch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeOf reads the object a request's path names; a Namespace itself is cluster-scoped.
func TestWriteOf(t *testing.T) {
	for _, tt := range []struct {
		path string
		want Write
	}{
		{"/api/v1/namespaces/web/pods/p-1/binding", Write{Namespace: "web", Resource: "pods", Name: "p-1", Subresource: "binding"}},
		{"/apis/apps/v1/namespaces/web/replicasets", Write{Namespace: "web", Resource: "replicasets"}},
		{"/apis/apps/v1/namespaces/web/deployments/d/status", Write{Namespace: "web", Resource: "deployments", Name: "d", Subresource: "status"}},
		{"/api/v1/namespaces/web", Write{Resource: "namespaces", Name: "web"}},
		{"/api/v1/nodes/n-1", Write{Resource: "nodes", Name: "n-1"}},
		{"/apis/authorization.k8s.io/v1/subjectaccessreviews", Write{Resource: "subjectaccessreviews"}},
		{"/healthz", Write{}},
	} {
		got := writeOf("POST", tt.path)
		tt.want.Method, tt.want.Path = "POST", tt.path
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("writeOf(%q) (-want +got):\n%s", tt.path, d)
		}
	}
}
