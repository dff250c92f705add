// Package harness runs the end-to-end list/watch benchmark for bench/cmd/benchharness:
// for each scenario of a plan (Short for make bench, Full for make bench-full, Sharded
// for the sharded scenarios alone) it starts a fresh stream server
// (bench/cmd/streamserver) or a real kube-apiserver, runs each engine's runner
// (bench/cmd/kinformer-runner, bench/clientgo/cmd/clientgo-runner) as its own process
// against it, alternating engines round by round so drift hits both alike, and writes
// the medians with their spread to latest.md (in bench/results/local/, or the published
// bench/results/ under make bench-publish), with SVG charts (drawn by
// bench/internal/chart). The limit line and the latency floor come from the ceiling
// client (bench/cmd/ceiling) reading the same server.
//
// client-go runs with JSON, its default, and in the main scenarios also with protobuf
// (engine client-go-protobuf), its fastest configuration, and so does kinformer (engine
// kinformer-protobuf, kinformer-runner -protobuf): the harness then has
// bench/clientgo/cmd/pbprep encode the server's objects once per distinct server flags
// (protobuf.go) and starts the server with -protobuf-objects, for every engine alike.
// The targets hold kinformer against whichever of client-go's two does better, and
// kinformer-protobuf against client-go-protobuf, each protobuf target beside the floor
// of the same protobuf bytes (read+frame-protobuf: the ceiling client with -protobuf).
// Against the real kube-apiserver the harness also reads that process's CPU time
// (/proc/PID/stat) before and after each runner: the apiserver's CPU per sync.
//
// Both runners measure with the same code (package bench/measure) and are asked the same
// things; the harness only orchestrates, aggregates and reports. Targets are printed
// beside the figures, never asserted: a benchmark on a shared 2-core machine informs,
// it does not pass or fail.
package harness
