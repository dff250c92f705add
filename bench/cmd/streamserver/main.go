// Command streamserver serves pre-encoded Kubernetes objects over the apiserver's
// list/watch REST protocol, fast enough never to be the bottleneck of an informer
// benchmark (see package bench/internal/streamserver). Its reference client, which
// measures the most any client can read from it, is bench/cmd/ceiling.
//
//	streamserver [-addr 127.0.0.1:0] [-profile pods|secrets|configmaps] [-objects N]
//	             [-namespace bench] [-namespaces K] [-ignore-shard-selector]
//	             [-watch-events N] [-rate R] [-page-limit-max N]
//	             [-tls [-http2=false] -ca-out FILE] [-kubeconfig-out FILE] [-seed 1]
//	             [-managed-fields=false] [-secret-size BYTES] [-flush-every 64] [-quiet]
//
// With -namespaces K the objects are spread over K namespaces named after -namespace, for
// sharding by namespace; lists and watches honour the shardSelector parameter as
// kube-apiserver 1.36 with the ShardedListAndWatch gate does, or with
// -ignore-shard-selector ignore it as it does without.
//
// It prints one line, `LISTENING <base URL>`, to stdout and logs to stderr; it exits on
// SIGTERM or SIGINT.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kinformer/kinformer/bench/internal/streamserver"
)

func main() {
	log.SetFlags(log.Ltime | log.Lmicroseconds)
	log.SetPrefix("streamserver: ")
	if err := serve(os.Args[1:]); err != nil {
		log.Print(err)
		os.Exit(1)
	}
}

func serve(args []string) error {
	fs := flag.NewFlagSet("streamserver", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	var o streamserver.Options
	fs.StringVar(&o.Profile, "profile", "pods", "objects to serve: pods (~4 KB), secrets (~1 MiB), configmaps (~300 B-1 KB)")
	fs.IntVar(&o.Objects, "objects", 0, "number of objects (default 10000; 400 for secrets)")
	fs.StringVar(&o.Namespace, "namespace", "bench", "namespace of the objects (with -namespaces, the prefix of their namespaces)")
	fs.IntVar(&o.Namespaces, "namespaces", 1, `spread the objects over this many namespaces, "<namespace>-<8 hex>-<i>"`)
	fs.BoolVar(&o.IgnoreShardSelector, "ignore-shard-selector", false, "ignore the shardSelector parameter, as kube-apiserver without the ShardedListAndWatch gate (default: honour it)")
	fs.IntVar(&o.WatchEvents, "watch-events", 0, "events per watch connection before only bookmarks (0 = unlimited, -1 = none)")
	fs.Float64Var(&o.Rate, "rate", 0, "events per second per watch (0 = full speed)")
	fs.IntVar(&o.PageLimitMax, "page-limit-max", 0, "cap on list page size (0 = honour the client's limit)")
	fs.BoolVar(&o.TLS, "tls", false, "serve HTTPS with a self-signed certificate")
	h2 := fs.Bool("http2", true, "with -tls: offer HTTP/2, as the apiserver does (false: HTTP/1.1 only, about twice as fast)")
	caOut := fs.String("ca-out", "", "with -tls: write the certificate clients must trust (PEM) here")
	kubeconfigOut := fs.String("kubeconfig-out", "", "write a kubeconfig for the server here")
	fs.Int64Var(&o.Seed, "seed", 1, "seed of the generated objects")
	managed := fs.Bool("managed-fields", true, "include metadata.managedFields")
	fs.IntVar(&o.SecretSize, "secret-size", 1<<20, "JSON bytes per secret")
	fs.IntVar(&o.FlushEvery, "flush-every", 64, "full-speed watches flush every this many events")
	quiet := fs.Bool("quiet", false, "no log line per watch")
	_ = fs.Parse(args)
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.NoManagedFields = !*managed
	o.DisableHTTP2 = !*h2
	if !*quiet {
		o.Logf = log.Printf
	}
	if *caOut != "" && !o.TLS {
		return errors.New("-ca-out needs -tls")
	}

	began := time.Now()
	s, err := streamserver.New(o)
	if err != nil {
		return err
	}
	full, meta := s.ObjectBytes()
	log.Printf("%d %s in %d namespace(s) encoded in %v: %.0f bytes each (%.0f as metadata), list resourceVersion %d",
		s.Len(), o.Profile, max(o.Namespaces, 1), time.Since(began).Round(time.Millisecond), full, meta, s.ListResourceVersion())
	if *caOut != "" {
		if err := os.WriteFile(*caOut, s.CACertPEM(), 0o644); err != nil {
			return err
		}
	}
	url, err := s.Start(*addr)
	if err != nil {
		return err
	}
	if *kubeconfigOut != "" {
		if err := s.WriteKubeconfig(*kubeconfigOut); err != nil {
			return err
		}
	}
	fmt.Println("LISTENING " + url)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	got := <-sig
	err = s.Close()
	st := s.Stats()
	log.Printf("%v: %d lists, %d watches, %d events, %d bytes sent", got, st.Lists, st.Watches, st.Events, st.Bytes)
	return err
}
