// Package pipelinebench is the body of the informer's data-path benchmarks: a recorded
// stream of realistic pod events (PodJSON, Source) timed from the watch's bytes to a
// handler (RunInformer, RunInformerTraced), and the peak memory of a relist
// (RunRelistMemory). The informer package's BenchmarkPipeline, BenchmarkPipelineTraced
// and BenchmarkRelistMemory run it, and bench/clientgo runs BenchmarkPipeline on
// client-go's informer with the very same bytes, for make bench-compare.
//
// It is a benchmark rig, not part of the engine. It is not a test file because two
// modules' tests share it, and it does not import package testing: a benchmark passes its
// *testing.B as a B, and its b.N as n.
package pipelinebench
