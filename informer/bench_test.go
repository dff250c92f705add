package informer_test

import (
	"fmt"
	"testing"

	"github.com/kinformer/kinformer/bench/pipeline"
)

// BenchmarkPipeline measures one watch event's whole trip after the cache has synced:
// frame split and JSON decode (listwatch), deltafifo, transform and indexer update, and
// delivery to a handler. One op is one MODIFIED event of a ~1.6 KB pod; allocations are
// those of every goroutine on the path. bench/clientgo runs the same against client-go.
func BenchmarkPipeline(b *testing.B) {
	for _, objects := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("objects=%d", objects), func(b *testing.B) { pipeline.RunInformer(b, objects) })
	}
}
