package codec

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"maps"
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/kinformer/kinformer/internal/jsonscan"
)

// MapTable makes the objects of one cache share equal label and annotation maps: the
// pods of one ReplicaSet carry the same labels, and so does an object from one update
// to the next, yet each decode builds a new Go map, which costs far more than its pairs.
// Objects decoded with Options.Maps set to a table get the table's map when it holds
// exactly what the JSON text says, and a map is built only on a miss; Share does the
// same for a map already built (an informer's, after a transform). Package object names
// this type MapTable.
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
// of the same pairs hash alike), and a candidate is handed out only if its whole hash is
// the one sought and its pairs compare equal, so a collision costs a build, never a wrong
// map. (Pairs alone would not do: a text that repeats a pair, {"a":"1","a":"1"}, holds
// only pairs of the map {"a":"1","b":"2"} and has as many; the sums differ.) A map
// decoded from protobuf is found by a 128-bit digest of its entries' bytes instead, and
// not read (pdecodeMap): a map a handler wrote in place is then handed to the objects
// decoded after it from the same bytes too, until the mutation detector reports the
// write and Forget empties the slots. The zero value is not usable: call NewMapTable.
type MapTable struct {
	seed  maphash.Seed
	slots [mapSlots]atomic.Pointer[sharedMap]
	// variants are the decode tables of objects whose metadata's maps go through this
	// table, by the table they are a copy of (built on first use; see variant).
	// variants[drop] is keyed by the base table (a *table or a *ptable): a pointer, which
	// a sync.Map takes without an allocation, where a struct key was one per decode.
	variants [2]sync.Map
	// lists are the values of Metadata.SharedLists, by their JSON text (see byText).
	lists [listSlots]atomic.Pointer[textValue]
	// pmaps are the maps decoded from protobuf, by the bytes of their entries: found
	// before any entry is read (protodecode.go).
	pmaps [mapSlots]atomic.Pointer[protoMap]
	// parts are the cache's shared parts (parts.go), and registries the copies of a
	// registry whose tables decode into them (one per registry; built on first use).
	parts      *parts
	mu         sync.Mutex
	registries map[*registry]*registry
	// projections are the registries of the projections this table's cache decodes,
	// by type, nil for a type that is none (see projection.go).
	projections sync.Map
	// recents are the last states of the objects that changed (DecodeProtobufModified), by
	// namespace and name (protoprior.go).
	recents *recents
}

const (
	mapSlots = 1 << 11
	// Texts longer than sharedMapMax bytes, and maps of more than sharedPairsMax pairs,
	// are built as usual: they rarely repeat, and cost more to check.
	sharedMapMax   = 1024
	sharedPairsMax = 16
)

// NewMapTable returns an empty table.
func NewMapTable() *MapTable {
	return &MapTable{seed: maphash.MakeSeed(), parts: newParts(), registries: map[*registry]*registry{}, recents: newRecents()}
}

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
	if shared := slot.Load(); shared != nil && shared.h == h && maps.Equal(shared.m, m) {
		return shared.m
	}
	slot.Store(&sharedMap{h: h, m: m})
	return m
}

// sharedMap is a map of the table and the hash of its pairs.
type sharedMap struct {
	h uint64
	m map[string]string
}

func (t *MapTable) pairHash(k, v string) uint64 {
	return maphash.String(t.seed, k)*0x9e3779b97f4a7c15 ^ maphash.String(t.seed, v)
}

func (t *MapTable) slot(h uint64) *atomic.Pointer[sharedMap] {
	return &t.slots[h&(mapSlots-1)]
}

// pairSpan is where one key or value's bytes are in a text, quotes excluded; or, for a
// string with escapes (start < 0), the string they stand for.
type pairSpan struct {
	start, end int32
	decoded    string
}

// spanOf returns the span of the string at data[i:end] (quotes included).
func spanOf(data []byte, i, end int, plain bool) (pairSpan, bool) {
	if plain {
		return pairSpan{start: int32(i + 1), end: int32(end - 1)}, true
	}
	// An annotation whose value is JSON (a mesh sidecar's status, a last-applied
	// configuration) is escaped; it is as often the same from pod to pod as any other.
	var s string
	if json.Unmarshal(data[i:end], &s) != nil {
		return pairSpan{}, false
	}
	return pairSpan{start: -1, decoded: s}, true
}

// string returns the span's string: interned from data, or the decoded one.
func (s pairSpan) string(data []byte) string {
	if s.start < 0 {
		return s.decoded
	}
	return internString(data[s.start:s.end])
}

// bytes returns the span's bytes: in data, or of its decoded string (not to be changed).
func (s pairSpan) bytes(data []byte) []byte {
	if s.start < 0 {
		return unsafe.Slice(unsafe.StringData(s.decoded), len(s.decoded))
	}
	return data[s.start:s.end]
}

// decodeMap is decodeStringMap with the table in front of it.
func (t *MapTable) decodeMap(data []byte, i int, p unsafe.Pointer) (int, error) {
	var spans [2 * sharedPairsMax]pairSpan
	h, pairs, end := t.textHash(data, i, &spans)
	if end < 0 {
		return decodeStringMap(data, i, p) // not a small object of strings: no sharing
	}
	slot := t.slot(h)
	if shared := slot.Load(); shared != nil && shared.h == h && len(shared.m) == pairs && holds(shared.m, data, spans[:2*pairs]) {
		*(*map[string]string)(p) = shared.m
		return end, nil
	}
	// Built from the spans textHash found: an escaped value is not decoded twice.
	m := make(map[string]string, pairs)
	for k := 0; k < 2*pairs; k += 2 {
		m[spans[k].string(data)] = spans[k+1].string(data)
	}
	*(*map[string]string)(p) = m
	if len(m) == pairs && pairs > 0 {
		slot.Store(&sharedMap{h: h, m: m}) // a repeated key makes fewer entries than pairs: not stored under h
	}
	return end, nil
}

// textHash hashes the pairs of the JSON object at data[i] as Share hashes a map's, and
// records where each key and value is. end is -1 (and nothing else is meaningful) when
// the text is not an object of at most sharedPairsMax pairs of strings within
// sharedMapMax bytes.
func (t *MapTable) textHash(data []byte, i int, spans *[2 * sharedPairsMax]pairSpan) (h uint64, pairs, end int) {
	if data[i] != '{' {
		return 0, 0, -1
	}
	text := data[:min(len(data), i+sharedMapMax)]
	j, more := jsonscan.FirstMember(text, i)
	for more {
		if pairs == sharedPairsMax {
			return 0, 0, -1
		}
		keyEnd, keyPlain, v := jsonscan.Member(text, j)
		if v < 0 {
			return 0, 0, -1
		}
		valueEnd, valuePlain := jsonscan.String(text, v)
		if valueEnd < 0 {
			return 0, 0, -1
		}
		key, okKey := spanOf(text, j, keyEnd, keyPlain)
		value, okValue := spanOf(text, v, valueEnd, valuePlain)
		if !okKey || !okValue {
			return 0, 0, -1
		}
		spans[2*pairs], spans[2*pairs+1] = key, value
		h += t.pairHashBytes(key.bytes(text), value.bytes(text))
		pairs++
		if j, more = jsonscan.NextMember(text, valueEnd); j < 0 {
			return 0, 0, -1
		}
	}
	return h, pairs, j
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
		k, v := spans[p].bytes(data), spans[p+1].bytes(data)
		if got, ok := m[string(k)]; !ok || got != string(v) {
			return false
		}
	}
	return true
}

// variant returns the copy of base (an object's table in r) that decodes into t's
// shared parts, and whose metadata's shared maps are decoded through t; built on first
// use.
func (t *MapTable) variant(r *registry, base *table, drop bool) *table {
	return variantOf(t, base, drop, func() *table {
		own := t.registryFor(r).lookup(base.typ)
		return own.withMeta(own.object.metaVariant(drop, t))
	})
}

// variantOf returns the variant of base (dropping managedFields or not), made by build
// on first use.
func variantOf[V any](t *MapTable, base any, drop bool, build func() V) V {
	m := &t.variants[boolBit(drop)]
	if v, ok := m.Load(base); ok {
		return v.(V)
	}
	v, _ := m.LoadOrStore(base, build())
	return v.(V)
}

// textValue is a decoded value and the JSON text it was decoded from.
type textValue struct {
	text  []byte
	value reflect.Value // a pointer to a copy of the value
}

const (
	listSlots = 1 << 10
	// Longer texts are decoded as usual: they rarely repeat, and each slot keeps one.
	sharedListMax = 1024
)

// byText returns a decodeFunc for values of typ that decode hands out the table's value
// for the same JSON text when it holds one: the owner references of the pods of one
// ReplicaSet are one text, and as a slice of structs with two pointers each, about 100
// bytes a pod. Like the maps' slots, the lists' are lossy and bounded (listSlots values
// and their texts, each at most sharedListMax bytes), and a value is handed out only when
// its text is the same byte for byte. The value is shared as the maps are: objects
// decoded so must not have it changed in place.
func (t *MapTable) byText(typ reflect.Type, decode decodeFunc) decodeFunc {
	return func(data []byte, i int, p unsafe.Pointer) (int, error) {
		// Found by its text before it is decoded: a hit then allocates nothing (a scan
		// of a pod's owner references takes about 100 ns).
		end := jsonscan.ValueEnd(data, i)
		if end < 0 || end-i > sharedListMax || data[i] == 'n' {
			return decode(data, i, p)
		}
		n := end
		err := t.shareByText(data[i:end], typ, p, func() (bool, error) {
			var err error
			n, err = decode(data, i, p)
			return n == end, err
		})
		return n, err
	}
}

// shareByText sets the field of type typ at p to the value the table holds for text
// (JSON text, or protobuf fields), or has decode set it, and keeps a copy of what it set
// when decode says the value was all of text (whole).
func (t *MapTable) shareByText(text []byte, typ reflect.Type, p unsafe.Pointer, decode func() (whole bool, err error)) error {
	slot := &t.lists[maphash.Bytes(t.seed, text)&(listSlots-1)]
	field := reflect.NewAt(typ, p).Elem()
	if s := slot.Load(); s != nil && bytes.Equal(s.text, text) {
		field.Set(s.value.Elem())
		return nil
	}
	whole, err := decode()
	if err == nil && whole {
		v := reflect.New(typ)
		v.Elem().Set(field)
		slot.Store(&textValue{text: bytes.Clone(text), value: v})
	}
	return err
}

// Forget empties the table's slots of values found by their text (owner references,
// heads), so that what decodes next is built from its text again. An informer's mutation
// detector calls it when it finds a cached object written in place: such a value may be
// one of them, and a slot checks only the text it was decoded from. Maps and parts are
// compared by their contents, and need no forgetting.
func (t *MapTable) Forget() {
	for i := range t.lists {
		t.lists[i].Store(nil)
	}
	for i := range t.pmaps { // found by their bytes, not by what they hold
		t.pmaps[i].Store(nil)
	}
	t.recents.forget() // found by their digests
	forget := func(r *registry) {
		for _, tab := range r.tables { // built with the registry, read-only since
			if tab.head != nil && tab.head.slots != nil {
				for i := range tab.head.slots.slots {
					tab.head.slots.slots[i].Store(nil)
				}
			}
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range t.registries { // the projections' too (registryFor)
		forget(r)
	}
}

// SharedParts returns how many parts (parts.go) objects decoded with t share now: the
// parts that live objects hold, and no others.
func (t *MapTable) SharedParts() int { return t.parts.len() }

// registryFor returns the copy of r whose tables decode into t's parts.
func (t *MapTable) registryFor(r *registry) *registry {
	t.mu.Lock()
	defer t.mu.Unlock()
	own := t.registries[r]
	if own == nil {
		own = newRegistryWith(r.schema, t.parts)
		t.registries[r] = own
	}
	return own
}
