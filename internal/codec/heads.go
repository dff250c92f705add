package codec

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"reflect"
	"sync/atomic"
	"unsafe"
	"weak"

	"github.com/kinformer/kinformer/internal/jsonscan"
)

// Heads: a pod's conditions are five small structs that differ from pod to pod only in
// their times. {"type":"Ready","status":"True","lastProbeTime":null} is the same in
// every ready pod of a cluster, yet as a struct of two strings, a time and its unknown
// members it is 48 bytes a condition, five times a pod. A headed type keeps what is the
// same in many objects in a struct of its own, its head, behind a pointer, and only the
// rest (the time) in itself: 16 bytes a condition, and the cache holds each head once.
//
// A headed type (Schema.Headed) is a struct whose first field is an unexported pointer
// to its head, a struct with a table; its exported fields are its own members, and every
// other member is the head's. The decoder copies the head's members, as they are written,
// into one small JSON object: that text is what the head is found by, in the cache's
// slots for that head type, and decoded from on a miss. Decoded without a table, each
// object gets a head of its own.
//
// The slots are lossy and bounded (headSlotCount a head type and a cache) and, like the
// parts' table, point at their heads weakly: a head goes with the last object holding it.
// A slot keeps a copy of its head's unknown members as they were built, and hands the
// head out again only while they still read so: a caller that wrote into a cached
// object's bytes (Unknown.Get hands them out) has changed the objects holding that head,
// but not the ones decoded after.

// head is what a headed type's table knows of its head.
type head struct {
	offset uintptr // of the pointer to the head, in the headed struct
	typ    reflect.Type
	table  *table
	slots  *headSlots     // this head type's in the cache, nil when the registry decodes for no cache
	zero   unsafe.Pointer // a zero head: what a struct without one encodes
}

// headSlots are the heads of one type that a cache's objects hold, by their text.
type headSlots struct {
	seed  maphash.Seed
	slots [headSlotCount]atomic.Pointer[headEntry]
}

// headEntry is a head, the text it was decoded from, and its unknown members as built.
type headEntry struct {
	text    []byte
	value   weak.Pointer[byte] // the head's first byte
	unknown []byte
}

const headSlotCount = 1 << 10

// headFor sets up typ's head, typ being in Schema.Headed.
func (r *registry) headFor(t *table) {
	typ := t.typ
	if typ.Kind() != reflect.Struct || typ.NumField() == 0 {
		panic(fmt.Sprintf("codec: headed type %v is not a struct with fields", typ))
	}
	f := typ.Field(0)
	if f.IsExported() || f.Type.Kind() != reflect.Pointer || !r.hasTable(f.Type.Elem()) {
		panic(fmt.Sprintf("codec: the first field of headed type %v is not an unexported pointer to a struct with a table", typ))
	}
	h := &head{offset: f.Offset, typ: f.Type.Elem(), table: r.tableFor(f.Type.Elem()), zero: reflect.New(f.Type.Elem()).UnsafePointer()}
	if r.parts != nil {
		h.slots = &headSlots{seed: maphash.MakeSeed()}
	}
	t.head = h
}

// decodeHeaded is decode for a headed type: its own members into its fields, the others
// into the head.
func (t *table) decodeHeaded(data []byte, i int, p unsafe.Pointer) (int, error) {
	sp := scratch.Get().(*[]byte) // the builders' pool: a buffer here would escape
	text := append((*sp)[:0], '{')
	defer func() {
		if cap(text) <= 64<<10 {
			*sp = text[:0]
			scratch.Put(sp)
		}
	}()
	j, more := jsonscan.FirstMember(data, i)
	for more {
		name, v, err := memberName(data, j)
		if err != nil {
			return -1, err
		}
		var end int
		if f := t.byName[string(name)]; f != nil {
			if end, err = f.decode(data, v, unsafe.Add(p, f.offset)); err != nil {
				return -1, fmt.Errorf("decoding %q: %w", name, err)
			}
		} else if end = jsonscan.ValueEnd(data, v); end >= 0 {
			if len(text) > 1 {
				text = append(text, ',')
			}
			text = append(text, data[j:end]...)
		}
		if end < 0 {
			return -1, fmt.Errorf("malformed value of %q", name)
		}
		if j, more = jsonscan.NextMember(data, end); j < 0 {
			return -1, fmt.Errorf("expected ',' or '}' after %q", name)
		}
	}
	text = append(text, '}')
	h, err := t.head.find(text, func(b []byte, v unsafe.Pointer) error {
		_, err := t.head.table.decode(b, 0, v)
		return err
	})
	if err != nil {
		return -1, err
	}
	*(*unsafe.Pointer)(unsafe.Add(p, t.head.offset)) = h
	return j, nil
}

// find returns the head decoded from text (JSON, or protobuf fields) by decode: the
// cache's, when it holds one of that text.
func (h *head) find(text []byte, decode func(text []byte, v unsafe.Pointer) error) (unsafe.Pointer, error) {
	var slot *atomic.Pointer[headEntry]
	if h.slots != nil && len(text) <= sharedListMax {
		slot = &h.slots.slots[maphash.Bytes(h.slots.seed, text)&(headSlotCount-1)]
		if e := slot.Load(); e != nil && bytes.Equal(e.text, text) {
			if v := unsafe.Pointer(e.value.Value()); v != nil && bytes.Equal(h.unknownOf(v), e.unknown) {
				return v, nil
			}
		}
	}
	v := reflect.New(h.typ).UnsafePointer()
	if err := decode(text, v); err != nil {
		return nil, err
	}
	if slot != nil {
		slot.Store(&headEntry{text: bytes.Clone(text), value: weak.Make((*byte)(v)), unknown: bytes.Clone(h.unknownOf(v))})
	}
	return v, nil
}

// unknownOf returns the packed unknown members of the head at v.
func (h *head) unknownOf(v unsafe.Pointer) []byte {
	if h.table.unknown < 0 {
		return nil
	}
	return (*Members)(unsafe.Add(v, h.table.unknown)).run()
}
