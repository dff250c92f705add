package shard_test

import (
	"fmt"
	"net/url"

	"github.com/kinformer/kinformer/shard"
)

// A selector for the lower half of the namespace hash space: its wire form, and which
// namespaces it selects.
func Example() {
	sel := shard.Selector{
		Field:  shard.Namespace,
		Ranges: []shard.Range{{First: 0, Last: 1<<63 - 1}},
	}
	fmt.Println(sel)
	for _, ns := range []string{"default", "monitoring"} {
		fmt.Printf("%s: hash %#016x, selected %v\n", ns, shard.Hash(ns), sel.Matches(ns))
	}

	// Parse reads what the server reads, and refuses what it refuses.
	_, err := shard.Parse("shardRange(object.metadata.namespace, '0x0', '0x8000000000000000')")
	fmt.Println(err)
	// Output:
	// shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')
	// default: hash 0xebada5168620c5fe, selected false
	// monitoring: hash 0x799eff3fa02c1887, selected true
	// shard: at offset 38: start "0x0" must have exactly 16 hex digits (did you mean "0x0000000000000000"?)
}

// Three controllers split the namespaces between them; a fourth joins.
func ExampleAssign() {
	members := []string{"controller-0", "controller-1", "controller-2"}
	before := shard.Assign(members, shard.DefaultBuckets)

	sel, ok := before.Selector("controller-1", shard.Namespace)
	if !ok {
		return // owns nothing: run no informers at all
	}
	q := url.Values{"shardSelector": {sel.String()}}
	fmt.Printf("controller-1 owns %d ranges; query is %d bytes\n", len(sel.Ranges), len(q.Encode()))

	after := shard.Assign(append(members, "controller-3"), shard.DefaultBuckets)
	fmt.Printf("moved %.3f of the space to the newcomer (ideal %.3f)\n", shard.Moved(before, after), 1.0/4)
	// Output:
	// controller-1 owns 54 ranges; query is 5677 bytes
	// moved 0.227 of the space to the newcomer (ideal 0.250)
}

// Numbered tenants crowd into one 256th of the space, so equal slices give one member all
// of them; a plan cut where their objects are shares them out.
func ExamplePlanFor() {
	objects := map[string]int64{}
	for i := range 30 {
		objects[fmt.Sprintf("tenant-%02d", i)] = 12
	}
	points := shard.PointsOf(objects)
	members := []string{"a", "b", "c"}

	equal := shard.EqualPlan(shard.DefaultBuckets).Assign(members)
	byLoad := shard.PlanFor(points, shard.DefaultBuckets)
	fmt.Printf("equal slices: the busiest member holds %.2f × the mean\n", shard.Balance(equal, points))
	fmt.Printf("cut by load: %d slots, the busiest holds %.2f × the mean\n", byLoad.Len(), shard.Balance(byLoad.Assign(members), points))
	// Output:
	// equal slices: the busiest member holds 3.00 × the mean
	// cut by load: 30 slots, the busiest holds 1.10 × the mean
}
