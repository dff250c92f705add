// Package informer is the shared informer: the glue of reflector → deltafifo → indexer,
// and the fan-out to event handlers.
//
// One Informer per resource (a Factory shares them) lists and watches through its
// reflector, pops the FIFO in arrival order, applies each change to its cache (a relist
// atomically), and hands notifications to every registered handler:
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
// dropped). Typed Listers read the cache with label selectors and indexes. Status says
// why an informer is not synced, and WaitForSync returns that reason when it gives up.
package informer
