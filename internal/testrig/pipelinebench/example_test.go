package pipelinebench_test

import (
	"context"
	"fmt"

	"github.com/kinformer/kinformer/internal/testrig/pipelinebench"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// The Source an informer benchmark reads: a list of pods at resourceVersion 1, then,
// once started, a watch of recorded updates to them.
func Example() {
	src := pipelinebench.NewSource(3, 4)
	ctx := context.Background()
	list, err := src.List(ctx, listwatch.ListOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(len(list.Items), "pods at resourceVersion", list.ResourceVersion)

	src.Start()
	watch, err := src.Watch(ctx, listwatch.WatchOptions{})
	if err != nil {
		panic(err)
	}
	defer watch.Close()
	for range 4 {
		ev, err := watch.Next()
		if err != nil {
			panic(err)
		}
		fmt.Println(ev.Type, object.Key(ev.Object), ev.Object.ResourceVersion)
	}
	// Output:
	// 3 pods at resourceVersion 1
	// MODIFIED ns0/web-0 2
	// MODIFIED ns1/web-1 3
	// MODIFIED ns2/web-2 4
	// MODIFIED ns0/web-0 5
}
