// Package apisim is an in-memory apiserver that speaks the Kubernetes REST list/watch
// protocol over HTTP, for unit tests, the demo and benchmarks.
//
// It serves any registered resource with the URLs and JSON of kube-apiserver: discovery,
// paginated lists whose continue tokens expire, watches from a resourceVersion over a
// bounded history (older → 410 Expired), bookmarks, streaming lists ending with the
// initial-events-end bookmark, create/update/merge-patch/delete with resourceVersion and
// uid preconditions, /status and /scale subresources, finalizers, generation bumps on
// spec changes, label and field selectors, shard selectors (shardSelector, answered
// with metadata.shardInfo, and a malformed one refused, as kube-apiserver 1.36 with the
// ShardedListAndWatch gate does), and websocket watches. For pods it serves the
// binding subresource and graceful deletion, which a kubelet (package fakekubelet)
// finishes; Nodes, as in kube-apiserver, keep the status they are created with.
//
// It also does the work of kube-controller-manager's garbage collector: cascading
// deletion through metadata.ownerReferences, with the propagation policies of a DELETE
// (propagationPolicy Background, the default, Foreground or Orphan, or the older
// orphanDependents). Background removes the owner at once and its dependents after it;
// Foreground keeps the owner, marked and held by the foregroundDeletion finalizer, until
// its blocking dependents are gone; Orphan removes the owner's references from its
// dependents and leaves them. Ownership stays within a namespace. The collector runs in
// the server's own goroutine and reacts to each commit; unlike the real one, it collects
// dependents only of owners it saw deleted, not objects whose owners never existed.
//
// Its store is a small MVCC log in the manner of etcd: one revision counter, the current
// objects and a bounded history of changes from which past snapshots are rebuilt.
//
// Faults injects what an informer must survive: cut or stalled watch streams, malformed
// frames, unknown event types, 429/5xx answers, delays, 403s, a refused or unfinished
// streaming list, a shardSelector ignored (a server without the gate), and the watch events of one resource held back (a lagging watch cache:
// what a controller's read-your-writes guard is for). Compact forces the 410s of an etcd
// compaction.
//
// A result on the simulator is not a compatibility claim: the e2e package runs the same
// protocol against a real kube-apiserver.
package apisim
