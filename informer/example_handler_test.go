package informer_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// A handler added to a synced informer first receives the cache as initial adds
// (initial is true), then every change, one at a time and in order, on its own
// goroutine. Its Registration says when the initial adds have all been delivered.
func ExampleInformer_AddEventHandler() {
	sim := apisim.New(apisim.Options{})
	url, _ := sim.Start("127.0.0.1:0")
	defer sim.Close()
	client, _ := listwatch.New(&listwatch.Config{Host: url, QPS: -1})
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	res, _ := client.Discover(ctx, "pods")
	pods := listwatch.For[*object.Pod](client, res, "default")
	for _, name := range []string{"web-2", "web-1"} {
		_, _ = pods.Create(ctx, &object.Pod{ObjectMeta: object.ObjectMeta{Name: name}})
	}

	f := informer.NewFactory(client, informer.FactoryOptions{})
	defer f.Shutdown()
	inf, _ := informer.For[*object.Pod](ctx, f, "pods", informer.Selectors{Namespace: "default"})
	f.Start(ctx)
	_ = f.WaitForSync(ctx)

	// Handlers must not block for long nor change the objects (they are the cache's).
	events := make(chan string, 16)
	reg, _ := inf.AddEventHandler(informer.HandlerFuncs[*object.Pod]{
		AddFunc: func(p *object.Pod, initial bool) {
			events <- fmt.Sprintf("add %s initial=%v", object.Key(p), initial)
		},
		UpdateFunc: func(old, p *object.Pod) {
			events <- fmt.Sprintf("update %s app=%q→%q", object.Key(p), old.Labels["app"], p.Labels["app"])
		},
		DeleteFunc: func(p *object.Pod, finalStateUnknown bool) {
			events <- fmt.Sprintf("delete %s", object.Key(p))
		},
	}, informer.HandlerOptions{Name: "example"})
	defer reg.Remove()

	if err := informer.WaitForSync(ctx, reg); err != nil {
		fmt.Println(err)
		return
	}
	initial := []string{<-events, <-events} // the cache, in no particular order
	slices.Sort(initial)
	for _, e := range initial {
		fmt.Println(e)
	}

	_, _ = pods.Create(ctx, &object.Pod{ObjectMeta: object.ObjectMeta{Name: "web-3"}})
	fmt.Println(<-events)
	_, _ = pods.Patch(ctx, "web-1", listwatch.MergePatch, []byte(`{"metadata":{"labels":{"app":"web"}}}`), "")
	fmt.Println(<-events)
	_ = pods.Delete(ctx, "web-2", listwatch.DeleteOptions{})
	fmt.Println(<-events)
	// Output:
	// add default/web-1 initial=true
	// add default/web-2 initial=true
	// add default/web-3 initial=false
	// update default/web-1 app=""→"web"
	// delete default/web-2
}
