package queuebench_test

import (
	"fmt"

	"github.com/kinformer/kinformer/internal/testrig/queuebench"
	"github.com/kinformer/kinformer/workqueue"
)

// quiet stands in for the *testing.B a benchmark passes.
type quiet struct{}

func (quiet) ReportAllocs()                     {}
func (quiet) ResetTimer()                       {}
func (quiet) StopTimer()                        {}
func (quiet) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

// A benchmark passes its *testing.B and b.N: queuebench.Throughput(b, b.N, 8, newQueue).
// Here 1,000 items go through a queue with 8 workers.
func Example() {
	queuebench.Throughput(quiet{}, 1000, 8, func() queuebench.Queue {
		return workqueue.New(workqueue.Options[int]{})
	})
	fmt.Println("every item processed once")
	// Output: every item processed once
}
