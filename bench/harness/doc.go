// Package harness runs the end-to-end list/watch benchmark: for each scenario it starts a
// fresh stream server (bench/cmd/streamserver) or a real kube-apiserver, runs each
// engine's runner (bench/cmd/kinformer-runner, bench/clientgo/cmd/benchrunner) as its own
// process against it, alternating engines round by round so drift hits both alike, and
// writes the medians with their spread to bench/results/latest.md, with SVG charts.
//
// Both runners measure with the same code (package bench/measure) and are asked the same
// things; the harness only orchestrates, aggregates and reports. Targets are printed
// beside the figures, never asserted: a benchmark on a shared 2-core machine informs,
// it does not pass or fail.
package harness
