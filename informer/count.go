package informer

import "github.com/kinformer/kinformer/indexer"

// CountByNamespace returns how many objects the cache holds in each namespace: a
// sharded controller manager publishes the sum over its informers as its load, and its
// group cuts its plan from it.
func (inf *Informer[T]) CountByNamespace() map[string]int {
	return inf.cache.CountByIndex(indexer.NamespaceIndex)
}
