package informer_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kinformer/kinformer/bench/pipeline"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
)

// BenchmarkPipeline measures one watch event's whole trip after the cache has synced:
// frame split and JSON decode (listwatch), deltafifo, transform and indexer update, and
// delivery to a handler. One op is one MODIFIED event of a ~1.6 KB pod; allocations are
// those of every goroutine on the path.
func BenchmarkPipeline(b *testing.B) {
	for _, objects := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("objects=%d", objects), func(b *testing.B) {
			src := pipeline.NewSource(objects, b.N)
			b.SetBytes(int64(src.StreamBytes() / b.N))
			inf := informer.New[*object.Pod](src, informer.Options[*object.Pod]{
				Reflector: reflector.Options{WatchTimeoutMin: time.Hour}})
			var updates atomic.Int64
			done := make(chan struct{})
			inf.AddEventHandler(informer.HandlerFuncs[*object.Pod]{
				UpdateFunc: func(_, _ *object.Pod) {
					if updates.Add(1) == int64(b.N) {
						close(done)
					}
				},
			}, informer.HandlerOptions{BufferSize: 1 << 20})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go inf.Run(ctx)
			if err := informer.WaitForSync(ctx, inf); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			src.Start()
			<-done
			b.StopTimer()
		})
	}
}
