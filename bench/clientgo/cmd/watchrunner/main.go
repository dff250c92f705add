// Command watchrunner runs client-go's shared informer on one resource and prints each
// event as `ADD|UPDATE|DELETE namespace/name rv=N`, like `kinformer watch`, so a test can
// time both engines from outside on the same events.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file")
	namespace := flag.String("n", "default", "namespace")
	flag.Parse()
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg.QPS, cfg.Burst = 1000, 1000 // as kinformer's runner: no client-side throttling
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var mu sync.Mutex
	print := func(kind string, cm *corev1.ConfigMap) {
		mu.Lock()
		fmt.Printf("%-7s %s/%s rv=%s\n", kind, cm.Namespace, cm.Name, cm.ResourceVersion)
		mu.Unlock()
	}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(*namespace))
	inf := f.Core().V1().ConfigMaps().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { print("ADD", o.(*corev1.ConfigMap)) },
		UpdateFunc: func(_, o any) { print("UPDATE", o.(*corev1.ConfigMap)) },
		DeleteFunc: func(o any) {
			if cm, ok := o.(*corev1.ConfigMap); ok {
				print("DELETE", cm)
			}
		},
	})
	stop := make(chan struct{})
	f.Start(stop)
	cache.WaitForCacheSync(stop, inf.HasSynced)
	fmt.Println("SYNCED")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	close(stop)
	f.Shutdown()
}
