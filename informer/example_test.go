package informer_test

import (
	"context"
	"fmt"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

func Example() {
	sim := apisim.New(apisim.Options{})
	url, _ := sim.Start("127.0.0.1:0")
	defer sim.Close()
	client, _ := listwatch.New(&listwatch.Config{Host: url})
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithCancel(context.Background())

	f := informer.NewFactory(client, informer.FactoryOptions{})
	pods, _ := informer.For[*object.Pod](ctx, f, "pods", informer.Selectors{Namespace: "default"})
	added := make(chan string, 1)
	_, _ = pods.AddEventHandler(informer.HandlerFuncs[*object.Pod]{
		AddFunc: func(p *object.Pod, initial bool) { added <- object.Key(p) },
	}, informer.HandlerOptions{})
	f.Start(ctx)
	_ = f.WaitForSync(ctx)

	res, _ := client.Discover(ctx, "pods")
	_, _ = listwatch.For[*object.Pod](client, res, "default").Create(ctx,
		&object.Pod{ObjectMeta: object.ObjectMeta{Name: "web-1", Labels: map[string]string{"app": "web"}}})
	fmt.Println("handler saw", <-added)

	web, _ := object.ParseSelector("app=web")
	fmt.Println("lister has", len(pods.Lister().Namespace("default").List(web)), "web pod")
	cancel()
	f.Shutdown()
	// Output:
	// handler saw default/web-1
	// lister has 1 web pod
}
