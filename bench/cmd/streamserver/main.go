// Command streamserver serves pre-encoded Kubernetes objects over the apiserver's
// list/watch REST protocol, fast enough never to be the bottleneck of an informer
// benchmark (see package bench/internal/streamserver). Its reference client, which
// measures the most any client can read from it, is bench/cmd/ceiling.
//
//	streamserver [-addr 127.0.0.1:0] [-profile pods|realistic-pods|secrets|configmaps] [-objects N]
//	             [-namespace bench] [-namespaces K] [-ignore-shard-selector]
//	             [-watch-events N] [-rate R] [-page-limit-max N]
//	             [-tls [-http2=false] -ca-out FILE] [-kubeconfig-out FILE] [-seed 1]
//	             [-managed-fields=false] [-secret-size BYTES] [-flush-every 64] [-lazy]
//	             [-quiet] [-protobuf-objects FILE]
//
// With -namespaces K the objects are spread over K namespaces named after -namespace, for
// sharding by namespace; lists and watches honour the shardSelector parameter as
// kube-apiserver 1.36 with the ShardedListAndWatch gate does, or with
// -ignore-shard-selector ignore it as it does without.
//
// With -lazy, and by default above 200,000 pods (streamserver.LazyAbove), pods (of the
// pods and the realistic-pods profiles) are generated as they are served instead of all
// at start-up: a million take a few MB.
//
// With -protobuf-objects FILE, made by bench/clientgo/cmd/pbprep with the same flags, it
// also serves lists and watches in protobuf to clients that ask for it (client-go with
// ContentType application/vnd.kubernetes.protobuf); not in the lazy mode, whose pods are
// not in any file.
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
	var f streamserver.Flags
	f.Register(fs)
	_ = fs.Parse(args)
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o := f.Resolve()
	if f.CAOut != "" && !o.TLS {
		return errors.New("-ca-out needs -tls")
	}

	began := time.Now()
	s, err := streamserver.New(o)
	if err != nil {
		return err
	}
	full, meta := s.ObjectBytes()
	how := "encoded"
	if s.Lazy() {
		how = "to be generated as served, templates encoded"
	}
	log.Printf("%d %s in %d namespace(s) %s in %v: %.0f bytes each (%.0f as metadata), list resourceVersion %d",
		s.Len(), o.Profile, max(o.Namespaces, 1), how, time.Since(began).Round(time.Millisecond), full, meta, s.ListResourceVersion())
	if o.ProtobufObjects != "" {
		log.Printf("protobuf encodings of the objects from %s", o.ProtobufObjects)
	}
	if f.CAOut != "" {
		if err := os.WriteFile(f.CAOut, s.CACertPEM(), 0o644); err != nil {
			return err
		}
	}
	url, err := s.Start(f.Addr)
	if err != nil {
		return err
	}
	if f.KubeconfigOut != "" {
		if err := s.WriteKubeconfig(f.KubeconfigOut); err != nil {
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
