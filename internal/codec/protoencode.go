package codec

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"unsafe"

	"github.com/kinformer/kinformer/internal/protowire"
)

// The protobuf encoder, for writes: the inverse of decode, by reflection where it must
// (writes are few; reads are the hot path). Fields are written in number order, as the
// apiserver writes them, with the protobuf fields an Unknown carried in their places: a
// message decoded and encoded again is the same bytes, whatever this engine models.
// Like the apiserver, it writes a field that is not a pointer, a slice or a map even
// when it is empty (an empty string, a zero count, an empty message).

// encode appends the message of the struct at p, whose table is t.
func (t *ptable) encode(dst []byte, p unsafe.Pointer) ([]byte, error) {
	var pieces []piece
	add := func(t *ptable, p unsafe.Pointer) error {
		for _, f := range t.fields {
			b, err := f.encode(nil, f.num, unsafe.Add(p, f.offset))
			if err != nil {
				return fmt.Errorf("encoding %q: %w", f.name, err)
			}
			if len(b) > 0 {
				pieces = append(pieces, piece{f.num, b})
			}
		}
		if t.unknown < 0 {
			return nil
		}
		u := *(*Members)(unsafe.Add(p, t.unknown))
		run, proto := u.Protobuf()
		if !proto && u.Len() > 0 {
			return fmt.Errorf("encoding %v in protobuf: %w", t.typ, ErrJSONMembers)
		}
		for len(run) > 0 {
			num, _, n := protowire.ConsumeField(run)
			if n < 0 {
				return protowire.Error(n)
			}
			pieces = append(pieces, piece{num, run[:n]})
			run = run[n:]
		}
		return nil
	}
	if err := add(t, p); err != nil {
		return nil, err
	}
	if t.head != nil {
		h := *(*unsafe.Pointer)(unsafe.Add(p, t.head.offset))
		if h == nil {
			h = t.head.zero
		}
		if err := add(t.head.table, h); err != nil {
			return nil, err
		}
	}
	// Stable: the occurrences of a repeated field keep their order.
	slices.SortStableFunc(pieces, func(a, b piece) int { return cmp.Compare(a.num, b.num) })
	for _, pc := range pieces {
		dst = append(dst, pc.b...)
	}
	return dst, nil
}

// piece is a field as encoded, tag and value.
type piece struct {
	num protowire.Number
	b   []byte
}

// appendMessage appends field num holding the message body appends.
func appendMessage(dst []byte, num protowire.Number, body func([]byte) ([]byte, error)) ([]byte, error) {
	b, err := body(nil)
	if err != nil {
		return nil, err
	}
	dst = protowire.AppendTag(dst, num, protowire.Bytes)
	return protowire.AppendBytes(dst, b), nil
}

func pencodeString(dst []byte, num protowire.Number, p unsafe.Pointer) ([]byte, error) {
	dst = protowire.AppendTag(dst, num, protowire.Bytes)
	return protowire.AppendString(dst, *(*string)(p)), nil
}

func pencodeInt32(dst []byte, num protowire.Number, p unsafe.Pointer) ([]byte, error) {
	dst = protowire.AppendTag(dst, num, protowire.Varint)
	return protowire.AppendVarint(dst, uint64(int64(*(*int32)(p)))), nil
}

func pencodeInt64(dst []byte, num protowire.Number, p unsafe.Pointer) ([]byte, error) {
	dst = protowire.AppendTag(dst, num, protowire.Varint)
	return protowire.AppendVarint(dst, uint64(*(*int64)(p))), nil
}

func pencodeBool(dst []byte, num protowire.Number, p unsafe.Pointer) ([]byte, error) {
	dst = protowire.AppendTag(dst, num, protowire.Varint)
	return protowire.AppendVarint(dst, boolBit(*(*bool)(p))), nil
}

func pencodePointer(elem pencodeFunc) pencodeFunc {
	return func(dst []byte, num protowire.Number, p unsafe.Pointer) ([]byte, error) {
		e := *(*unsafe.Pointer)(p)
		if e == nil {
			return dst, nil
		}
		return elem(dst, num, e)
	}
}

func pencodeSlice(typ reflect.Type, elem pencodeFunc) pencodeFunc {
	size := typ.Elem().Size()
	return func(dst []byte, num protowire.Number, p unsafe.Pointer) ([]byte, error) {
		s := *(*sliceHeader)(p)
		for k := range s.len {
			var err error
			if dst, err = elem(dst, num, unsafe.Add(s.data, uintptr(k)*size)); err != nil {
				return nil, err
			}
		}
		return dst, nil
	}
}

// pencodeStringMap writes the entries sorted by key, as the apiserver does.
func pencodeStringMap(dst []byte, num protowire.Number, p unsafe.Pointer) ([]byte, error) {
	m := *(*map[string]string)(p)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		var e []byte
		e = protowire.AppendTag(e, 1, protowire.Bytes)
		e = protowire.AppendString(e, k)
		e = protowire.AppendTag(e, 2, protowire.Bytes)
		e = protowire.AppendString(e, m[k])
		dst = protowire.AppendTag(dst, num, protowire.Bytes)
		dst = protowire.AppendBytes(dst, e)
	}
	return dst, nil
}
