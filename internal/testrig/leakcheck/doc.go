// Package leakcheck fails a test that leaves goroutines running. Everything in kinformer
// must stop on context cancellation or Close, and a goroutine still running after the
// test is how a forgotten stop shows: a watch still reading, a timer still armed, a
// handler's goroutine never told to end. Check records what runs when a test starts and,
// when it ends, gives the goroutines winding down a grace period before it names the new
// ones; Goroutines is the same picture for the chaos run, which compares two moments of
// its own.
//
// It is a test rig, not part of the engine. The tests of nearly every package call it, so
// it imports nothing of kinformer.
package leakcheck
