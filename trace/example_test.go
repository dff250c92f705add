package trace_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/trace"
)

// An informer whose handler has no workqueue behind it: every event is followed from the
// wire to the handler, and its record ends at Delivered. r.String() is the line
// `kinformer watch --trace` prints (durations vary from run to run, so this example
// prints only the span names).
func Example() {
	sim := apisim.New(apisim.Options{})
	url, _ := sim.Start("127.0.0.1:0")
	defer sim.Close()
	client, _ := listwatch.New(&listwatch.Config{Host: url})
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithCancel(context.Background())

	records := make(chan trace.Record, 1)
	tracer := trace.NewCollector(trace.Options{Every: 1, Last: trace.Delivered,
		Report: func(r trace.Record) { records <- r }})
	f := informer.NewFactory(client, informer.FactoryOptions{Tracer: tracer})
	pods, _ := informer.For[*object.Pod](ctx, f, "pods", informer.Selectors{Namespace: "default"})
	_, _ = pods.AddEventHandler(informer.HandlerFuncs[*object.Pod]{}, informer.HandlerOptions{Tracer: tracer})
	f.Start(ctx)
	_ = f.WaitForSync(ctx)

	res, _ := client.Discover(ctx, "pods")
	_, _ = listwatch.For[*object.Pod](client, res, "default").Create(ctx, &object.Pod{ObjectMeta: object.ObjectMeta{Name: "web-1"}})
	r := <-records
	var spans []string
	for s := trace.Read; s <= r.Last; s++ {
		spans = append(spans, s.Span())
	}
	fmt.Println(r.Type, r.Key(), strings.Join(spans, " → "))
	cancel()
	f.Shutdown()
	// Output: ADDED default/web-1 read → decode → fifo → store → handler
}
