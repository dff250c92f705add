package consistency

import (
	"maps"
	"slices"
	"sync"

	"github.com/kinformer/kinformer/object"
)

// Source is how far an informer's cache has followed the server:
// (*informer.Informer[T]).LastStoreSyncResourceVersion.
type Source interface {
	LastStoreSyncResourceVersion() string
}

// Owner is what writes are recorded for: the controller's work-queue key
// ("namespace/name") and the object's UID, which tells the object written for from a
// later one of the same name.
type Owner struct {
	Key, UID string
}

// OwnerOf returns the Owner of an object.
func OwnerOf(m *object.ObjectMeta) Owner {
	return Owner{Key: object.KeyFor(m.Namespace, m.Name), UID: m.UID}
}

// Store holds the writes not yet known to be in the caches. It is safe for concurrent use
// (a sync's parallel creates record at once). A nil *Store records nothing and is always
// ready, so a controller can run without the guard.
type Store struct {
	sources map[string]Source

	mu     sync.Mutex
	owners map[string]*record // by Owner.Key
}

// record is one owner's newest write of each resource.
type record struct {
	uid   string
	wrote map[string]string // resource → resourceVersion
}

// New returns an empty Store comparing writes with sources, by resource name (the name
// the controller passes to WroteAt, e.g. "pods", "replicasets.apps").
func New(sources map[string]Source) *Store {
	return &Store{sources: maps.Clone(sources), owners: map[string]*record{}}
}

// WroteAt records that the controller wrote an object of resource, on behalf of owner,
// and the server answered with resourceVersion. Only the newest write of each resource
// is kept. A write for an owner with another UID than the one recorded replaces the
// record: the earlier object of that name is gone. Writes of a resource the Store has no
// source for, and empty versions, are not recorded: nothing could tell when they are seen.
func (s *Store) WroteAt(owner Owner, resource, resourceVersion string) {
	if s == nil || resourceVersion == "" || s.sources[resource] == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.owners[owner.Key]
	if r == nil || r.uid != owner.UID {
		r = &record{uid: owner.UID, wrote: map[string]string{}}
		s.owners[owner.Key] = r
	}
	if cur, ok := r.wrote[resource]; ok {
		// Writes of one sync may answer out of order (parallel creates): keep the newest.
		// Versions that cannot be ordered keep the latest answer.
		if c, err := object.CompareResourceVersion(cur, resourceVersion); err == nil && c >= 0 {
			return
		}
	}
	r.wrote[resource] = resourceVersion
}

// Clear forgets owner's writes: it was deleted. An empty UID clears whatever is recorded
// under the key; otherwise only a record of that UID goes, so the deletion of an old
// object does not clear the writes for a new one of the same name.
func (s *Store) Clear(owner Owner) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.owners[owner.Key]; r != nil && (owner.UID == "" || r.uid == owner.UID) {
		delete(s.owners, owner.Key)
	}
}

// ClearNamespaces forgets the writes of every owner in a namespace gone accepts ("" is a
// cluster-scoped owner) and returns how many owners it forgot: a sharded controller
// manager has handed those namespaces to another process. Their records would never be
// settled here (no sync runs there any more), and would hold back a sync if a namespace
// came back later.
func (s *Store) ClearNamespaces(gone func(namespace string) bool) int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for key := range s.owners {
		if ns, _, _ := object.SplitKey(key); gone(ns) {
			delete(s.owners, key)
			n++
		}
	}
	return n
}

// Ready returns nil when every cache has seen the owner's recorded writes, and then
// forgets them; otherwise a *StaleError naming a cache that is behind. A record for
// another UID than owner's (an earlier object of that name) is dropped: its writes say
// nothing about this object. An empty UID matches any record.
func (s *Store) Ready(owner Owner) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.owners[owner.Key]
	if r == nil {
		return nil
	}
	if owner.UID != "" && r.uid != owner.UID {
		delete(s.owners, owner.Key)
		return nil
	}
	// In a fixed order, so that a sync behind on two caches is always reported (and
	// counted) under the same one.
	for _, resource := range slices.Sorted(maps.Keys(r.wrote)) {
		wrote := r.wrote[resource]
		read := s.sources[resource].LastStoreSyncResourceVersion()
		if read == "" {
			continue // not listed yet: the workers do not run before, so this is a cache without versions
		}
		// A version that cannot be ordered (an apiserver older than 1.35) must not wedge
		// the controller: it syncs as it would without the guard.
		if c, err := object.CompareResourceVersion(wrote, read); err == nil && c > 0 {
			return &StaleError{Owner: owner.Key, Resource: resource, Wrote: wrote, Read: read}
		}
	}
	delete(s.owners, owner.Key)
	return nil
}

// Len is how many owners have writes recorded.
func (s *Store) Len() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.owners)
}
