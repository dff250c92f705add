package clientgo

import (
	"fmt"
	"testing"

	cgworkqueue "k8s.io/client-go/util/workqueue"

	"github.com/kinformer/kinformer/internal/testrig/queuebench"
	"github.com/kinformer/kinformer/workqueue"
)

// cgQueue adapts client-go's typed queue to the harness.
type cgQueue struct {
	cgworkqueue.TypedInterface[int]
}

func (q cgQueue) Get() (int, bool) { return q.TypedInterface.Get() }

func impls() []struct {
	name     string
	queue    func() queuebench.Queue
	delaying func() queuebench.DelayingQueue
} {
	return []struct {
		name     string
		queue    func() queuebench.Queue
		delaying func() queuebench.DelayingQueue
	}{
		{"kinformer",
			func() queuebench.Queue { return workqueue.New(workqueue.Options[int]{}) },
			func() queuebench.DelayingQueue { return workqueue.New(workqueue.Options[int]{}) }},
		{"client-go",
			func() queuebench.Queue { return cgQueue{cgworkqueue.NewTyped[int]()} },
			func() queuebench.DelayingQueue { return cgworkqueue.NewTypedDelayingQueue[int]() }},
	}
}

// BenchmarkThroughput runs the same harness on both queues; compare within one run.
func BenchmarkThroughput(b *testing.B) {
	for _, workers := range []int{1, 8, 64} {
		for _, impl := range impls() {
			b.Run(fmt.Sprintf("workers=%d/%s", workers, impl.name), func(b *testing.B) {
				queuebench.Throughput(b, b.N, workers, impl.queue)
			})
		}
	}
}

func BenchmarkAddAfter100kPending(b *testing.B) {
	for _, impl := range impls() {
		b.Run(impl.name, func(b *testing.B) {
			queuebench.AddAfterPending(b, b.N, 100_000, impl.delaying)
		})
	}
}
