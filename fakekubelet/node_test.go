package fakekubelet_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/fakekubelet"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// start is when the node tests' fake clocks begin.
var start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// nodes is the test's view of the Nodes and node Leases of a cluster.
type nodes struct {
	nodes  *listwatch.Resource[*object.Raw]
	leases *listwatch.Resource[*object.Lease]
}

func (c cluster) nodes(t *testing.T) nodes {
	t.Helper()
	ctx := context.Background()
	n, err := c.client.Discover(ctx, "nodes")
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.client.Discover(ctx, "leases.coordination.k8s.io")
	if err != nil {
		t.Fatal(err)
	}
	return nodes{listwatch.For[*object.Raw](c.client, n, ""), listwatch.For[*object.Lease](c.client, l, "kube-node-lease")}
}

// node returns the named Node and its status as generic JSON (nil: no such Node).
func (n nodes) node(t *testing.T, name string) (*object.Raw, map[string]any) {
	t.Helper()
	node, err := n.nodes.Get(context.Background(), name)
	if object.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var status map[string]any
	if err := json.Unmarshal(node.Unknown.Get("status"), &status); err != nil {
		t.Fatal(err)
	}
	return node, status
}

// lease returns the named Lease (nil: none).
func (n nodes) lease(t *testing.T, name string) *object.Lease {
	t.Helper()
	l, err := n.leases.Get(context.Background(), name)
	if object.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// renewedAt waits for the Lease to say it was renewed at want.
func (n nodes) renewedAt(t *testing.T, name string, want time.Time) *object.Lease {
	t.Helper()
	var l *object.Lease
	testwait.Eventually(t, patience, func() bool {
		l = n.lease(t, name)
		return l != nil && l.Spec.RenewTime != nil && l.Spec.RenewTime.Equal(want)
	}, "lease %s never renewed at %v; last seen: %+v", name, want, testwait.Lazy(func() any { return l }))
	return l
}

// armed waits until the kubelet waits on its clock for its next heartbeat.
func armed(t *testing.T, c *clock.Fake) {
	t.Helper()
	testwait.Eventually(t, patience, func() bool { return c.Pending() == 1 }, "the kubelet never armed its heartbeat timer (%d timers)", c.Pending())
}

func condition(t *testing.T, status map[string]any, typ string) map[string]any {
	t.Helper()
	for _, c := range status["conditions"].([]any) {
		if c := c.(map[string]any); c["type"] == typ {
			return c
		}
	}
	t.Fatalf("no %s condition in %v", typ, status["conditions"])
	return nil
}

func TestNodeIsRegisteredReady(t *testing.T) {
	c := newCluster(t)
	n := c.nodes(t)
	clk := clock.NewFake(start)
	// A pod waiting before the kubelet starts: it is bound only after the Node and its
	// Lease exist.
	c.create(t, newPod("waiting", "nginx:1.27"))
	before, err := n.nodes.List(context.Background(), listwatch.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	runKubelet(t, fakekubelet.Options{Client: c.client, ReadyAfter: time.Hour, Clock: clk, NodeName: "worker-1",
		Capacity: map[string]string{"cpu": "4", "nvidia.com/gpu": "1"}, Allocatable: map[string]string{"cpu": "3500m"}})
	pod := c.waitFor(t, "waiting", "bound", isBound)

	node, status := n.node(t, "worker-1")
	if node == nil {
		t.Fatal("no Node worker-1")
	}
	want := map[string]string{"kubernetes.io/hostname": "worker-1", "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
		"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64", fakekubelet.NodeLabel: "true"}
	if d := cmp.Diff(want, node.Labels); d != "" {
		t.Errorf("labels (-want +got):\n%s", d)
	}
	if spec := string(node.Unknown.Get("spec")); spec != "{}" {
		t.Errorf("spec %s, want no taints and schedulable", spec)
	}
	const heartbeat = `"lastHeartbeatTime":"2026-03-01T12:00:00Z","lastTransitionTime":"2026-03-01T12:00:00Z"`
	wantStatus := `{
		"capacity": {"cpu": "4", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": "1"},
		"allocatable": {"cpu": "3500m", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": "1"},
		"conditions": [
			{"type": "MemoryPressure", "status": "False", ` + heartbeat + `, "reason": "KubeletHasSufficientMemory", "message": "fake kubelet: no memory pressure"},
			{"type": "DiskPressure", "status": "False", ` + heartbeat + `, "reason": "KubeletHasNoDiskPressure", "message": "fake kubelet: no disk pressure"},
			{"type": "PIDPressure", "status": "False", ` + heartbeat + `, "reason": "KubeletHasSufficientPID", "message": "fake kubelet: no process id pressure"},
			{"type": "Ready", "status": "True", ` + heartbeat + `, "reason": "KubeletReady", "message": "fake kubelet is ready"}],
		"addresses": [{"type": "InternalIP", "address": "172.18.0.2"}, {"type": "Hostname", "address": "worker-1"}],
		"nodeInfo": {"machineID": "<id>", "systemUUID": "<uuid>", "bootID": "<uuid>", "kernelVersion": "0.0.0-fake",
			"osImage": "kinformer fake node", "containerRuntimeVersion": "containerd://0.0.0-fake",
			"kubeletVersion": "v1.36.0-kinformer-sim", "operatingSystem": "linux", "architecture": "amd64"}}`
	info := status["nodeInfo"].(map[string]any)
	for k, form := range map[string]string{"machineID": "<id>", "systemUUID": "<uuid>", "bootID": "<uuid>"} {
		if s, _ := info[k].(string); len(s) != map[string]int{"<id>": 32, "<uuid>": 36}[form] {
			t.Errorf("nodeInfo.%s = %q", k, s)
		}
		info[k] = form
	}
	var wantAny any
	if err := json.Unmarshal([]byte(wantStatus), &wantAny); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(wantAny, any(status)); d != "" {
		t.Errorf("status (-want +got):\n%s", d)
	}

	lease := n.lease(t, "worker-1")
	if lease == nil {
		t.Fatal("no Lease kube-node-lease/worker-1")
	}
	if got := leaseSummary(lease); got != "worker-1 40s 2026-03-01T12:00:00Z" {
		t.Errorf("lease holder, duration, renewTime: %s", got)
	}
	wantRefs := []object.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "worker-1", UID: node.UID}}
	if d := cmp.Diff(wantRefs, lease.OwnerReferences); d != "" {
		t.Errorf("lease owners (-want +got):\n%s", d)
	}

	// The Node and the Lease were created before the pod was bound: their ADDED events
	// come at lower revisions than the binding's.
	ctx := testwait.Context(t, patience)
	bound, _ := strconv.ParseInt(pod.ResourceVersion, 10, 64)
	for what, w := range map[string]func() (listwatch.Event[object.Object], error){
		"Node":  watchFirst(t, ctx, n.nodes, before.ResourceVersion),
		"Lease": watchFirst(t, ctx, n.leases, before.ResourceVersion),
	} {
		ev, err := w()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		rv, _ := strconv.ParseInt(ev.Object.Meta().ResourceVersion, 10, 64)
		if ev.Type != listwatch.Added || rv >= bound {
			t.Errorf("%s: first event %s at rv %d, the pod was bound at rv %d", what, ev.Type, rv, bound)
		}
	}
}

// watchFirst returns a function that reads the first event after rv.
func watchFirst[T object.Object](t *testing.T, ctx context.Context, r *listwatch.Resource[T], rv string) func() (listwatch.Event[object.Object], error) {
	return func() (listwatch.Event[object.Object], error) {
		w, err := r.Watch(ctx, listwatch.WatchOptions{ResourceVersion: rv})
		if err != nil {
			return listwatch.Event[object.Object]{}, err
		}
		defer w.Close()
		ev, err := w.Next()
		return listwatch.Event[object.Object]{Type: ev.Type, Object: ev.Object}, err
	}
}

func leaseSummary(l *object.Lease) string {
	var b strings.Builder
	if l.Spec.HolderIdentity != nil {
		b.WriteString(*l.Spec.HolderIdentity)
	}
	if l.Spec.LeaseDurationSeconds != nil {
		b.WriteString(" " + (time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second).String())
	}
	if l.Spec.RenewTime != nil {
		b.WriteString(" " + l.Spec.RenewTime.UTC().Format(time.RFC3339Nano))
	}
	return b.String()
}

// TestNodeIsKeptAlive steps the kubelet's clock: the Lease is renewed every 10 s, and the
// status's heartbeat written every minute, keeping the conditions' transition times.
func TestNodeIsKeptAlive(t *testing.T) {
	c := newCluster(t)
	n := c.nodes(t)
	clk := clock.NewFake(start)
	runKubelet(t, fakekubelet.Options{Client: c.client, ReadyAfter: -1, Clock: clk})
	n.renewedAt(t, "fake-node", start)
	for i := 1; i <= 6; i++ {
		armed(t, clk)
		clk.Step(10 * time.Second)
		n.renewedAt(t, "fake-node", start.Add(time.Duration(i)*10*time.Second))
		_, status := n.node(t, "fake-node")
		ready := condition(t, status, "Ready")
		if i < 6 && ready["lastHeartbeatTime"] != "2026-03-01T12:00:00Z" {
			t.Errorf("after %ds: status written before its minute: %v", i*10, ready)
		}
	}
	testwait.Eventually(t, patience, func() bool {
		_, status := n.node(t, "fake-node")
		return condition(t, status, "Ready")["lastHeartbeatTime"] == "2026-03-01T12:01:00Z"
	}, "the Ready condition's heartbeat did not move after a minute")
	_, status := n.node(t, "fake-node")
	for _, typ := range []string{"MemoryPressure", "DiskPressure", "PIDPressure", "Ready"} {
		if c := condition(t, status, typ); c["lastTransitionTime"] != "2026-03-01T12:00:00Z" {
			t.Errorf("%s moved its lastTransitionTime without a transition: %v", typ, c)
		}
	}
}

// TestRestartAdoptsTheNode stops a kubelet and starts another on the same node: the Node
// and its Lease are kept and taken over, with what others set on them in between.
func TestRestartAdoptsTheNode(t *testing.T) {
	c := newCluster(t)
	n := c.nodes(t)
	ctx := context.Background()
	_, stop := runKubelet(t, fakekubelet.Options{Client: c.client, ReadyAfter: -1, Clock: clock.NewFake(start)})
	first := n.renewedAt(t, "fake-node", start)
	stop()
	node, _ := n.node(t, "fake-node")
	if node == nil {
		t.Fatal("the Node was deleted on exit")
	}
	// Meanwhile an administrator cordons the node and labels it, a network plugin adds
	// a condition, and the node lifecycle controller finds the Lease expired.
	for _, p := range []struct{ patch, sub string }{
		{`{"metadata":{"labels":{"zone":"a","kubernetes.io/os":"windows"}},"spec":{"unschedulable":true,"taints":[` +
			`{"key":"node.kubernetes.io/unreachable","effect":"NoExecute","timeAdded":"2026-03-01T12:02:00Z"},` +
			`{"key":"dedicated","value":"gpu","effect":"NoSchedule"},` +
			`{"key":"node.kubernetes.io/not-ready","effect":"NoSchedule"}]}}`, ""},
		{`{"status":{"conditions":[` +
			`{"type":"NetworkUnavailable","status":"False","lastTransitionTime":"2026-03-01T11:00:00Z","reason":"RouteCreated"},` +
			`{"type":"MemoryPressure","status":"Unknown","lastTransitionTime":"2026-03-01T12:02:00Z","reason":"NodeStatusUnknown"},` +
			`{"type":"DiskPressure","status":"False","lastTransitionTime":"2026-03-01T12:00:00Z","reason":"KubeletHasNoDiskPressure"},` +
			`{"type":"Ready","status":"Unknown","lastTransitionTime":"2026-03-01T12:02:00Z","reason":"NodeStatusUnknown"}]}}`, "status"},
	} {
		if _, err := n.nodes.Patch(ctx, "fake-node", listwatch.MergePatch, []byte(p.patch), p.sub); err != nil {
			t.Fatal(err)
		}
	}

	later := start.Add(5 * time.Minute)
	runKubelet(t, fakekubelet.Options{Client: c.client, ReadyAfter: -1, Clock: clock.NewFake(later),
		Capacity: map[string]string{"cpu": "8"}})
	second := n.renewedAt(t, "fake-node", later)
	if second.UID != first.UID || len(second.OwnerReferences) != 1 || second.OwnerReferences[0].UID != node.UID {
		t.Errorf("the Lease was replaced (uid %s → %s) or lost its owner: %+v", first.UID, second.UID, second.OwnerReferences)
	}
	adopted, status := n.node(t, "fake-node")
	if adopted.UID != node.UID {
		t.Fatalf("the Node was replaced: uid %s → %s", node.UID, adopted.UID)
	}
	// The cordon and the administrator's taint stay; the taints of a node not Ready go.
	var spec, wantSpec any
	json.Unmarshal(adopted.Unknown.Get("spec"), &spec)
	json.Unmarshal([]byte(`{"unschedulable":true,"taints":[{"key":"dedicated","value":"gpu","effect":"NoSchedule"}]}`), &wantSpec)
	if d := cmp.Diff(wantSpec, spec); d != "" {
		t.Errorf("spec (-want +got):\n%s", d)
	}
	if adopted.Labels["zone"] != "a" || adopted.Labels["kubernetes.io/os"] != "linux" {
		t.Errorf("labels %v: want zone kept and the kubelet's os label restored", adopted.Labels)
	}
	if cpu := status["capacity"].(map[string]any)["cpu"]; cpu != "8" {
		t.Errorf("capacity cpu %v, want the new kubelet's 8", cpu)
	}
	// Conditions: the network plugin's kept in its place, the kubelet's written with
	// the new heartbeat, transition times moved only where the status changed.
	type cond struct{ Type, Status, Heartbeat, Transition string }
	var got []cond
	for _, c := range status["conditions"].([]any) {
		c := c.(map[string]any)
		hb, _ := c["lastHeartbeatTime"].(string)
		got = append(got, cond{c["type"].(string), c["status"].(string), hb, c["lastTransitionTime"].(string)})
	}
	const now, before = "2026-03-01T12:05:00Z", "2026-03-01T12:00:00Z"
	want := []cond{
		{"NetworkUnavailable", "False", "", "2026-03-01T11:00:00Z"},
		{"MemoryPressure", "False", now, now},
		{"DiskPressure", "False", now, before},
		{"Ready", "True", now, now},
		{"PIDPressure", "False", now, now},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("conditions (-want +got):\n%s", d)
	}
}

func TestNodeOnExit(t *testing.T) {
	tests := []struct {
		name   string
		delete bool
	}{
		{"stays by default", false},
		{"deleted when told", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t)
			n := c.nodes(t)
			_, stop := runKubelet(t, fakekubelet.Options{Client: c.client, Clock: clock.NewFake(start), DeleteNodeOnExit: tt.delete})
			n.renewedAt(t, "fake-node", start)
			stop()
			node, _ := n.node(t, "fake-node")
			if lease := n.lease(t, "fake-node"); (node == nil) != tt.delete || (lease == nil) != tt.delete {
				t.Errorf("after exit: Node %v, Lease %v; want them deleted: %v", node != nil, lease != nil, tt.delete)
			}
		})
	}
}

// TestDeletedNodeIsRegisteredAgain deletes the Node under a running kubelet: its next
// heartbeat registers it again, and the Lease (collected with the old Node) comes back
// owned by the new one.
func TestDeletedNodeIsRegisteredAgain(t *testing.T) {
	c := newCluster(t)
	n := c.nodes(t)
	clk := clock.NewFake(start)
	runKubelet(t, fakekubelet.Options{Client: c.client, Clock: clk, StatusInterval: 10 * time.Second})
	n.renewedAt(t, "fake-node", start)
	old, _ := n.node(t, "fake-node")
	if err := n.nodes.Delete(context.Background(), "fake-node", listwatch.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, patience, func() bool { return n.lease(t, "fake-node") == nil },
		"the simulator's garbage collector kept the Lease of the deleted Node")
	armed(t, clk)
	clk.Step(10 * time.Second)
	lease := n.renewedAt(t, "fake-node", start.Add(10*time.Second))
	node, _ := n.node(t, "fake-node")
	if node == nil || node.UID == old.UID {
		t.Fatalf("the Node was not registered again: %+v", node)
	}
	if len(lease.OwnerReferences) != 1 || lease.OwnerReferences[0].UID != node.UID {
		t.Errorf("lease owners %+v, want the new Node %s", lease.OwnerReferences, node.UID)
	}
}

func TestNodeOptionErrors(t *testing.T) {
	client, err := listwatch.New(&listwatch.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name                  string
		capacity, allocatable map[string]string
		wantErr               string
	}{
		{"quantities", map[string]string{"cpu": "500m", "memory": "1.5Gi", "pods": "1e3", "x": "+.5"}, map[string]string{"cpu": "0"}, ""},
		{"not a quantity", map[string]string{"cpu": "four"}, nil, `capacity: resource cpu: "four" is not a quantity`},
		{"negative", map[string]string{"memory": "-1Gi"}, nil, `capacity: resource memory: "-1Gi" is not a quantity`},
		{"unknown suffix", nil, map[string]string{"memory": "1GB"}, `allocatable: resource memory: "1GB" is not a quantity`},
		{"empty name", map[string]string{"": "1"}, nil, `capacity: "" is not a resource name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fakekubelet.New(fakekubelet.Options{Client: client, Capacity: tt.capacity, Allocatable: tt.allocatable})
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tt.wantErr == "" && got != "" || !strings.Contains(got, tt.wantErr) {
				t.Errorf("New: %q, want an error containing %q", got, tt.wantErr)
			}
		})
	}
}
