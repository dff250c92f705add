// Package memtest holds what kinformer's tests and benchmarks use to look at memory:
// the heap that is live after a full collection (AfterGC), and whether two maps are one
// map rather than two equal ones (SameMap), which is what sharing label maps promises.
// It is a test rig, not part of the engine, and imports nothing of kinformer, so that the
// tests of every package can use it.
package memtest
