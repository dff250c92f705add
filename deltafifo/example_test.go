package deltafifo_test

import (
	"context"
	"fmt"

	"github.com/kinformer/kinformer/deltafifo"
	"github.com/kinformer/kinformer/object"
)

func Example() {
	f := deltafifo.New[*object.Pod]()
	p := &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: "ns", Name: "web", ResourceVersion: "7"}}
	f.Replace(nil, "5") // initial list: empty
	f.Add(p)
	f.Delete(p)
	for f.Len() > 0 {
		_ = f.Pop(context.Background(), func(it *deltafifo.Item[*object.Pod]) error {
			if it.Replace != nil {
				fmt.Println("relist at", it.Replace.ResourceVersion)
				return nil
			}
			fmt.Println(it.Delta.Type, it.Delta.Key)
			return nil
		})
	}
	fmt.Println("synced:", f.HasSynced())
	// Output:
	// relist at 5
	// Added ns/web
	// Deleted ns/web
	// synced: true
}
