package informer_test

import (
	"context"
	"fmt"
	"time"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// A Factory hands every part of a program the same informer for the same resource,
// namespace, selectors and object type, so the process lists and watches each of them
// once. Start runs them all, WaitForSync waits for their caches, and Shutdown stops them
// and waits for their goroutines.
func ExampleFactory() {
	sim := apisim.New(apisim.Options{})
	url, _ := sim.Start("127.0.0.1:0")
	defer sim.Close()
	client, _ := listwatch.New(&listwatch.Config{Host: url, QPS: -1})
	defer client.CloseIdleConnections()
	ctx := context.Background()

	res, _ := client.Discover(ctx, "pods")
	for _, name := range []string{"web-1", "web-2"} {
		_, _ = listwatch.For[*object.Pod](client, res, "default").Create(ctx,
			&object.Pod{ObjectMeta: object.ObjectMeta{Name: name}})
	}

	f := informer.NewFactory(client, informer.FactoryOptions{})
	// Two controllers ask for the pods of "default" (by any name kubectl accepts):
	// they get one shared informer. Another resource gets its own.
	a, _ := informer.For[*object.Pod](ctx, f, "pods", informer.Selectors{Namespace: "default"})
	b, _ := informer.For[*object.Pod](ctx, f, "po", informer.Selectors{Namespace: "default"})
	rss, _ := informer.For[*object.ReplicaSet](ctx, f, "replicasets.apps", informer.Selectors{})
	fmt.Println("shared:", a == b)
	fmt.Println("informers:", a.Name(), rss.Name())

	f.Start(ctx)
	syncCtx, cancel := context.WithTimeout(ctx, 10*time.Second) // the limit only matters on failure
	defer cancel()
	if err := f.WaitForSync(syncCtx); err != nil {
		fmt.Println(err) // says which informer is not synced, and why
		return
	}
	fmt.Println("synced:", a.HasSynced(), rss.HasSynced())
	fmt.Println("cached pods:", a.Cache().ListKeys())

	f.Shutdown()
	// Output:
	// shared: true
	// informers: default/pods replicasets.apps
	// synced: true true
	// cached pods: [default/web-1 default/web-2]
}

// For restricts an informer to a namespace and label or field selectors; the server
// filters, so the cache holds only what matches. An informer requested after the
// factory's Start is started at once. MetadataOnly caches names, labels and owners only,
// as *object.Raw.
func ExampleFor() {
	sim := apisim.New(apisim.Options{})
	url, _ := sim.Start("127.0.0.1:0")
	defer sim.Close()
	client, _ := listwatch.New(&listwatch.Config{Host: url, QPS: -1})
	defer client.CloseIdleConnections()
	ctx := context.Background()

	res, _ := client.Discover(ctx, "pods")
	for _, p := range []struct{ ns, name, app string }{
		{"default", "web-1", "web"}, {"default", "db-1", "db"}, {"staging", "web-2", "web"},
	} {
		_, _ = listwatch.For[*object.Pod](client, res, p.ns).Create(ctx, &object.Pod{
			ObjectMeta: object.ObjectMeta{Name: p.name, Labels: map[string]string{"app": p.app}}})
	}

	f := informer.NewFactory(client, informer.FactoryOptions{})
	defer f.Shutdown()
	f.Start(ctx)
	web, err := informer.For[*object.Pod](ctx, f, "pods",
		informer.Selectors{Namespace: "default", LabelSelector: "app=web"})
	if err != nil {
		fmt.Println(err) // an unknown resource, for one
		return
	}
	meta, _ := informer.For[*object.Raw](ctx, f, "pods", informer.Selectors{MetadataOnly: true})

	syncCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := informer.WaitForSync(syncCtx, web, meta); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(web.Name(), web.Cache().ListKeys())
	fmt.Println(meta.Name(), meta.Cache().ListKeys())
	// Output:
	// default/pods{app=web} [default/web-1]
	// pods(metadata) [default/db-1 default/web-1 staging/web-2]
}
