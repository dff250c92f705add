package informer_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/indexer"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// A Lister reads the informer's cache with types and without a request to the server:
// Get by key, List by label selector, Namespace to narrow both to one namespace, and
// ByIndex over an index of the cache. The objects are shared: copy one
// (object.DeepCopy) before changing it.
func ExampleLister() {
	sim := apisim.New(apisim.Options{})
	url, _ := sim.Start("127.0.0.1:0")
	defer sim.Close()
	client, _ := listwatch.New(&listwatch.Config{Host: url, QPS: -1})
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	res, _ := client.Discover(ctx, "pods")
	for _, p := range []struct{ ns, name, app, node string }{
		{"default", "web-1", "web", "n1"}, {"default", "web-2", "web", "n2"},
		{"default", "db-1", "db", "n1"}, {"staging", "web-1", "web", "n1"},
	} {
		pod := &object.Pod{ObjectMeta: object.ObjectMeta{Name: p.name, Labels: map[string]string{"app": p.app}}}
		pod.Spec.NodeName = p.node
		_, _ = listwatch.For[*object.Pod](client, res, p.ns).Create(ctx, pod)
	}

	f := informer.NewFactory(client, informer.FactoryOptions{})
	defer f.Shutdown()
	inf, _ := informer.For[*object.Pod](ctx, f, "pods", informer.Selectors{}) // all namespaces
	f.Start(ctx)
	if err := f.WaitForSync(ctx); err != nil {
		fmt.Println(err)
		return
	}
	keys := func(pods []*object.Pod) []string { // List order is unspecified
		out := make([]string, 0, len(pods))
		for _, p := range pods {
			out = append(out, object.Key(p))
		}
		slices.Sort(out)
		return out
	}

	lister := inf.Lister()
	if db, ok := lister.Get("default/db-1"); ok {
		fmt.Println("get:", object.Key(db), "on", db.Spec.NodeName)
	}
	web, _ := object.ParseSelector("app=web")
	fmt.Println("web:", keys(lister.List(web)))
	fmt.Println("all:", keys(lister.List(object.Everything())))

	inDefault := lister.Namespace("default")
	fmt.Println("web in default:", keys(inDefault.List(web)))
	_, ok := lister.Namespace("staging").Get("db-1")
	fmt.Println("db-1 in staging:", ok)

	// Indexes can be added to the cache at any time.
	_ = inf.Cache().AddIndexers(map[string]indexer.IndexFunc[*object.Pod]{
		"node": func(p *object.Pod) ([]string, error) { return []string{p.Spec.NodeName}, nil },
	})
	onN1, _ := lister.ByIndex("node", "n1")
	fmt.Println("on n1:", keys(onN1))
	// Output:
	// get: default/db-1 on n1
	// web: [default/web-1 default/web-2 staging/web-1]
	// all: [default/db-1 default/web-1 default/web-2 staging/web-1]
	// web in default: [default/web-1 default/web-2]
	// db-1 in staging: false
	// on n1: [default/db-1 default/web-1 staging/web-1]
}
