// Package consistency lets a controller read its own writes: it remembers, per owner
// (the object a work-queue key names), the resourceVersion of the controller's newest
// write of each resource, and tells a sync to wait while an informer's cache is older
// than that write. kube-controller-manager 1.36 does the same for its ReplicaSet
// controller (the StaleControllerConsistencyReplicaSet feature, beta and on by default).
//
// Expectations (package expectations) count creates and deletes until the informer shows
// them. Every other write escapes them: a status written, an object adopted by a patch,
// a ReplicaSet scaled. A sync that comes before the informer has delivered such a write
// works from the state before it, and writes again, or decides from an old status. So
// the controller records each write's answer (WroteAt) and starts each sync with Ready:
// while a cache is behind, Ready returns a *StaleError and the sync is skipped and
// retried. A *StaleError is a controllers.Skipped: controllers.WorkerPool requeues the key
// with a short backoff of its own, which never counts toward the key's retries (a cache
// that catches up late is no failure), and counts it in
// kinformer_controller_stale_syncs_total. kube-controller-manager requeues it with the
// key's rate limit instead, as after a failure.
//
// resourceVersions are compared as Kubernetes allows since 1.35 (KEP-5504,
// object.CompareResourceVersion), against each informer's LastStoreSyncResourceVersion,
// which watch bookmarks move too. A version that cannot be compared (an older
// apiserver) or an informer that has not listed yet never blocks a sync.
//
// The records stay bounded: an owner's record goes when Ready finds every cache caught
// up, when the owner is deleted (Clear), and when a sharded controller manager hands its
// namespace to another process (ClearNamespaces).
package consistency
