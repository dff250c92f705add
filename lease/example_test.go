package lease_test

import (
	"context"
	"fmt"
	"time"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/lease"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// A process holds its Lease, and another judges from its own reads when that Lease
// expires. The fake clock stands in for clock.Real so that the output is fixed.
func Example() {
	sim := apisim.New(apisim.Options{})
	url, err := sim.Start("127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sim.Close()
	client, _ := listwatch.New(&listwatch.Config{Host: url})
	defer client.CloseIdleConnections()
	leases := listwatch.For[*object.Lease](client, listwatch.LeaseResource(), "kube-system")
	ctx := context.Background()
	clk := clock.NewFake(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	timing := lease.Timing{}.WithDefaults() // 15 s, 10 s, 2 s

	// The holder: its change creates the Lease when absent, renews it when its own, and
	// refuses it while another holds it.
	own := lease.NewOwn(leases, "worker", timing, clk)
	hold := func(cur *object.Lease) (*object.Lease, error) {
		if cur == nil {
			cur = &object.Lease{ObjectMeta: object.ObjectMeta{Namespace: "kube-system", Name: "worker"}}
		} else if h := lease.Holder(cur.Spec); h != "" && h != "node-a" {
			return nil, lease.ErrRefused
		}
		cur.Spec = lease.Stamp(cur.Spec, "node-a", timing, clk.Now())
		return cur, nil
	}
	start := clk.Now()
	for range 2 { // acquire, then renew a RetryPeriod later
		if out, err := own.Write(ctx, hold); out != lease.Written {
			fmt.Println("not written:", err)
			return
		}
		spec := own.Current().Spec
		fmt.Printf("%s holds it for %ds, transitions %d, acts until %v\n", *spec.HolderIdentity,
			*spec.LeaseDurationSeconds, *spec.LeaseTransitions, own.Deadline().Sub(start))
		clk.Step(timing.RetryPeriod)
	}

	// Another process: the Lease expires LeaseDuration after it last saw it change, on
	// its own clock, whatever renewTime says.
	watcher := lease.NewExpiry(clk, timing.LeaseDuration)
	l, _ := leases.Get(ctx, "worker")
	watcher.ObserveLease(l)
	clk.Step(timing.RenewDeadline)
	fmt.Println("past the holder's deadline, expired:", watcher.Expired("worker"))
	clk.Step(timing.LeaseDuration - timing.RenewDeadline)
	fmt.Println("a LeaseDuration after the last change, expired:", watcher.Expired("worker"))
	// Output:
	// node-a holds it for 15s, transitions 0, acts until 10s
	// node-a holds it for 15s, transitions 0, acts until 12s
	// past the holder's deadline, expired: false
	// a LeaseDuration after the last change, expired: true
}
