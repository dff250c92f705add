package pipelinebench

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
	"github.com/kinformer/kinformer/trace"
)

// RunInformer is the kinformer side of the pipeline benchmark: an informer over a Source
// of `objects` pods syncs, then the timer covers n (b.N) MODIFIED events from the
// recorded stream to the handler.
func RunInformer(b B, n, objects int) { runInformer(b, n, objects, nil) }

// RunInformerTraced is RunInformer with tracing on, one event in every followed up to
// the handler (see package trace): what tracing costs the events it follows and the
// ones it does not.
func RunInformerTraced(b B, n, objects, every int) {
	runInformer(b, n, objects, trace.NewCollector(trace.Options{Every: every, Last: trace.Delivered}))
}

func runInformer(b B, n, objects int, tracer trace.Tracer) {
	src := NewSource(objects, n)
	b.SetBytes(int64(src.StreamBytes() / n))
	inf, err := informer.New[*object.Pod](src, informer.Options[*object.Pod]{Reflector: reflector.Options{WatchTimeoutMin: time.Hour}, Tracer: tracer})
	if err != nil {
		b.Fatal(err)
	}
	var updates atomic.Int64
	done := make(chan struct{})
	_, _ = inf.AddEventHandler(informer.HandlerFuncs[*object.Pod]{UpdateFunc: func(_, _ *object.Pod) {
		if updates.Add(1) == int64(n) {
			close(done)
		}
	}}, informer.HandlerOptions{BufferSize: 1 << 20, Tracer: tracer})
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
}
