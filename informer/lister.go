package informer

import (
	"github.com/kinformer/kinformer/indexer"
	"github.com/kinformer/kinformer/object"
)

// Lister reads an informer's cache with types. Returned objects are shared and read-only.
type Lister[T object.Object] struct {
	cache *indexer.Indexer[T]
}

// List returns the objects whose labels match sel (object.Everything() for all).
func (l Lister[T]) List(sel object.Selector) []T {
	var out []T
	for _, obj := range l.cache.List() {
		if sel.Matches(obj.Meta().Labels) {
			out = append(out, obj)
		}
	}
	return out
}

// Get returns the object with key "namespace/name" (or "name" when cluster-scoped).
func (l Lister[T]) Get(key string) (T, bool) { return l.cache.Get(key) }

// ByIndex returns the objects of an index value.
func (l Lister[T]) ByIndex(index, value string) ([]T, error) { return l.cache.ByIndex(index, value) }

// Namespace narrows the lister to one namespace.
func (l Lister[T]) Namespace(ns string) NamespaceLister[T] {
	return NamespaceLister[T]{cache: l.cache, ns: ns}
}

// NamespaceLister reads one namespace of the cache.
type NamespaceLister[T object.Object] struct {
	cache *indexer.Indexer[T]
	ns    string
}

// List returns the namespace's objects whose labels match sel.
func (l NamespaceLister[T]) List(sel object.Selector) []T {
	objs, _ := l.cache.ByIndex(indexer.NamespaceIndex, l.ns) // the namespace index always exists
	out := objs[:0]
	for _, obj := range objs {
		if sel.Matches(obj.Meta().Labels) {
			out = append(out, obj)
		}
	}
	return out
}

// Get returns the named object of the namespace.
func (l NamespaceLister[T]) Get(name string) (T, bool) {
	return l.cache.Get(object.KeyFor(l.ns, name))
}
