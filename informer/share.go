package informer

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kinformer/kinformer/object"
)

// mapShare makes cached objects with equal label (or annotation) maps share one map: the
// pods of one ReplicaSet carry the same labels, and a small Go map costs about 300 bytes
// however little it holds. Sharing is sound because objects in a cache are read-only
// (see object.Object); objects handed out anywhere else (a Get, a Create) are never
// shared. The table is bounded: it starts over when it holds maxShared maps.
type mapShare struct {
	maps map[string]map[string]string
	key  strings.Builder
	keys []string
}

const maxShared = 4096

// share returns the shared map equal to m, recording m if there is none.
func (s *mapShare) share(m map[string]string) map[string]string {
	if len(m) == 0 || len(m) > 16 {
		return m
	}
	s.keys = s.keys[:0]
	for k := range m {
		s.keys = append(s.keys, k)
	}
	slices.Sort(s.keys)
	s.key.Reset()
	for _, k := range s.keys { // length-prefixed, so no two maps make one key
		v := m[k]
		s.key.WriteString(strconv.Itoa(len(k)))
		s.key.WriteByte(':')
		s.key.WriteString(k)
		s.key.WriteString(strconv.Itoa(len(v)))
		s.key.WriteByte(':')
		s.key.WriteString(v)
	}
	if shared, ok := s.maps[s.key.String()]; ok {
		return shared
	}
	if s.maps == nil || len(s.maps) >= maxShared {
		s.maps = map[string]map[string]string{}
	}
	s.maps[s.key.String()] = m
	return m
}

// shareMeta points obj's labels and annotations at the shared equal maps. prev, the state
// obj replaces in the cache (nil if none), is tried first: an update rarely changes its
// labels, and comparing two maps costs less than building a table key.
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
