package indexer_test

import (
	"fmt"

	"github.com/kinformer/kinformer/indexer"
	"github.com/kinformer/kinformer/object"
)

func Example() {
	ix := indexer.New[*object.Pod]()
	_ = ix.AddIndexers(map[string]indexer.IndexFunc[*object.Pod]{
		"node": func(p *object.Pod) ([]string, error) { return []string{p.Spec.NodeName}, nil },
	})
	for _, name := range []string{"a", "b", "c"} {
		p := &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: "prod", Name: name}}
		p.Spec.NodeName = map[string]string{"a": "n1", "b": "n2", "c": "n1"}[name]
		_ = ix.Add(p)
	}
	keys, _ := ix.IndexKeys("node", "n1")
	fmt.Println(keys, ix.ListIndexFuncValues(indexer.NamespaceIndex))
	// Output: [prod/a prod/c] [prod]
}
