// Package indexer is the informer's cache: a thread-safe store of objects by key
// ("namespace/name") with named secondary indexes.
//
// The namespace index is built in, and costs nothing: the objects are held by namespace
// and then by name, the strings each object already has, so a cache of a million pods
// makes no key and no index entry of its own for any of them. AddIndexers adds others before or after objects are
// stored (existing objects are indexed at once). Update and Delete keep every index exact,
// and a value whose last key goes away is removed, so indexes do not grow with churn.
// Replace swaps the whole content atomically for a relist, and ReplaceWithin the part of
// it that a scope selects (the part of a shard gained or lost), leaving the rest as it
// is. Every change is all or nothing per object: when an index function fails on an object (an *IndexError), its
// key keeps its previous state under every index, and a Replace stores everything else
// (a *ReplaceError lists what it left out). LastStoreSyncResourceVersion is the version
// of the newest state the store holds, moved under the same lock as the objects.
//
// Objects handed out are the stored ones, shared by every reader: they are read-only.
// Call object.DeepCopy before changing one.
package indexer
