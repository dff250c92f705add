package memtest

import (
	"reflect"
	"runtime"
)

// AfterGC runs two full garbage collections and returns the memory statistics read right
// after them: HeapAlloc is then the heap still reachable, what a test weighs a cache by.
// The second collection frees what the first left for finalizers to release.
//
// It is not the runtime's /gc/heap/live:bytes metric, which reports what the last
// collection found, whenever that ran, and collects nothing: a benchmark that samples a
// peak while the collector runs on its own reads that one instead.
func AfterGC() runtime.MemStats {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms
}

// SameMap reports whether a and b are one map, so that a write through one shows through
// the other; two equal maps are not. Two nil maps are the same map.
func SameMap[M ~map[K]V, K comparable, V any](a, b M) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
