package reflector_test

import (
	"context"
	"fmt"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/deltafifo"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
)

// A reflector keeps a store in step with the server: here a deltafifo, as in an informer.
// The first list arrives as one Replace item; each change after it as one delta.
func ExampleReflector() {
	sim := apisim.New(apisim.Options{})
	url, _ := sim.Start("127.0.0.1:0")
	defer sim.Close()
	c, _ := listwatch.New(&listwatch.Config{Host: url})
	defer c.CloseIdleConnections()
	ctx, cancel := context.WithCancel(context.Background())
	info, _ := c.Discover(ctx, "pods")
	pods := listwatch.For[*object.Pod](c, info, "default")
	pods.Create(ctx, &object.Pod{ObjectMeta: object.ObjectMeta{Name: "a"}})

	fifo := deltafifo.New[*object.Pod]()
	r := reflector.New[*object.Pod](pods, fifo, reflector.Options{Name: "pods"})
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()

	show := func(it *deltafifo.Item[*object.Pod]) error {
		if it.Replace != nil {
			fmt.Println("replace with", len(it.Replace.Objects), "pod(s)")
		} else {
			fmt.Println(it.Delta.Type, it.Delta.Key)
		}
		return nil
	}
	fifo.Pop(ctx, show) // the list
	pods.Create(ctx, &object.Pod{ObjectMeta: object.ObjectMeta{Name: "b"}})
	fifo.Pop(ctx, show) // the watch event
	cancel()
	<-done
	fmt.Println(r.Status().State)
	// Output:
	// replace with 1 pod(s)
	// Added default/b
	// Stopped
}
