package leaderelection_test

import (
	"context"
	"fmt"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/leaderelection"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// A controller manager's shape: run the controllers only while leading, and hand the
// lease over at once on shutdown.
func Example() {
	sim := apisim.New(apisim.Options{})
	url, _ := sim.Start("127.0.0.1:0")
	defer sim.Close()
	client, _ := listwatch.New(&listwatch.Config{Host: url})
	defer client.CloseIdleConnections()

	ctx, shutdown := context.WithCancel(context.Background())
	elector, err := leaderelection.New(leaderelection.Config{
		Client:          client,
		Namespace:       "kube-system",
		Name:            "kinformer-controller-manager",
		Identity:        "node-a_5f2c",
		ReleaseOnCancel: true, // timings: kube-controller-manager's defaults (15 s, 10 s, 2 s)
		Callbacks: leaderelection.Callbacks{
			OnNewLeader: func(id string) { fmt.Println("leader:", id) },
			OnStartedLeading: func(ctx context.Context) {
				fmt.Println("controllers running")
				shutdown() // as a SIGTERM would
				<-ctx.Done()
				fmt.Println("controllers stopped")
			},
			OnStoppedLeading: func() { fmt.Println("stopped leading") },
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("Run:", elector.Run(ctx))

	info, _ := client.Discover(context.Background(), "leases.coordination.k8s.io")
	leases := listwatch.For[*object.Lease](client, info, "kube-system")
	lease, _ := leases.Get(context.Background(), "kinformer-controller-manager")
	fmt.Printf("holder %q, leaseTransitions %d\n", *lease.Spec.HolderIdentity, *lease.Spec.LeaseTransitions)
	// Output:
	// leader: node-a_5f2c
	// controllers running
	// controllers stopped
	// stopped leading
	// Run: <nil>
	// holder "", leaseTransitions 0
}
