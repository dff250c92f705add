package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// runDemo needs no cluster: it starts the simulated apiserver in-process, churns pods
// through the REST client, and prints what an informer's handler sees, as
// `kinformer watch` does, for a bounded time.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	duration := fs.Duration("duration", 10*time.Second, "how long to run")
	if _, err := parseInterspersed(fs, args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *duration)
	defer cancel()

	sim := apisim.New(apisim.Options{BookmarkInterval: time.Second})
	url, err := sim.Start("127.0.0.1:0")
	if err != nil {
		return err
	}
	defer sim.Close()
	c, err := listwatch.New(&listwatch.Config{Host: url, Namespace: "default"})
	if err != nil {
		return err
	}
	defer c.CloseIdleConnections()
	info, err := c.Discover(ctx, "pods")
	if err != nil {
		return err
	}
	pods := listwatch.For[*object.Pod](c, info, "default")
	fmt.Fprintf(stdout, "# simulated apiserver at %s; churning pods for %s\n", url, *duration)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		churn(ctx, pods)
	}()
	f := informer.NewFactory(c, informer.FactoryOptions{})
	inf, err := informer.For[*object.Raw](ctx, f, "pods", informer.Selectors{Namespace: "default"})
	if err == nil {
		s := &session{factory: f, inf: inf, res: listwatch.For[*object.Raw](c, info, "default"), host: url}
		err = s.watch(ctx, stdout, stderr)
	}
	cancel()
	wg.Wait()
	fmt.Fprintln(stdout, "# demo finished")
	return err
}

// churn creates, relabels and deletes pods at a steady pace until ctx ends.
func churn(ctx context.Context, pods *listwatch.Resource[*object.Pod]) {
	rng := rand.New(rand.NewPCG(1, 2))
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	live := []string{}
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		switch {
		case len(live) < 3 || rng.IntN(3) == 0:
			name := fmt.Sprintf("web-%d", n)
			if _, err := pods.Create(ctx, &object.Pod{ObjectMeta: object.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}}}); err == nil {
				live = append(live, name)
			}
		case rng.IntN(2) == 0:
			name := live[rng.IntN(len(live))]
			patch := fmt.Sprintf(`{"metadata":{"labels":{"round":"%d"}}}`, n)
			_, _ = pods.Patch(ctx, name, listwatch.MergePatch, []byte(patch), "")
		default:
			i := rng.IntN(len(live))
			_ = pods.Delete(ctx, live[i], listwatch.DeleteOptions{})
			live = append(live[:i], live[i+1:]...)
		}
	}
}
