// Package bench is the map of kinformer's benchmarks; it holds no code. Speed and memory
// are measured in benchmarks, never in timed tests, and targets are printed beside the
// figures, never asserted.
//
// # What to run
//
// From the repository's root:
//
//	make bench          the end-to-end benchmark, short plan (a few minutes): writes
//	                    latest.md and its four charts to bench/results/local/, which
//	                    git ignores (BENCH_OUT=DIR writes elsewhere)
//	make bench-full     the same with 100k pods, 1 MB Secrets, HTTPS and the real
//	                    kube-apiserver (built first, as for make test)
//	make bench-publish  make bench-full written over the published bench/results/,
//	                    the figures the README quotes
//	make bench-micro    every in-process Go benchmark of the engine's module
//	make bench-compare  the in-process benchmarks that run kinformer and client-go side
//	                    by side, in one process (module bench/clientgo)
//
// The harness takes a subset, for a quick look or to repeat one scenario:
//
//	go run ./bench/cmd/benchharness -plan short -only watch-pods,latency-5k -runs 1 -out /tmp/bench
//
// or the sharded scenarios alone (under a minute), with the client-side fallback too:
//
//	go run ./bench/cmd/benchharness -plan sharded -out /tmp/bench-sharded
//
// and each process it starts can be run by hand, the runners against any stream server
// (or, with -kubeconfig, any cluster):
//
//	go run ./bench/cmd/streamserver -addr 127.0.0.1:18080 -profile pods -objects 1000 \
//	    -namespace bench -watch-events 15000 -rate 5000
//	go run ./bench/cmd/kinformer-runner -server http://127.0.0.1:18080 -scenario latency \
//	    -resource pods -namespace bench -objects 1000 -events 15000
//	cd bench/clientgo && go run ./cmd/clientgo-runner -server http://127.0.0.1:18080 \
//	    -scenario latency -resource pods -namespace bench -objects 1000 -events 15000
//	go run ./bench/cmd/ceiling -url http://127.0.0.1:18080 -events 15000 -modes frame -latency
//
// # The sharded scenario
//
// "Initial sync of 100k pods in 1,000 namespaces, split over 1, 2 and 4 shards"
// (sync-100k-pods-sharded-1, -2 and -4, in the short plan; kinformer only, as client-go
// has no sharding) measures what one instance of a namespace-sharded controller costs.
// The stream server spreads the pods over 1,000 namespaces (-namespaces 1000, names that
// hash evenly under FNV-1a) and honours the shardSelector parameter as kube-apiserver
// 1.36 with the ShardedListAndWatch gate: it sends only the selected objects and echoes
// the selector in the list's metadata.shardInfo. Each run is one runner caching shard 0
// of N (-shards N -shard 0: what shard.Assign over members "0" … "N-1" gives "0") and
// reports its objects cached, time to synced and whole heap after GC; the report's one
// table holds each N's heap against the one shard's, the goal being about 1/N (the
// shard's share of the pods, which the buckets make uneven). The harness checks that each
// run cached exactly the shard's pods and that the server filtered.
// sync-100k-pods-sharded-4-client (make bench-full, -plan sharded) is the same with a
// server without the gate (-ignore-shard-selector): the informer filters by itself, so
// the cache shrinks but the sync costs what an unsharded one does. By hand:
//
//	go run ./bench/cmd/streamserver -addr 127.0.0.1:18080 -objects 100000 -namespaces 1000 \
//	    -watch-events -1 [-ignore-shard-selector]
//	go run ./bench/cmd/kinformer-runner -server http://127.0.0.1:18080 -scenario sync \
//	    -resource pods -shards 4 -shard 0
//
// # Resharding by the difference
//
// bench/cmd/shardbench (make bench-shards, about 15 s) runs sharded controller managers
// in one process against the in-memory apiserver and changes the group's membership (a
// member joins, another, one leaves): for each change it reports the objects the members
// listed against the objects whose owner changed, what relisting every changed part
// whole would have cost, and the balance after it. bench/results/sharded.md is its
// output.
//
// # A million pods
//
// sync-1m-pods (make bench-full) is the sync of 1,000,000 pods in 1,000 namespaces,
// listed across all of them, kinformer and client-go once each. The stream server
// generates them as it serves them (its lazy mode, the default above 200,000 pods:
// templates with holes filled from each pod's index), so it needs a few MB and no
// start-up, but serves them in JSON only: client-go-protobuf does not run there. Neither
// engine runs with a memory limit (the targets: synced in 15 s, in 1.5 GB of peak RSS);
// client-go needs about 12 GB. sync-1m-realistic-pods beside it is a million pods of the
// realistic corpus (-profile realistic-pods, lazy too: 13.7 KB of JSON a pod), kinformer
// only: client-go would need about 25 GB, more than the machine has. By hand, with
// profiles:
//
//	go run ./bench/cmd/streamserver -addr 127.0.0.1:18080 -objects 1000000 -namespaces 1000 \
//	    -watch-events -1
//	go run ./bench/cmd/kinformer-runner -server http://127.0.0.1:18080 -scenario sync \
//	    -resource pods -objects 1000000 -timeout 10m \
//	    -memprofile mem.pprof -cpuprofile cpu.pprof
//
// # The end-to-end benchmark
//
// kinformer and client-go's informer run as separate processes against the same server,
// measured by the same code:
//
//   - bench/cmd/benchharness (make bench, make bench-full) runs a plan: it builds the
//     programs below, and for each scenario starts a fresh server and each engine's runner
//     in turn. Its logic is bench/internal/harness (plans and scenarios, processes,
//     statistics, the report) and bench/internal/chart (the SVG bar charts).
//   - bench/cmd/streamserver is the apiserver stand-in: pre-encoded objects served with
//     the apiserver's list, watch and streaming-list protocol, fast enough never to be
//     the bottleneck (bench/internal/streamserver is its code).
//   - bench/cmd/ceiling is the server's reference client: it only reads and frames (or
//     tokenizes) the same watch, for the limit line of the report and the latency floor;
//     with -protobuf it frames the server's protobuf (watch frames and list items by
//     their length prefixes), the floor of the protobuf bytes (read+frame-protobuf) that
//     the report holds kinformer-protobuf (kinformer-runner -protobuf) against.
//   - bench/cmd/kinformer-runner and bench/clientgo/cmd/clientgo-runner are the two
//     engines' runners: each builds its engine's informer as its flags ask, and
//     bench/measure times it and prints one JSON result line. Package measure is public:
//     `kinformer bench sync` measures with it against any cluster.
//   - bench/results holds the last results (latest.md, events.svg, memory.svg,
//     latency.svg, sync.svg) and analysis.md, the hand-written account of a missed target
//     that the report quotes.
//
// # In-process micro-benchmarks
//
// Each package benchmarks its own step next to its tests (make bench-micro): framing and
// decoding in listwatch, internal/jsonscan and object, the whole data path from a watch's
// bytes to a handler and a relist's peak memory in informer, the queue in workqueue, the
// stream server's hot path in bench/internal/streamserver and its loopback rate in
// bench/cmd/ceiling. The bodies that client-go runs too live in
// internal/testrig/pipelinebench (the informer's data path) and internal/testrig/queuebench
// (the work queue), so that both engines run the very same code.
//
// # The client-go module
//
// bench/clientgo has its own go.mod, so that the engine's never names k8s.io: its tests
// (make bench-compare) run internal/testrig/pipelinebench and internal/testrig/queuebench
// on client-go next to kinformer, cmd/clientgo-runner is client-go's runner, and
// cmd/watchrunner prints client-go's informer events for the chaos package's recovery
// comparison.
package bench
