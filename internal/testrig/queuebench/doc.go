// Package queuebench is the body of the work queue benchmarks, written against a minimal
// interface so that kinformer's queue (workqueue's BenchmarkThroughput and
// BenchmarkAddAfter100kPending) and client-go's (bench/clientgo, make bench-compare) run
// the very same code, in the same process for the comparison.
//
// It is a benchmark rig, not part of the engine. It is not a test file because two
// modules' tests share it, and it does not import package testing: a benchmark passes its
// *testing.B as a B, and its b.N as n.
package queuebench
