package object

import (
	"hash/maphash"
	"maps"
	"sync"
	"sync/atomic"
	"unsafe"
)

// MapTable makes the objects of one cache share equal label and annotation maps: the
// pods of one ReplicaSet carry the same labels, and so does an object from one update
// to the next, yet each decode builds a new Go map (about 300 bytes however little it
// holds). Objects decoded with DecodeOptions.Maps set to a table get the table's map
// when it holds exactly what the JSON text says, and a map is built only on a miss;
// Share does the same for a map already built (an informer's, after a transform).
//
// A table belongs to one cache (an informer makes its own), because a shared map is
// only as safe as the least careful code that can reach it: a handler that changes a
// label in place changes it in every object holding that map. With one table per
// informer, such a mistake stays inside that informer's cache, and its cache mutation
// detector can name it.
//
// The table is lossy and bounded, like the intern table: mapSlots slots, each the last
// map stored under its hash, read and written without a lock. A map is found by a hash
// of its pairs, summed so that their order makes no difference (a JSON text and a Go map
// of the same pairs hash alike), and every candidate is compared pair by pair before it
// is handed out, so a collision costs a build, never a wrong map. The zero value is not
// usable: call NewMapTable.
type MapTable struct {
	seed  maphash.Seed
	slots [mapSlots]atomic.Pointer[map[string]string]
	// variants are the decode tables of objects whose metadata's maps go through this
	// table, by the table they are a copy of (built on first use; see variant).
	variants sync.Map
}

const (
	mapSlots = 1 << 11
	// Texts longer than sharedMapMax bytes, and maps of more than sharedPairsMax pairs,
	// are built as usual: they rarely repeat, and cost more to check.
	sharedMapMax   = 1024
	sharedPairsMax = 16
)

// NewMapTable returns an empty table.
func NewMapTable() *MapTable { return &MapTable{seed: maphash.MakeSeed()} }

// Share returns the table's map equal to m if it has one; otherwise it records m and
// returns it. m must not be changed afterwards.
func (t *MapTable) Share(m map[string]string) map[string]string {
	if len(m) == 0 || len(m) > sharedPairsMax {
		return m
	}
	var h uint64
	for k, v := range m {
		h += t.pairHash(k, v)
	}
	slot := t.slot(h)
	if shared := slot.Load(); shared != nil && maps.Equal(*shared, m) {
		return *shared
	}
	slot.Store(&m)
	return m
}

func (t *MapTable) pairHash(k, v string) uint64 {
	return maphash.String(t.seed, k)*0x9e3779b97f4a7c15 ^ maphash.String(t.seed, v)
}

func (t *MapTable) slot(h uint64) *atomic.Pointer[map[string]string] {
	return &t.slots[h&(mapSlots-1)]
}

// pairSpan is where one key or value's bytes are in a text, quotes excluded.
type pairSpan struct{ start, end int32 }

// decodeMap is decodeStringMap with the table in front of it.
func (t *MapTable) decodeMap(data []byte, i int, p unsafe.Pointer) (int, error) {
	var spans [2 * sharedPairsMax]pairSpan
	h, pairs, end := t.textHash(data, i, &spans)
	if end < 0 {
		return decodeStringMap(data, i, p) // not a plain object of strings: no sharing
	}
	slot := t.slot(h)
	if m := slot.Load(); m != nil && len(*m) == pairs && holds(*m, data, spans[:2*pairs]) {
		*(*map[string]string)(p) = *m
		return end, nil
	}
	n, err := decodeStringMap(data, i, p)
	if m := *(*map[string]string)(p); err == nil && len(m) == pairs && pairs > 0 {
		slot.Store(&m) // a repeated key makes fewer entries than pairs: not stored under h
	}
	return n, err
}

// textHash hashes the pairs of the JSON object at data[i] as Share hashes a map's, and
// records where each key and value is. end is -1 (and nothing else is meaningful) when
// the text is not an object of at most sharedPairsMax pairs of strings without escapes,
// within sharedMapMax bytes.
func (t *MapTable) textHash(data []byte, i int, spans *[2 * sharedPairsMax]pairSpan) (h uint64, pairs, end int) {
	if data[i] != '{' {
		return 0, 0, -1
	}
	limit := min(len(data), i+sharedMapMax)
	text := data[:limit]
	j := skipSpace(text, i+1)
	for j < len(text) && text[j] != '}' {
		if pairs == sharedPairsMax {
			return 0, 0, -1
		}
		kend, plain := stringEnd(text, j)
		if kend < 0 || !plain {
			return 0, 0, -1
		}
		spans[2*pairs] = pairSpan{int32(j + 1), int32(kend - 1)}
		if j = skipSpace(text, kend); j >= len(text) || text[j] != ':' {
			return 0, 0, -1
		}
		vstart := skipSpace(text, j+1)
		vend, plain := stringEnd(text, vstart)
		if vend < 0 || !plain {
			return 0, 0, -1
		}
		spans[2*pairs+1] = pairSpan{int32(vstart + 1), int32(vend - 1)}
		key := spans[2*pairs]
		h += t.pairHashBytes(text[key.start:key.end], text[vstart+1:vend-1])
		pairs++
		if j = skipSpace(text, vend); j < len(text) && text[j] == ',' {
			j = skipSpace(text, j+1)
		}
	}
	if j >= len(text) {
		return 0, 0, -1
	}
	return h, pairs, j + 1
}

// pairHashBytes is pairHash of a key and value still in the text (maphash hashes a
// []byte and the string of its bytes alike).
func (t *MapTable) pairHashBytes(k, v []byte) uint64 {
	return maphash.Bytes(t.seed, k)*0x9e3779b97f4a7c15 ^ maphash.Bytes(t.seed, v)
}

// holds reports whether m has exactly the pairs at spans (m has as many entries as
// there are pairs, so every entry is matched).
func holds(m map[string]string, data []byte, spans []pairSpan) bool {
	for p := 0; p < len(spans); p += 2 {
		k, v := spans[p], spans[p+1]
		if got, ok := m[string(data[k.start:k.end])]; !ok || got != string(data[v.start:v.end]) {
			return false
		}
	}
	return true
}

// variantKey names a decode table that routes metadata's maps through a MapTable: the
// object's table it copies, and whether managedFields are dropped.
type variantKey struct {
	base *fieldTable
	drop bool
}

// variant returns base's copy (base is an object's table) whose metadata's labels and
// annotations are decoded through t, built on first use.
func (t *MapTable) variant(base *fieldTable, drop bool) *fieldTable {
	key := variantKey{base, drop}
	if v, ok := t.variants.Load(key); ok {
		return v.(*fieldTable)
	}
	v, _ := t.variants.LoadOrStore(key, base.withMeta(metaTable(drop, t.decodeMap)))
	return v.(*fieldTable)
}
