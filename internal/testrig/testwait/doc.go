// Package testwait holds the waiting helpers of kinformer's tests: polling until a
// condition holds (Eventually and Until, which fail the test when it does not in time;
// Poll, which reports whether it did, for a caller that handles the timeout itself), at
// DefaultInterval or at a Poller's own (Every), and a context bounded by a timeout and
// by the test (Context). It imports nothing of kinformer, so that the tests of every
// package, the simulator's and the client's included, can use it without an import
// cycle. It is a test rig, not part of the engine.
package testwait
