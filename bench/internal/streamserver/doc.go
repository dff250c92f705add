// Package streamserver is the apiserver stand-in of kinformer's end-to-end benchmark
// (kinformer and client-go's informer run in separate processes against it). At start-up
// it generates, deterministically from a seed, N distinct objects of one profile (~4.2 KB
// pods as a real cluster's, with managedFields; ~1 MiB secrets; small configmaps),
// pre-encodes each one to JSON once, whole and as PartialObjectMetadata, and then serves
// them over HTTP or HTTPS with the apiserver's shapes: discovery (/api, /api/v1, /apis,
// /version), paginated lists (limit, continue), watches of newline-delimited events
// (MODIFIED of object k%N, every 10th change a DELETED then an ADDED; then a BOOKMARK a
// second), the streaming list (sendInitialEvents=true: ADDED for every object, then the
// k8s.io/initial-events-end bookmark), and server-side sharding as kube-apiserver 1.36
// with the ShardedListAndWatch gate serves it (the shardSelector parameter on lists and
// watches, echoed in a list's metadata.shardInfo; Options.Namespaces spreads the objects
// over namespaces whose names hash evenly, Options.IgnoreShardSelector plays a server
// without the gate). It is never the bottleneck because nothing is encoded on the hot
// path: an event is its type prefix, the pre-encoded object bytes around two holes, the
// event's resourceVersion digits and a 19-digit send-time stamp (annotation
// bench.kinformer.io/sent-unix-nano, for latency), copied into a reused 256 KiB buffered
// writer and flushed every 64 events at full speed, or each at its own time at a fixed
// rate (sleeping in nanosleep(2), as the runtime's timers wake a millisecond late: see
// pace.go). That allocates nothing (TestEmitAllocatesNothing). BenchmarkEmit measures the
// hot path alone, on one core and in memory; BenchmarkWatchLoopback in bench/cmd/ceiling
// measures one loopback HTTP connection read by the ceiling client, which shares the
// cores with the server.
//
// Above LazyAbove pods (or with Options.Lazy) the server does not generate its objects
// up front but as it serves them (lazy.go): a few hundred pod templates are pre-encoded
// with more holes (namespace, name suffix, uid, pod IP, container ID), each filled from
// the pod's index when it is written, so that a million pods cost a few MB and no
// start-up time, and a pod still costs little more than its copies. The realistic-pods
// profile has a lazy mode too (realistic_lazy.go): a template per Deployment with a hole
// for each of a pod's own values (name, uid, node, IPs, times, container IDs, restarts),
// filled as the pod is written with the values the eager mode gives it, each pod being
// made from the seed and its index alone (realistic_layout.go).
//
// With Options.ProtobufObjects it also speaks the apiserver's protobuf encoding to the
// clients that ask for it (client-go's best configuration): the main module cannot
// encode a Pod in protobuf without k8s.io, so bench/clientgo/cmd/pbprep writes each
// object's message to a file, and the server, which frames messages by hand
// (protowire.go), finds each one's two holes by reading its metadata and serves lists
// (a runtime.Unknown around the list) and watches (length-prefixed WatchEvents) from
// them as it serves JSON, patching the holes in place (protofile.go, protobuf.go).
// PartialObjectMetadata and single gets stay JSON. The lazy mode has no protobuf: its
// pods are in no file, and New refuses the two together.
//
// The command is bench/cmd/streamserver; only it, the harness (for Options.NamespaceOf),
// bench/clientgo/cmd/pbprep and the benchmark's tests import this package.
package streamserver
