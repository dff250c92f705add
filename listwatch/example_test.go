package listwatch_test

import (
	"context"
	"fmt"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

func Example() {
	sim := apisim.New(apisim.Options{})
	url, _ := sim.Start("127.0.0.1:0")
	defer sim.Close()

	ctx := context.Background()
	c, _ := listwatch.New(&listwatch.Config{Host: url})
	defer c.CloseIdleConnections()
	info, _ := c.Discover(ctx, "pods")
	pods := listwatch.For[*object.Pod](c, info, "default")

	// List, then watch from the list's resourceVersion so nothing in between is lost.
	list, _ := pods.List(ctx, listwatch.ListOptions{Limit: 500})
	w, _ := pods.Watch(ctx, listwatch.WatchOptions{ResourceVersion: list.ResourceVersion})
	defer w.Close()

	_, _ = pods.Create(ctx, &object.Pod{ObjectMeta: object.ObjectMeta{Name: "web-1"}})
	ev, _ := w.Next()
	fmt.Println(ev.Type, object.Key(ev.Object), ev.Object.Status.Phase)
	// Output: ADDED default/web-1 Pending
}
