// Package pbmsg writes protobuf messages field by field, for tests that build their
// input by hand: Msg(1, Str(1, "web"), Var(7, 3)) is a message whose field 1 is a message
// holding a string field 1 and a varint field 7.
package pbmsg

import (
	"bytes"

	"github.com/kinformer/kinformer/internal/protowire"
)

// Tag is field num's tag for wire type typ.
func Tag(num int, typ protowire.Type) []byte {
	return protowire.AppendTag(nil, protowire.Number(num), typ)
}

// Str is a string (or bytes) field.
func Str(num int, s string) []byte {
	return protowire.AppendString(Tag(num, protowire.Bytes), s)
}

// Msg is a message field holding fields.
func Msg(num int, fields ...[]byte) []byte {
	return protowire.AppendBytes(Tag(num, protowire.Bytes), Cat(fields...))
}

// Var is a varint field.
func Var(num int, v uint64) []byte {
	return protowire.AppendVarint(Tag(num, protowire.Varint), v)
}

// Fixed64 is a fixed 64-bit field (little-endian, as protobuf writes it).
func Fixed64(num int, v uint64) []byte {
	b := Tag(num, protowire.Fixed64)
	for i := range 8 {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}

// Fixed32 is a fixed 32-bit field.
func Fixed32(num int, v uint32) []byte {
	b := Tag(num, protowire.Fixed32)
	for i := range 4 {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}

// Entry is a map entry field: key 1, value 2.
func Entry(num int, k, v string) []byte { return Msg(num, Str(1, k), Str(2, v)) }

// Cat is the fields one after the other.
func Cat(fields ...[]byte) []byte { return bytes.Join(fields, nil) }
