// Package informer is the shared informer: the glue of reflector → deltafifo → indexer,
// and the fan-out to event handlers.
//
// One Informer per resource (a Factory shares them) lists and watches through its
// reflector, pops the FIFO in arrival order, a batch at a time, applies each change to
// its cache (a relist atomically), and hands notifications to every registered handler,
// a batch's together (one lock and one wake-up per handler per batch), after the cache
// has them:
//
//   - each handler runs on its own goroutine from its own buffer, so a slow handler never
//     holds up the informer or the other handlers;
//   - the buffer is bounded (HandlerOptions.BufferSize) and metered (depth, lag,
//     coalesced); when it is full, notifications are coalesced per object into the net
//     change the handler has not seen (Add, Update from the state it last saw, or Delete of
//     the last state), so memory stays bounded and the final state of every object is
//     never lost;
//   - a handler added after the informer synced first receives the cache as initial adds;
//     its Registration has its own HasSynced;
//   - deletions noticed only by a relist arrive as OnDelete with finalStateUnknown and the
//     last known state; an object deleted and recreated under the same name (another
//     UID) arrives as a delete of the old object then an add of the new one, never as an
//     update across two objects, whether a relist or a coalesced buffer hid the gap;
//   - per-handler resync periods re-deliver the cache without contacting the server.
//
// Objects are transformed before they are stored (by default metadata.managedFields is
// dropped, and equal label and annotation maps are shared through the informer's own
// object.MapTable). Typed Listers read the cache with label selectors and indexes.
// Status says why an informer is not synced, and WaitForSync returns that reason when it
// gives up.
//
// No failure is silent, and none spreads:
//   - an object an index function fails on is left out of the cache (its key keeps its
//     previous state, which handlers already know) until a later state of it can be
//     stored; everything else keeps flowing, and the status (StoreError, LeftOut), the
//     log and kinformer_informer_store_errors_total say which key and why;
//   - a handler that panics is stopped, alone: its Registration's Stopped and Err say why,
//     WaitForSync fails at once if it had not synced, and the status, the log (with the
//     stack) and kinformer_informer_handler_panics_total report it;
//   - cached objects are read-only, and the MutationDetector (an option, or
//     KINFORMER_CACHE_MUTATION_DETECTOR=true) names any that code changes in place, with
//     the path of the changed field.
//
// An informer with a shard (Options.Shard, FactoryOptions.Shard, Selectors.Shard; see
// package shard) caches one part of a resource that several processes share. It sends
// the shard selector on every request and also drops, itself, whatever arrives from
// outside the shard, so its cache holds exactly the shard even from a server that
// ignores the selector, as kube-apiserver 1.36 does without the ShardedListAndWatch
// feature gate. Then nothing but the cache got smaller, and the informer says why:
// Status().ShardFiltering is reflector.ShardFilteringClient, its log has one warning,
// and kinformer_informer_shard_filtered_on_client is 1. The shard may change while the
// informer runs, as members of a sharded controller manager come and go
// (Informer.SetShard, Factory.SetShard for the informers that take the factory's): the
// filter switches at once, and the change costs only the difference: the part the shard
// lost leaves the cache without a request, and the part it gained is listed alone (a
// member joining a group of N moves about 1/N of the objects, and lists about that, not
// its whole part again; kinformer_informer_listed_objects_total counts what lists
// deliver). That list is fresh, a consistent read: the cache's resourceVersion may be
// older than the last writes of the part's previous owner, and a new owner acting on a
// state without them would redo them (a ReplicaSet controller would create pods that
// exist). The watch then resumes from the cache's resourceVersion and passes over the
// events of the part gained that the list already reflects, so no handler sees an
// object go back to an older state. Handlers hear a delete for each object that left the
// shard and an add for each that joined, and the channel SetShard returns is closed once
// the cache holds the new shard, which is when a controller may act on the part it
// gained. Options.ConsistentLists (FactoryOptions.ConsistentLists) makes the first list
// fresh too, for the same reason.
//
// LastStoreSyncResourceVersion says how far the cache has followed the server
// (bookmarks included): controllers compare it with their own writes' versions, so they
// never act on a cache that has not seen them.
package informer
