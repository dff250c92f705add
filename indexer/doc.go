// Package indexer is the informer's cache: a thread-safe store of objects by key
// ("namespace/name") with named secondary indexes.
//
// The namespace index is built in; AddIndexers adds others before or after objects are
// stored (existing objects are indexed at once). Update and Delete keep every index exact,
// and a value whose last key goes away is removed, so indexes do not grow with churn.
// Replace swaps the whole content atomically for a relist.
//
// Objects handed out are the stored ones, shared by every reader: they are read-only.
// Call object.DeepCopy before changing one.
package indexer
