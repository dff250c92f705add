// Command run starts the real control plane (etcd + kube-apiserver) on loopback for manual
// use, prints how to reach it, and tears it down on Ctrl-C. `make cluster` runs it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kinformer/kinformer/internal/testrig/cluster"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	c, err := cluster.Start(start, cluster.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
	defer c.Stop()
	fmt.Printf("kube-apiserver ready at %s\n  export KUBECONFIG=%s\nCtrl-C stops it.\n", c.URL, c.Kubeconfig)
	<-ctx.Done()
}
