// Package controllers holds what every controller of kinformer shares: the worker loop
// that takes keys from a rate-limited work queue and syncs them, and its metrics. The
// controllers themselves live in the subpackages (replicaset, deployment), with their
// building blocks (claim, expectations, events) and the process that runs them (manager).
//
// Everything here is built on the engine's public packages only (informer, workqueue,
// listwatch, object): a controller here is what an embedder can write.
//
// The loop is the canonical one: a worker takes a key (never the same key as another
// worker), syncs it, and then either forgets its failures (success) or puts it back with
// a per-key exponential backoff (failure) until MaxRetries, after which the key is
// dropped and the error recorded; the next change to the object enqueues it again.
package controllers
