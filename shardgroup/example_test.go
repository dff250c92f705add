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
// its syncs on Acts and its writes on Guard, and on shutdown releases everything and
// deletes its Lease so that the others would take over at once.
func Example() {
	sim := apisim.New(apisim.Options{})
	url, _ := sim.Start("127.0.0.1:0")
	defer sim.Close()
	client, _ := listwatch.New(&listwatch.Config{Host: url})
	defer client.CloseIdleConnections()

	const group = "kinformer-controller-manager"
	acting := make(chan struct{})
	member, err := shardgroup.New(client, shardgroup.Options{
		Group: group,
		ID:    "node-a-5f2c", // timings: kube-controller-manager's (15 s, 10 s, 2 s)
		Acquire: func(ctx context.Context, part shard.Set) error {
			// List and watch with this selector, then start the workers.
			sel, _ := part.Selector(shard.Namespace)
			fmt.Println("acquire:", sel)
			close(acting)
			return nil
		},
		Release: func(ctx context.Context, part shard.Set) error {
			// Stop the workers there; the member has already waited for the writes its
			// Guard let through.
			fmt.Println("release:", len(part.Ranges()), "range")
			return nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Everything that writes for the member goes through a client its Guard fences.
	writes := client.WithGuard(member.Guard())
	_ = writes

	ctx, shutdown := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- member.Run(ctx) }()
	<-acting
	// Acts turns true as the member takes in Acquire's return.
	for tick := time.NewTicker(10 * time.Millisecond); !member.Acts("default"); <-tick.C {
	}
	fmt.Println("acts on default:", member.Acts("default"))

	shutdown() // as a SIGTERM would
	fmt.Println("Run:", <-done)
	g, _ := shardgroup.ReadGroup(context.Background(), client, "", group)
	fmt.Println("members:", len(g.Members))
	// Output:
	// acquire: shardRange(object.metadata.namespace, '0x0000000000000000', '0x10000000000000000')
	// acts on default: true
	// release: 1 range
	// Run: <nil>
	// members: 0
}
