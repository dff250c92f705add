package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/trace"
	"github.com/kinformer/kinformer/workqueue"
)

// tracing is `watch --trace`: sampled events are followed through every stage of the
// data path and printed with the time each stage took (see package trace). The engine
// ends at the handler; a controller goes on with a workqueue and workers, so with
// tracing on the handler puts each key on a workqueue drained by one worker, and the
// last two stages are real ones rather than a guess.
type tracing struct {
	on    bool
	every int

	collector *trace.Collector
	queue     *workqueue.Queue[string]
	// printf is the watch's output. start sets it before the informer runs, so before
	// any event can be reported.
	printf func(format string, args ...any)
}

func (tr *tracing) flags(fs *flag.FlagSet) {
	fs.BoolVar(&tr.on, "trace", false, "follow sampled events through the pipeline and print the time spent in each stage")
	fs.IntVar(&tr.every, "trace-every", 100, "with --trace, follow one watch event in N (1 follows all)")
}

func (tr *tracing) enabled() bool { return tr != nil && tr.on }

// tracer builds the collector once the flags are parsed; nil (tracing off) without
// --trace.
func (tr *tracing) tracer() (trace.Tracer, error) {
	if !tr.on {
		return nil, nil // not a nil *Collector: the engine's nil checks must see nil
	}
	if tr.every < 1 {
		return nil, usageError{"--trace-every must be at least 1"}
	}
	tr.collector = trace.NewCollector(trace.Options{Every: tr.every, Report: func(r trace.Record) {
		tr.printf("%s\n", r)
	}})
	return tr.collector, nil
}

// start runs the workqueue and its worker until ctx ends or stop is called. It returns
// what the handler calls for each object, and stop, which waits for the worker and says
// on progress how many of the followed events were printed, if any frame came, naming
// the informer as about does (describe: its name and the encoding its reads ask for).
func (tr *tracing) start(ctx context.Context, printf func(string, ...any), progress io.Writer, about string) (enqueue func(*object.Raw), stop func()) {
	tr.printf = printf
	tr.queue = workqueue.New(workqueue.Options[string]{Name: "trace"})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			key, err := tr.queue.GetContext(ctx)
			if err != nil {
				return // ctx ended or the queue shut down
			}
			tr.collector.MarkKey(trace.Taken, key)
			tr.queue.Done(key)
		}
	}()
	enqueue = func(o *object.Raw) {
		// Before Add: once added, the worker may take the key before this goroutine
		// runs again, and its mark must come second.
		tr.collector.Mark(trace.Enqueued, o)
		tr.queue.Add(object.Key(o))
	}
	stop = func() {
		tr.queue.ShutDown()
		<-done
		if st := tr.collector.Stats(); st.Frames > 0 {
			fmt.Fprintf(progress, "kinformer: trace of %s: followed %d of %d frames, printed %d, %d never reached the worker "+
				"(coalesced in the handler's buffer, dropped by the FIFO as a repeated delete, or still on the way)\n",
				about, st.Followed, st.Frames, st.Reported, st.Followed-st.Reported)
		}
	}
	return enqueue, stop
}
