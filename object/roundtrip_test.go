package object

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// roundTrip decodes in into T, encodes it again and reports the difference between the
// two documents as generic JSON (key order carries no meaning).
func roundTrip[T any](t *testing.T, in string) T {
	t.Helper()
	var obj T
	if err := json.Unmarshal([]byte(in), &obj); err != nil {
		t.Fatalf("decode: %v", err)
	}
	out, err := json.Marshal(obj)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	var want, got any
	if err := json.Unmarshal([]byte(in), &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("round trip lost or changed fields (-in +out):\n%s", d)
	}
	return obj
}

const deploymentJSON = `{
 "apiVersion": "apps/v1", "kind": "Deployment",
 "metadata": {"name": "web", "namespace": "default", "uid": "u1", "resourceVersion": "42",
   "generation": 3, "creationTimestamp": "2026-01-02T03:04:05Z", "labels": {"app": "web"},
   "annotations": {"deployment.kubernetes.io/revision": "2"},
   "managedFields": [{"manager": "kubectl", "operation": "Update"}], "futureMeta": {"x": 1}},
 "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
   "template": {"metadata": {"labels": {"app": "web"}},
     "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"limits": {"cpu": "500m"}},
       "readinessProbe": {"httpGet": {"path": "/", "port": 80}}}], "volumes": [{"name": "v", "emptyDir": {}}]}},
   "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
   "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600, "futureSpec": [1, 2.50, "x"]},
 "status": {"observedGeneration": 3, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3,
   "availableReplicas": 3, "conditions": [{"type": "Available", "status": "True",
   "lastUpdateTime": "2026-01-02T03:04:06Z", "lastTransitionTime": "2026-01-02T03:04:06Z",
   "reason": "MinimumReplicasAvailable", "message": "ok", "futureCond": true}]}
}`

func TestDeploymentRoundTripKeepsUnknownFields(t *testing.T) {
	d := roundTrip[Deployment](t, deploymentJSON)
	if got := *d.Spec.Replicas; got != 3 {
		t.Errorf("replicas = %d, want 3", got)
	}
	if got := d.Spec.Strategy.RollingUpdate.MaxSurge.String(); got != "25%" {
		t.Errorf("maxSurge = %q", got)
	}
	if d.Spec.Template.Labels["app"] != "web" || len(d.Spec.Template.Spec.Containers) == 0 {
		t.Errorf("template not decoded: %+v", d.Spec.Template)
	}
	if d.Unknown.Get("futureSpec") != nil {
		t.Errorf("futureSpec belongs to spec, found at top level")
	}
}

func TestRoundTripOtherTypes(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, in string)
		in   string
	}{
		{"pod", func(t *testing.T, in string) { roundTrip[Pod](t, in) },
			`{"metadata":{"name":"p","namespace":"ns","ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"u","controller":true,"blockOwnerDeletion":true}]},
			 "spec":{"nodeName":"n1","containers":[{"name":"c","image":"i"}]},
			 "status":{"phase":"Running","podIP":"10.0.0.1","conditions":[{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-01-02T03:04:05Z"}]}}`},
		{"replicaset", func(t *testing.T, in string) { roundTrip[ReplicaSet](t, in) },
			`{"metadata":{"name":"rs","creationTimestamp":"2026-01-02T03:04:05Z","deletionTimestamp":"2026-01-02T03:04:09Z","finalizers":["x"]},
			 "spec":{"replicas":0,"selector":{"matchExpressions":[{"key":"a","operator":"In","values":["b"]}]},"template":{"metadata":{},"spec":{}}},
			 "status":{"replicas":0,"conditions":[{"type":"ReplicaFailure","status":"True","lastTransitionTime":"2026-01-02T03:04:05Z","reason":"FailedCreate"}]}}`},
		{"raw configmap", func(t *testing.T, in string) { roundTrip[Raw](t, in) },
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","creationTimestamp":"2026-01-02T03:04:05Z"},"data":{"k":"v","big":"\u00e9\n"},"binaryData":{}}`},
		{"numbers keep their text", func(t *testing.T, in string) { roundTrip[Raw](t, in) },
			`{"metadata":{"name":"n"},"spec":{"huge":12345678901234567890,"f":1.000000000000000001}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, tt.in) })
	}
}

func TestRawKeepsNumberText(t *testing.T) {
	in := `{"metadata":{"name":"n","creationTimestamp":null},"spec":{"huge":12345678901234567890}}`
	var r Raw
	if err := json.Unmarshal([]byte(in), &r); err != nil {
		t.Fatal(err)
	}
	if got := string(r.Unknown.Get("spec")); got != `{"huge":12345678901234567890}` {
		t.Errorf("spec = %s", got)
	}
}

func TestDeepCopyIsIndependent(t *testing.T) {
	var d Deployment
	if err := json.Unmarshal([]byte(deploymentJSON), &d); err != nil {
		t.Fatal(err)
	}
	c := DeepCopy(&d)
	c.Labels["app"] = "changed"
	*c.Spec.Replicas = 9
	c.Unknown = Unknown{}
	if d.Labels["app"] != "web" || *d.Spec.Replicas != 3 {
		t.Errorf("changing the copy changed the original: %v %d", d.Labels, *d.Spec.Replicas)
	}
	if diff := cmp.Diff(d.Spec.Template.Spec, c.Spec.Template.Spec); diff != "" {
		t.Errorf("template spec differs:\n%s", diff)
	}
}
