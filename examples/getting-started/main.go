// Command getting-started is the README's first program: it caches the pods of the
// cluster your kubeconfig names, prints each pod as the cache learns of it, and how many
// it holds once synced, until Ctrl-C.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg, err := listwatch.LoadKubeconfig(listwatch.LoadOptions{}) // $KUBECONFIG, then ~/.kube/config
	if err != nil {
		log.Fatal(err)
	}
	client, err := listwatch.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	f := informer.NewFactory(client, informer.FactoryOptions{})
	defer f.Shutdown()
	pods, err := informer.For[*object.Pod](ctx, f, "pods", informer.Selectors{}) // all namespaces
	if err != nil {
		log.Fatal(err)
	}
	pods.AddEventHandler(informer.HandlerFuncs[*object.Pod]{
		AddFunc: func(p *object.Pod, initial bool) { fmt.Println("pod", object.Key(p), p.Status.Phase) },
	}, informer.HandlerOptions{})
	f.Start(ctx)
	if err := f.WaitForSync(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(pods.Lister().List(object.Everything())), "pods cached")
	<-ctx.Done()
}
