package indexer

import (
	"iter"
	"strings"

	"github.com/kinformer/kinformer/object"
)

// store holds the objects by namespace, then by name: the two strings every object
// already carries. A map by "namespace/name" made a key of its own for every object
// (about 40 bytes a pod), and the namespace index a set entry for it (about 45 more);
// here neither exists, and the store itself is the namespace index: a namespace's
// objects are its inner map.
//
// A key ("namespace/name", or "name" for an object with no namespace) is split at its
// first slash. Names hold no slash in the Kubernetes API, so every key names one place.
type store[T object.Object] struct {
	byNamespace map[string]map[string]T
	n           int
	// sizes, when set, is how many objects each namespace will hold (a Replace counts
	// them first), so that each inner map is made at its size instead of doubling its
	// way there (for a million pods, tens of megabytes of garbage).
	sizes map[string]int
}

func newStore[T object.Object]() store[T] {
	return store[T]{byNamespace: map[string]map[string]T{}}
}

// splitKey returns the namespace and name of key.
func splitKey(key string) (namespace, name string) {
	if ns, name, ok := strings.Cut(key, "/"); ok {
		return ns, name
	}
	return "", key
}

func (s *store[T]) get(key string) (T, bool) {
	ns, name := splitKey(key)
	obj, ok := s.byNamespace[ns][name]
	return obj, ok
}

// place returns where obj is held: its namespace and name, the object's own strings.
// An object with no namespace and a slash in its name (which the API refuses, but a fake
// may make) is held where its key, split, points, so that Get and Delete by key find it.
func place[T object.Object](obj T) (namespace, name string) {
	m := obj.Meta()
	if m.Namespace == "" {
		return splitKey(m.Name)
	}
	return m.Namespace, m.Name
}

// has reports whether the store holds an object under obj's key.
func (s *store[T]) has(obj T) bool {
	ns, name := place(obj)
	_, ok := s.byNamespace[ns][name]
	return ok
}

// put stores obj under its key.
func (s *store[T]) put(obj T) {
	ns, name := place(obj)
	names := s.byNamespace[ns]
	if names == nil {
		names = make(map[string]T, s.sizes[ns])
		s.byNamespace[ns] = names
	}
	before := len(names)
	names[name] = obj
	s.n += len(names) - before
}

// delete removes the object under key, and its namespace's map once it is empty (as an
// index drops a value that no object has any more).
func (s *store[T]) delete(key string) {
	ns, name := splitKey(key)
	s.deleteAt(ns, name)
}

// deleteAt is delete of the place a namespace and name give.
func (s *store[T]) deleteAt(ns, name string) {
	names, ok := s.byNamespace[ns]
	if !ok {
		return
	}
	before := len(names)
	delete(names, name)
	s.n -= before - len(names)
	if len(names) == 0 {
		delete(s.byNamespace, ns)
	}
}

func (s *store[T]) len() int { return s.n }

// objects yields every object.
func (s *store[T]) objects() iter.Seq[T] {
	return func(yield func(T) bool) {
		for _, names := range s.byNamespace {
			for _, obj := range names {
				if !yield(obj) {
					return
				}
			}
		}
	}
}

// all yields every key and its object. It makes each key: for the rarer walks (an index
// added, a shard's part found), not for storing or reading.
func (s *store[T]) all() iter.Seq2[string, T] {
	return func(yield func(string, T) bool) {
		for ns, names := range s.byNamespace {
			for name, obj := range names {
				if !yield(object.KeyFor(ns, name), obj) {
					return
				}
			}
		}
	}
}
