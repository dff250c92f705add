package fakekubelet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/fakekubelet"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

func Example() {
	sim := apisim.New(apisim.Options{})
	url, _ := sim.Start("127.0.0.1:0")
	defer sim.Close()
	client, _ := listwatch.New(&listwatch.Config{Host: url})
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	kubelet, _ := fakekubelet.New(fakekubelet.Options{Client: client, ReadyAfter: 100 * time.Millisecond})
	stopped := make(chan error)
	runCtx, stop := context.WithCancel(ctx)
	go func() { stopped <- kubelet.Run(runCtx) }()

	info, _ := client.Discover(ctx, "pods")
	pods := listwatch.For[*object.Pod](client, info, "default")
	pod := &object.Pod{ObjectMeta: object.ObjectMeta{Name: "web"}}
	pod.Spec.Unknown.Set("containers", json.RawMessage(`[{"name":"app","image":"nginx:1.27"}]`))
	if p, err := createAndWaitReady(ctx, pods, pod); err != nil {
		fmt.Println(err)
	} else {
		fmt.Println(p.Name, "runs on", p.Spec.NodeName, "and is", p.Status.Phase, "and ready")
	}
	// The node it runs on is registered, Ready, and its Lease held.
	nodeInfo, _ := client.Discover(ctx, "nodes")
	node, _ := listwatch.For[*object.Raw](client, nodeInfo, "").Get(ctx, "fake-node")
	var status struct {
		Capacity   map[string]string
		Conditions []struct{ Type, Status, Reason string }
	}
	_ = json.Unmarshal(node.Unknown.Get("status"), &status)
	ready := status.Conditions[len(status.Conditions)-1]
	fmt.Println(node.Name, "has", status.Capacity["cpu"], "cpus and is", ready.Type, ready.Status, ready.Reason)
	leaseInfo, _ := client.Discover(ctx, "leases.coordination.k8s.io")
	lease, _ := listwatch.For[*object.Lease](client, leaseInfo, "kube-node-lease").Get(ctx, "fake-node")
	fmt.Println("lease", lease.Namespace+"/"+lease.Name, "held by", *lease.Spec.HolderIdentity, "for", *lease.Spec.LeaseDurationSeconds, "s")
	stop()
	<-stopped
	// Output:
	// web runs on fake-node and is Running and ready
	// fake-node has 32 cpus and is Ready True KubeletReady
	// lease kube-node-lease/fake-node held by fake-node for 40 s
}

// createAndWaitReady creates pod and follows it, from the state just written, until the
// kubelet reports it ready (or ctx ends).
func createAndWaitReady(ctx context.Context, pods *listwatch.Resource[*object.Pod], pod *object.Pod) (*object.Pod, error) {
	created, err := pods.Create(ctx, pod)
	if err != nil {
		return nil, err
	}
	w, err := pods.Watch(ctx, listwatch.WatchOptions{ResourceVersion: created.ResourceVersion, FieldSelector: "metadata.name=" + pod.Name})
	if err != nil {
		return nil, err
	}
	defer w.Close()
	for {
		ev, err := w.Next()
		if err != nil {
			return nil, err
		}
		if ev.Object.IsReady() {
			return ev.Object, nil
		}
	}
}
