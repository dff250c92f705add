package shardgroup_test

import (
	"context"
	"fmt"
	"time"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/shard"
	"github.com/kinformer/kinformer/shardgroup"
)

// One member of a group of controller managers: alone, it takes the whole space, gates
// its syncs on Acts, and on shutdown releases everything and deletes its Lease so that
// the others would take over at once.
func Example() {
	sim := apisim.New(apisim.Options{})
	url, _ := sim.Start("127.0.0.1:0")
	defer sim.Close()
	client, _ := listwatch.New(&listwatch.Config{Host: url})
	defer client.CloseIdleConnections()

	const group = "kinformer-controller-manager"
	member, err := shardgroup.New(client, shardgroup.Options{
		Group: group,
		ID:    "node-a-5f2c", // timings: kube-controller-manager's (15 s, 10 s, 2 s)
		Acquire: func(ctx context.Context, ranges []shard.Range) error {
			// List and watch with this selector, then start the workers.
			fmt.Println("acquire:", shard.Selector{Field: shard.Namespace, Ranges: ranges})
			return nil
		},
		Release: func(ctx context.Context, ranges []shard.Range) error {
			// Stop the workers, and wait for the syncs in flight.
			fmt.Println("release:", len(ranges), "range")
			return nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, shutdown := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- member.Run(ctx) }()
	for !member.Acts("default") {
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println("acts on default:", member.Acts("default"))

	shutdown() // as a SIGTERM would
	fmt.Println("Run:", <-done)
	left, _ := shardgroup.Members(context.Background(), client, "", group)
	fmt.Println("members:", len(left))
	// Output:
	// acquire: shardRange(object.metadata.namespace, '0x0000000000000000', '0x10000000000000000')
	// acts on default: true
	// release: 1 range
	// Run: <nil>
	// members: 0
}
