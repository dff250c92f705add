package memtest_test

import (
	"fmt"
	"maps"
	"runtime"

	"github.com/kinformer/kinformer/internal/testrig/memtest"
)

// SameMap tells one map from an equal copy; AfterGC weighs what a structure keeps alive.
func Example() {
	labels := map[string]string{"app": "web"}
	shared, copied := labels, maps.Clone(labels)
	fmt.Println(memtest.SameMap(labels, shared), memtest.SameMap(labels, copied))

	// What else the process frees meanwhile (the test framework's buffers) makes the
	// difference a little less than what is kept: weigh 8 MB, and allow one.
	before := memtest.AfterGC().HeapAlloc
	kept := make([]byte, 8<<20)
	after := memtest.AfterGC().HeapAlloc
	runtime.KeepAlive(kept)
	fmt.Println(after > before && after-before >= 7<<20)
	// Output:
	// true false
	// true
}
