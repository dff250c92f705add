// Package deltafifo is the queue between the reflector and the informer: the reflector
// pushes what the watch says (Add, Update, Delete) and whole relists (Replace); the
// informer pops the items in arrival order and applies them to its cache. PopBatch hands
// the consumer every item queued, up to a limit, in one call (Pop is PopBatch of one),
// and releases the lock while they are processed. A producer with several items in hand
// (the watch events of one read) queues them between Hold and Release, so a waiting
// consumer is woken once for all of them rather than once each.
//
// A relist is a single item, applied atomically by the consumer, and turned into
// Replaced deltas and FinalStateUnknown tombstones (ReplaceDeltas) against the cache at
// that point of the stream. The relist of a part (ReplaceWithin: the objects a scope
// selects, as the part of a shard that SetShard added or took away) is one item too, and
// leaves the cache outside its scope alone. HasSynced becomes true once the first relist,
// the initial population, has been processed.
package deltafifo
