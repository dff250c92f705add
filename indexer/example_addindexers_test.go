package indexer_test

import (
	"fmt"
	"slices"

	"github.com/kinformer/kinformer/indexer"
	"github.com/kinformer/kinformer/object"
)

// Indexes can be added at any time: the objects already stored are indexed at once, and
// later ones as they are stored. ByIndex returns the objects of an index value, IndexKeys
// their keys (sorted). An index function may give an object several values, or none.
func ExampleIndexer_AddIndexers() {
	ix := indexer.New[*object.Pod]()
	pod := func(ns, name, node string, labels map[string]string) *object.Pod {
		p := &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
		p.Spec.NodeName = node
		return p
	}
	_ = ix.Add(pod("prod", "web-1", "n1", map[string]string{"app": "web", "tier": "front"}))
	_ = ix.Add(pod("prod", "db-1", "n1", map[string]string{"app": "db"}))
	_ = ix.Add(pod("dev", "web-1", "", map[string]string{"app": "web"})) // not scheduled

	err := ix.AddIndexers(map[string]indexer.IndexFunc[*object.Pod]{
		"node": func(p *object.Pod) ([]string, error) {
			if p.Spec.NodeName == "" {
				return nil, nil // in no value of the index
			}
			return []string{p.Spec.NodeName}, nil
		},
		"label": func(p *object.Pod) ([]string, error) { // one value per label
			var out []string
			for k, v := range p.Labels {
				out = append(out, k+"="+v)
			}
			return out, nil
		},
	})
	fmt.Println("added:", err)

	keys, _ := ix.IndexKeys("node", "n1")
	fmt.Println("on n1:", keys)
	keys, _ = ix.IndexKeys("label", "app=web")
	fmt.Println("app=web:", keys)

	_ = ix.Add(pod("prod", "web-2", "n2", map[string]string{"app": "web"}))
	web, _ := ix.ByIndex("label", "app=web") // objects, in no particular order
	var names []string
	for _, p := range web {
		names = append(names, object.Key(p)+"@"+p.Spec.NodeName)
	}
	slices.Sort(names)
	fmt.Println("web pods:", names)
	fmt.Println("nodes:", ix.ListIndexFuncValues("node"))

	// A name that is taken is refused, and then none of the batch is added.
	err = ix.AddIndexers(map[string]indexer.IndexFunc[*object.Pod]{
		"node": func(p *object.Pod) ([]string, error) { return nil, nil },
	})
	fmt.Println(err)
	_, err = ix.ByIndex("zone", "a")
	fmt.Println(err)
	// Output:
	// added: <nil>
	// on n1: [prod/db-1 prod/web-1]
	// app=web: [dev/web-1 prod/web-1]
	// web pods: [dev/web-1@ prod/web-1@n1 prod/web-2@n2]
	// nodes: [n1 n2]
	// indexer: index "node" already exists
	// indexer: no index "zone"
}
