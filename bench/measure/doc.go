// Package measure is the measuring half of the end-to-end list/watch benchmark's runners:
// bench/cmd/kinformer-runner (kinformer) and bench/clientgo/cmd/clientgo-runner
// (client-go's shared informer, in its own module so the engine's go.mod never names
// k8s.io). Each runner only builds its engine's informer behind the Engine interface; the flags, the
// handlers, the clocks, the counters, the statistics and the JSON result line are all
// this package's, so a difference between the two results comes from the engines and not
// from two ways of measuring. It imports only the standard library and
// internal/memlimit.
//
// # Flags
//
// Both runners take the same flags (see ParseFlags): where the server is (-server URL
// with -ca FILE, or -kubeconfig FILE), what to watch (-resource pods|secrets|configmaps,
// -namespace), the scenario (-scenario sync|watch|latency|fanout), how much to expect
// (-objects, -events), and the engine's options, applied alike: -keep-managed-fields
// (both strip metadata.managedFields by default), -streaming-list (both list+watch by
// default; client-go v0.36 would otherwise stream, its WatchListClient gate being on by
// default, so the client-go runner sets that gate from the flag), -handlers and
// -slow-handler, -metadata-only, -protobuf, -shards N -shard I
// (kinformer only, a ShardedEngine: cache member I's part of the resource split by
// namespace among N processes, as shard.Assign gives it), -timeout, and -memory-limit
// SIZE (a soft memory limit, runtime/debug.SetMemoryLimit, set at the start of the
// measurement: the benchmark may choose one, the engines never set it themselves; the
// result's memory_limit_bytes records it).
//
// # What is measured, and how
//
// Every scenario starts with a sync, timed from the first line of main (Begin), before
// the client is built, to the moment the informer and every handler registration have
// synced and the cache holds -objects objects: sync_seconds. Discovery, if the engine
// does it, is part of it. The baseline heap is taken just before the informer starts (two
// runtime.GC, then MemStats.HeapAlloc), and the time that takes is subtracted.
//
//   - sync: two runtime.GC right after the sync, then MemStats.HeapAlloc is
//     heap_after_gc_bytes (the live heap: cache, client, everything), and
//     heap_per_object_bytes is (heap_after_gc − baseline) / objects.
//   - watch: one no-op handler counts the notifications after the initial ones. The
//     window opens at the first and closes at the -events'th; over it the runner reads
//     getrusage(RUSAGE_SELF) user+sys (cpu_seconds, and per 1000 events) and MemStats
//     Mallocs and TotalAlloc (allocs_per_event, bytes_alloc_per_event). Rates and
//     per-event figures divide by the events inside the window, -events − 1.
//   - latency: as watch, but the handler reads the bench.kinformer.io/sent-unix-nano
//     annotation the stream server stamps on every event (SentUnixNano) and records now −
//     sent; p50, p99 and p99.9 are exact (the samples are sorted, see Percentiles).
//   - fanout: -handlers handlers; with -slow-handler D one of them sleeps D on each
//     watch notification, the others record latency as above. The window closes when
//     every fast handler has seen -events notifications; events_per_sec is the rate each
//     fast handler was served at, the latencies are the fast handlers', and
//     slow_handler_events is how many the slow one had received by then (kinformer
//     coalesces a handler more than its buffer behind, client-go queues without bound).
//
// A handler counts OnAdd(initial=false), OnUpdate and OnDelete; the initial adds
// (kinformer's initial flag, client-go's isInInitialList) are not watch events. The slow
// handler does not sleep on them either, so the sync is the same in every scenario.
// After the window, except in sync, heap_after_gc_bytes is read the same way: in fanout it
// holds the slow handler's backlog. peak_rss_bytes is VmHWM from /proc/self/status at the
// end. mode is the initial-state mode the engine actually used (kinformer: its reflector's
// status; client-go: the requests it sent, see ModeObserver); a run whose mode differs
// from the one asked for fails rather than report the wrong row. With -shards,
// shard_filtering is who kept the other shards out of the cache: "server" when the
// server honoured the shardSelector, "client" when it sent everything and the engine
// dropped what lies outside (ShardedEngine).
//
// # Output
//
// One JSON line (Result) on stdout at the end, whatever happens; exit status 0 on
// success, 1 when the measurement failed (error says why: a timeout names what was still
// awaited), 2 for bad flags. Diagnostics go to stderr.
package measure
