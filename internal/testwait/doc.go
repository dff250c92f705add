// Package testwait holds the waiting helpers of kinformer's tests: polling until a
// condition holds (Eventually, Until) and a context bounded by a timeout and by the test
// (Context). It imports nothing of kinformer, so that the tests of every package, the
// simulator's and the client's included, can use it without an import cycle.
package testwait
