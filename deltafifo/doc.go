// Package deltafifo is the queue between the reflector and the informer: the reflector
// pushes what the watch says (Add, Update, Delete) and whole relists (Replace); the
// informer Pops items one at a time, in arrival order, and applies them to its cache.
//
// A relist is a single item, applied atomically by the consumer, and turned into
// Replaced deltas and FinalStateUnknown tombstones (ReplaceDeltas) against the cache at
// that point of the stream. HasSynced becomes true once the first relist, the initial
// population, has been processed.
package deltafifo
