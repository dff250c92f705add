// Package controllers holds what every controller of kinformer shares: the pool of
// workers that takes keys from a rate-limited work queue and syncs them, its metrics,
// the Runner a controller embeds to be run by a controller manager, and Owners, which
// finds the owner of a dependent object for the controller's event handlers. The
// controllers themselves live in the subpackages (replicaset, deployment), with their
// building blocks (claim, expectations, consistency, events) and the process that runs
// them (manager).
//
// Everything here is built on the engine's public packages only (informer, workqueue,
// listwatch, object): a controller here is what an embedder can write.
//
// The worker loop is the canonical one: a worker takes a key (never the same key as
// another worker), syncs it, and then either forgets its failures (success) or puts it
// back with a per-key exponential backoff (failure) until MaxRetries, after which the key
// is dropped and the error recorded; the next change to the object enqueues it again.
//
// A panic in a sync costs that sync, not the process: the pool recovers it, logs it at
// error level with its stack, counts it in kinformer_controller_panics_total and retries
// the key like a failure. Options.CrashOnPanic (WorkerPool.CrashOnPanic) lets it kill
// the process instead, after the log line.
//
// A sync that finds its informers have not yet shown the controller's own last write
// (package consistency: read your own writes) returns a *consistency.StaleError: the
// key is retried with its rate limit, as kube-controller-manager does, and counted in
// kinformer_controller_stale_syncs_total{controller,resource}, not as a failure.
package controllers
