// Package controllers holds what every controller of kinformer shares: the pool of
// workers that takes keys from a rate-limited work queue and syncs them, its metrics,
// the Runner that holds a controller's queue and workers, and Base, what a controller
// embeds to be run by a controller manager: its Runner, the event handlers that turn
// informer events about its objects and their dependents into keys (with Owners, which
// finds the owner of a dependent), its events, and the per-namespace Requeue and Forget
// of a sharded manager. The controllers themselves live in the subpackages (replicaset,
// deployment), with their building blocks (claim, expectations, consistency, events) and
// the process that runs them (manager).
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
// A sync may also be skipped: it returns a Skipped error when its informers have not yet
// shown the controller's own last write (package consistency's *StaleError: read your
// own writes). Such a key is no failure: it is retried with a short per-key backoff of
// its own (WorkerPool.SkipBackoff), never counts toward MaxRetries nor lengthens the
// backoff of a later failure, and is counted in
// kinformer_controller_stale_syncs_total{controller,resource}, not in the failures.
// kube-controller-manager retries it with the key's rate limit instead, which lets a
// cache that is slow to catch up use up a key's retries.
//
// A sharded controller manager moves namespaces between processes: it calls Requeue on
// each controller with the namespaces it takes over (their objects may have changed
// unseen), and Forget with those it hands away, once its Gate keeps the syncs out of them,
// so that no expectations or read-your-writes records of objects there outlive the
// hand-over.
package controllers
