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
	_, _ = pods.Create(ctx, pod)
	for ctx.Err() == nil {
		if p, err := pods.Get(ctx, "web"); err == nil && p.IsReady() {
			fmt.Println(p.Name, "runs on", p.Spec.NodeName, "and is", p.Status.Phase, "and ready")
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	<-stopped
	// Output: web runs on fake-node and is Running and ready
}
