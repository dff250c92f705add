// Package eventcheck is a handler for tests: it builds its picture of a resource only
// from an informer's events, and keeps every event that does not follow from the ones
// before it (an add of an object it holds; an update that does not start from the state
// it holds, or that spans two objects; a delete of an object it does not hold). A test
// then compares the picture with the server and asserts that Broken is empty.
//
// It checks the promise the informer makes to a handler, at the end of the data path:
// the events a handler sees, applied in order, rebuild the server's state. A test that
// compared only the cache with the server would miss an event lost or repeated and later
// papered over by a relist. The informer's tests, the end-to-end tests and the chaos run use it; it
// is a test rig, not part of the engine.
package eventcheck
