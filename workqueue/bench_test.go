package workqueue_test

import (
	"fmt"
	"testing"

	"github.com/kinformer/kinformer/internal/testrig/queuebench"
	"github.com/kinformer/kinformer/workqueue"
)

func BenchmarkThroughput(b *testing.B) {
	for _, workers := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			queuebench.Throughput(b, b.N, workers, func() queuebench.Queue {
				return workqueue.New(workqueue.Options[int]{})
			})
		})
	}
}

func BenchmarkAddAfter100kPending(b *testing.B) {
	queuebench.AddAfterPending(b, b.N, 100_000, func() queuebench.DelayingQueue {
		return workqueue.New(workqueue.Options[int]{})
	})
}
