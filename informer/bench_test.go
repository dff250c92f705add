package informer_test

import (
	"fmt"
	"testing"

	"github.com/kinformer/kinformer/internal/testrig/pipelinebench"
)

// BenchmarkPipeline measures one watch event's whole trip after the cache has synced:
// frame split and JSON decode (listwatch), deltafifo, transform and indexer update, and
// delivery to a handler. One op is one MODIFIED event of a ~1.6 KB pod; allocations are
// those of every goroutine on the path. bench/clientgo runs the same against client-go.
func BenchmarkPipeline(b *testing.B) {
	for _, objects := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("objects=%d", objects), func(b *testing.B) { pipelinebench.RunInformer(b, b.N, objects) })
	}
}

// BenchmarkPipelineTraced is BenchmarkPipeline (1k objects) with tracing on: one event
// in 100 followed to the handler, as `kinformer watch --trace` does by default, and
// every event. Compare with BenchmarkPipeline/objects=1000 in the same run.
func BenchmarkPipelineTraced(b *testing.B) {
	for _, every := range []int{100, 1} {
		b.Run(fmt.Sprintf("every=%d", every), func(b *testing.B) { pipelinebench.RunInformerTraced(b, b.N, 1000, every) })
	}
}

// BenchmarkRelistMemory measures a relist's peak live heap against the store's size
// (see pipelinebench.RunRelistMemory): after a 410, none, a tenth, or all of 10k pods changed.
// Run it once per case: go test -run '^$' -bench RelistMemory -benchtime 1x ./informer
func BenchmarkRelistMemory(b *testing.B) {
	for _, changed := range []float64{0, 0.1, 1} {
		b.Run(fmt.Sprintf("changed=%g", changed), func(b *testing.B) { pipelinebench.RunRelistMemory(b, b.N, 10000, changed) })
	}
}
