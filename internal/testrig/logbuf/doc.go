// Package logbuf is a log destination for tests: the code under test writes to it on its
// own goroutines (a reflector logging a relist, a manager its leader election) while the
// test reads what was written. A plain bytes.Buffer shared that way is a data race, and
// the race detector would fail the test for a fault of its own.
//
// It is a test rig, not part of the engine, and imports nothing of kinformer.
package logbuf
