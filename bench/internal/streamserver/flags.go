package streamserver

import (
	"flag"
	"fmt"
	"log"
)

// Flags are bench/cmd/streamserver's command-line flags: the Options and what the
// command itself does. bench/clientgo/cmd/pbprep takes the same flags, so that the
// harness can hand it the server's to make the objects the server will make.
type Flags struct {
	Options
	Addr          string
	HTTP2         bool   // with TLS, offer HTTP/2
	CAOut         string // with TLS, write the certificate here
	KubeconfigOut string
	ManagedFields bool
	Quiet         bool
}

// Register defines the flags on fs, with their defaults.
func (f *Flags) Register(fs *flag.FlagSet) {
	o := &f.Options
	fs.StringVar(&f.Addr, "addr", "127.0.0.1:0", "listen address")
	fs.StringVar(&o.Profile, "profile", "pods", "objects to serve: pods (~4 KB), realistic-pods (pods as a multi-tenant cluster's: 60 namespaces, ~210 Deployments, 1-4 containers), secrets (~1 MiB), configmaps (~300 B-1 KB)")
	fs.IntVar(&o.Objects, "objects", 0, "number of objects (default 10000; 400 for secrets)")
	fs.StringVar(&o.Namespace, "namespace", "bench", "namespace of the objects (with -namespaces, the prefix of their namespaces)")
	fs.IntVar(&o.Namespaces, "namespaces", 1, `spread the objects over this many namespaces, "<namespace>-<8 hex>-<i>"`)
	fs.BoolVar(&o.IgnoreShardSelector, "ignore-shard-selector", false, "ignore the shardSelector parameter, as kube-apiserver without the ShardedListAndWatch gate (default: honour it)")
	fs.IntVar(&o.WatchEvents, "watch-events", 0, "events per watch connection before only bookmarks (0 = unlimited, -1 = none)")
	fs.Float64Var(&o.Rate, "rate", 0, "events per second per watch (0 = full speed)")
	fs.IntVar(&o.PageLimitMax, "page-limit-max", 0, "cap on list page size (0 = honour the client's limit)")
	fs.BoolVar(&o.TLS, "tls", false, "serve HTTPS with a self-signed certificate")
	fs.BoolVar(&f.HTTP2, "http2", true, "with -tls: offer HTTP/2, as the apiserver does (false: HTTP/1.1 only, about twice as fast)")
	fs.StringVar(&f.CAOut, "ca-out", "", "with -tls: write the certificate clients must trust (PEM) here")
	fs.StringVar(&f.KubeconfigOut, "kubeconfig-out", "", "write a kubeconfig for the server here")
	fs.Int64Var(&o.Seed, "seed", 1, "seed of the generated objects")
	fs.BoolVar(&f.ManagedFields, "managed-fields", true, "include metadata.managedFields")
	fs.IntVar(&o.SecretSize, "secret-size", 1<<20, "JSON bytes per secret")
	fs.IntVar(&o.FlushEvery, "flush-every", 64, "full-speed watches flush every this many events")
	fs.BoolVar(&o.Lazy, "lazy", false, fmt.Sprintf("pods and realistic-pods only: generate the pods as they are served, not all at start-up (the default above %d pods; no -protobuf-objects)", LazyAbove))
	fs.StringVar(&o.ProtobufObjects, "protobuf-objects", "", "serve lists and watches in protobuf to clients asking for it, from this file of the objects' encodings (made by bench/clientgo/cmd/pbprep with the same flags; not in the lazy mode)")
	fs.BoolVar(&f.Quiet, "quiet", false, "no log line per watch")
}

// Resolve is the Options the flags say, once parsed.
func (f *Flags) Resolve() Options {
	o := f.Options
	o.NoManagedFields = !f.ManagedFields
	o.DisableHTTP2 = !f.HTTP2
	if !f.Quiet {
		o.Logf = log.Printf
	}
	return o
}
