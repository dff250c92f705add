// Package clock is the time the engine reads: Now and AfterFunc, nothing else.
//
// Every exported Clock option (reflector, informer, workqueue, listwatch's WatchOptions,
// trace) takes this interface, so an embedder can run the engine on a clock of their own:
// a Fake that moves only when told, or an adapter to the clock their program already
// uses. nil in an option means Real, the wall clock.
//
// Fake runs due timers synchronously inside Step, earliest first, which makes a test of
// backoff or resync deterministic without sleeping. Tests that only need time to pass
// quickly may prefer testing/synctest with the Real clock.
package clock
