package informer

import (
	"hash/maphash"
	"maps"

	"github.com/kinformer/kinformer/object"
)

// mapShare makes cached objects with equal label (or annotation) maps share one map: the
// pods of one ReplicaSet carry the same labels, and a small Go map costs about 300 bytes
// however little it holds. Sharing is sound because objects in a cache are read-only
// (see object.Object); objects handed out anywhere else (a Get, a Create) are never
// shared. The table is bounded: it starts over when it holds maxShared maps.
type mapShare struct {
	seed maphash.Seed
	maps map[uint64]map[string]string // by the hash of their contents
}

const maxShared = 4096

// share returns the shared map equal to m, recording m if there is none. Maps are found
// by a hash of their entries, summed so that the order of iteration makes no difference,
// and confirmed equal: a collision leaves m unshared. Nothing is allocated but on insert.
func (s *mapShare) share(m map[string]string) map[string]string {
	if len(m) == 0 || len(m) > 16 {
		return m
	}
	if s.maps == nil || len(s.maps) >= maxShared {
		if s.maps == nil {
			s.seed = maphash.MakeSeed()
		}
		s.maps = map[uint64]map[string]string{}
	}
	var h uint64
	for k, v := range m {
		h += maphash.String(s.seed, k)*0x9e3779b97f4a7c15 ^ maphash.String(s.seed, v)
	}
	if shared, ok := s.maps[h]; ok {
		if maps.Equal(shared, m) {
			return shared
		}
		return m
	}
	s.maps[h] = m
	return m
}

// shareMeta points obj's labels and annotations at the shared equal maps. prev, the state
// obj replaces in the cache (nil if none), is tried first: an update rarely changes its
// labels, and comparing two maps costs less than hashing one for the table.
func (s *mapShare) shareMeta(obj, prev object.Object) {
	meta := obj.Meta()
	if prev != nil {
		pm := prev.Meta()
		if maps.Equal(meta.Labels, pm.Labels) {
			meta.Labels = pm.Labels
		} else {
			meta.Labels = s.share(meta.Labels)
		}
		if maps.Equal(meta.Annotations, pm.Annotations) {
			meta.Annotations = pm.Annotations
		} else {
			meta.Annotations = s.share(meta.Annotations)
		}
		return
	}
	meta.Labels = s.share(meta.Labels)
	meta.Annotations = s.share(meta.Annotations)
}

// prevOf is the cached state a new one replaces, as shareMeta takes it.
func prevOf[T object.Object](old T, existed bool) object.Object {
	if !existed {
		return nil
	}
	return old
}
