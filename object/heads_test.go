package object

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/internal/codec"
)

// The conditions, containers and container statuses of the pods of one cache hold
// what they have alike once; each pod keeps its own times, IDs, states and mounts. A pod
// decoded without the cache's table holds parts of its own.
func TestPodsOfACacheShareTheirHeads(t *testing.T) {
	const text = `{"metadata":{"name":%q},
	  "spec":{"containers":[{"name":"web","image":"web:1","volumeMounts":[{"name":"kube-api-access-%s","mountPath":"/var/run"}]}]},
	  "status":{"conditions":[{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-27T10:00:0%sZ"}],
	    "containerStatuses":[{"name":"web","ready":true,"restartCount":%s,"image":"web:1","containerID":"containerd://%s","state":{"running":{"startedAt":"2026-11-27T10:00:00Z"}},"lastState":{}}]}}`
	decode := func(name, n string, opts DecodeOptions) *Pod {
		t.Helper()
		p, err := codec.DecodeUnvalidated[*Pod]([]byte(fmt.Sprintf(text, name, n, n, n, n)), opts)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	share := DecodeOptions{Maps: NewMapTable()}
	a, b := decode("a", "1", share), decode("b", "2", share)
	ca, cb := a.Status.Conditions[0], b.Status.Conditions[0]
	sa, sb := a.Status.ContainerStatuses[0], b.Status.ContainerStatuses[0]
	if ca.state != cb.state || a.Spec.Containers[0].shared != b.Spec.Containers[0].shared || sa.shared != sb.shared {
		t.Errorf("two pods of one cache hold two copies of a condition's, a container's or a status's shared part")
	}
	if ca.LastTransitionTime.Equal(cb.LastTransitionTime) || sa.ContainerID == sb.ContainerID || sa.RestartCount == sb.RestartCount ||
		a.Spec.Containers[0].VolumeMounts[0].Name == b.Spec.Containers[0].VolumeMounts[0].Name {
		t.Errorf("the pods' own fields were shared: %v %v", ca.LastTransitionTime, cb.LastTransitionTime)
	}
	type read struct {
		Type, Status, Name, Image, Status0 string
		Ready                              bool
		Restarts                           int32
		Probe                              string
	}
	got := read{ca.Type(), ca.Status(), a.Spec.Containers[0].Name(), a.Spec.Containers[0].Image(), sa.Name(), sa.Ready(), sa.RestartCount,
		string(ca.Unknown().Get("lastProbeTime"))}
	if d := cmp.Diff(read{"Ready", "True", "web", "web:1", "web", true, 1, "null"}, got); d != "" {
		t.Errorf("read back (-want +got):\n%s", d)
	}
	if c := decode("c", "3", DecodeOptions{}); c.Status.Conditions[0].state == ca.state {
		t.Errorf("a pod decoded without the cache's table got its part")
	}
}

// With makes a new part: the condition, container or status it is called on, and every
// other one sharing its part, stays as it was. DeepCopy gives parts of its own.
func TestWithLeavesTheSharedPartAlone(t *testing.T) {
	share := DecodeOptions{Maps: NewMapTable()}
	var pods []*Pod
	for _, name := range []string{"a", "b"} {
		p, err := codec.DecodeUnvalidated[*Pod]([]byte(`{"metadata":{"name":"`+name+`"},"spec":{"containers":[{"name":"web","image":"web:1"}]},"status":{"conditions":[{"type":"Ready","status":"False"}],"containerStatuses":[{"name":"web","ready":false,"restartCount":0}]}}`), share)
		if err != nil {
			t.Fatal(err)
		}
		pods = append(pods, p)
	}
	a, b := pods[0], pods[1]
	c := a.Status.Conditions[0].With("reason", json.RawMessage(`"ContainersNotReady"`))
	k := a.Spec.Containers[0].With("ports", json.RawMessage(`[{"containerPort":80}]`))
	s := a.Status.ContainerStatuses[0].With("started", json.RawMessage(`false`))
	if c.Reason() != "ContainersNotReady" || k.Unknown().Get("ports") == nil || string(s.Unknown().Get("started")) != "false" || c.Type() != "Ready" {
		t.Errorf("With did not set the member: %v %v %v", c.Reason(), k.Unknown(), s.Unknown())
	}
	if a.Status.Conditions[0].Reason() != "" || b.Status.Conditions[0].Reason() != "" || b.Spec.Containers[0].Unknown().Len() != 0 ||
		b.Status.ContainerStatuses[0].Unknown().Len() != 0 {
		t.Errorf("With changed the part the cache's pods share")
	}
	cp := DeepCopy(a)
	if cp.Status.Conditions[0].state == a.Status.Conditions[0].state || !cmp.Equal(cp, a) {
		t.Errorf("DeepCopy shares a condition's part, or differs from the original")
	}
	var zero PodCondition
	if zero.Type() != "" || zero.Status() != "" || NewContainerStatus("x", true).Name() != "x" || NewContainer("x", "i").Image() != "i" {
		t.Errorf("the zero condition or a new part reads wrong")
	}
}
