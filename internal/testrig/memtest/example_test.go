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

	before := memtest.AfterGC().HeapAlloc
	kept := make([]byte, 1<<20)
	after := memtest.AfterGC().HeapAlloc
	runtime.KeepAlive(kept)
	fmt.Println(after-before >= 1<<20)
	// Output:
	// true false
	// true
}
