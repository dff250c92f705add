package codec

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"reflect"
	"sync/atomic"
	"unsafe"

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
// slots (one set per MapTable, lossy and bounded as the lists' are), and decoded from on
// a miss. Decoded without a table, each object gets a head of its own.

// head is what a headed type's table knows of its head.
type head struct {
	offset uintptr // of the pointer to the head, in the headed struct
	typ    reflect.Type
	table  *table
	slots  *headSlots // the cache's, nil when the registry decodes for no cache
}

// headSlots are the heads a cache's objects hold, by their text.
type headSlots struct {
	seed  maphash.Seed
	slots [headSlotCount]atomic.Pointer[headEntry]
}

// headEntry is a head (a pointer to it) and the text it was decoded from.
type headEntry struct {
	text  []byte
	value unsafe.Pointer
}

const headSlotCount = 1 << 10

func newHeadSlots() *headSlots { return &headSlots{seed: maphash.MakeSeed()} }

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
	t.head = &head{offset: f.Offset, typ: f.Type.Elem(), table: r.tableFor(f.Type.Elem()), slots: r.heads}
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
	h, err := t.head.find(text)
	if err != nil {
		return -1, err
	}
	*(*unsafe.Pointer)(unsafe.Add(p, t.head.offset)) = h
	return j, nil
}

// find returns the head decoded from text: the cache's, when it holds one of that text.
func (h *head) find(text []byte) (unsafe.Pointer, error) {
	var slot *atomic.Pointer[headEntry]
	if h.slots != nil && len(text) <= sharedListMax {
		slot = &h.slots.slots[maphash.Bytes(h.slots.seed, text)&(headSlotCount-1)]
		if e := slot.Load(); e != nil && bytes.Equal(e.text, text) {
			return e.value, nil
		}
	}
	v := reflect.New(h.typ).UnsafePointer()
	if _, err := h.table.decode(text, 0, v); err != nil {
		return nil, err
	}
	if slot != nil {
		slot.Store(&headEntry{text: bytes.Clone(text), value: v})
	}
	return v, nil
}
