package protowire

import (
	"errors"
	"fmt"
	"math/bits"
)

// Type is a field's wire type, the low three bits of its tag.
type Type int8

// The wire types. Kubernetes' messages use Varint and Bytes only (and Fixed64 for
// doubles, which no modelled field is); the group types are long deprecated, and a
// reader that meets one reports it as malformed.
const (
	Varint  Type = 0
	Fixed64 Type = 1
	Bytes   Type = 2
	Fixed32 Type = 5
)

// Number is a field's number.
type Number int32

// MaxNumber is the largest valid field number.
const MaxNumber Number = 1<<29 - 1

// Codes that the Consume functions return, negative, instead of a length.
const (
	errTruncated = -1 - iota
	errOverflow
	errBadType
	errBadNumber
)

// Error returns the error a negative result of a Consume function stands for.
func Error(n int) error {
	switch n {
	case errTruncated:
		return ErrTruncated
	case errOverflow:
		return errors.New("protobuf: varint overflows 64 bits")
	case errBadType:
		return errors.New("protobuf: unknown wire type")
	case errBadNumber:
		return errors.New("protobuf: invalid field number")
	}
	if n < 0 {
		return fmt.Errorf("protobuf: malformed input (%d)", n)
	}
	return nil
}

// ErrTruncated says the input ends inside a field.
var ErrTruncated = errors.New("protobuf: truncated input")

// ConsumeVarint reads a varint from the start of b: its value and its length.
func ConsumeVarint(b []byte) (uint64, int) {
	// The common case, one or two bytes (tags, lengths, small numbers), first.
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	var v uint64
	for i := 0; i < 10; i++ {
		if i >= len(b) {
			return 0, errTruncated
		}
		c := b[i]
		if i == 9 && c > 1 {
			return 0, errOverflow
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, errOverflow
}

// ConsumeTag reads a field's tag: its number, its wire type, and the tag's length.
func ConsumeTag(b []byte) (Number, Type, int) {
	v, n := ConsumeVarint(b)
	if n < 0 {
		return 0, 0, n
	}
	num := v >> 3
	if num == 0 || num > uint64(MaxNumber) {
		return 0, 0, errBadNumber
	}
	return Number(num), Type(v & 7), n
}

// ConsumeBytes reads a length-delimited value: its bytes (a part of b) and the length
// consumed, the length prefix included.
func ConsumeBytes(b []byte) ([]byte, int) {
	l, n := ConsumeVarint(b)
	if n < 0 {
		return nil, n
	}
	if l > uint64(len(b)-n) {
		return nil, errTruncated
	}
	return b[n : n+int(l)], n + int(l)
}

// ConsumeValue reads a value of wire type t from the start of b and returns its length,
// without decoding it: what a reader does with a field it does not know.
func ConsumeValue(t Type, b []byte) int {
	switch t {
	case Varint:
		_, n := ConsumeVarint(b)
		return n
	case Fixed64:
		if len(b) < 8 {
			return errTruncated
		}
		return 8
	case Fixed32:
		if len(b) < 4 {
			return errTruncated
		}
		return 4
	case Bytes:
		_, n := ConsumeBytes(b)
		return n
	}
	return errBadType
}

// ConsumeField reads a whole field, tag and value: its number, its type and its length.
func ConsumeField(b []byte) (Number, Type, int) {
	num, typ, n := ConsumeTag(b)
	if n < 0 {
		return 0, 0, n
	}
	m := ConsumeValue(typ, b[n:])
	if m < 0 {
		return 0, 0, m
	}
	return num, typ, n + m
}

// AppendVarint appends v as a varint.
func AppendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// SizeVarint is the length of v as a varint.
func SizeVarint(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// AppendTag appends the tag of field num of wire type t.
func AppendTag(b []byte, num Number, t Type) []byte {
	return AppendVarint(b, uint64(num)<<3|uint64(t))
}

// AppendBytes appends v behind its length (the value of a Bytes field, without its tag).
func AppendBytes(b []byte, v []byte) []byte {
	return append(AppendVarint(b, uint64(len(v))), v...)
}

// AppendString appends s behind its length.
func AppendString(b []byte, s string) []byte {
	return append(AppendVarint(b, uint64(len(s))), s...)
}

// Next reads the field at the start of b: its number, its wire type, its value (a Bytes
// field's content; a varint's or a fixed value's bytes) and its whole length, or a
// negative length for malformed input (see Error). It is what a decoder's loop calls for
// each field: a one-byte tag and a one-byte length or varint, most of a message's
// fields, take no loop.
func Next(b []byte) (num Number, typ Type, v []byte, n int) {
	if len(b) >= 2 && b[0] < 0x80 && b[0] >= 8 && b[1] < 0x80 {
		num, typ = Number(b[0]>>3), Type(b[0]&7)
		switch typ {
		case Bytes:
			if l := 2 + int(b[1]); l <= len(b) {
				return num, typ, b[2:l:l], l
			}
			return 0, 0, nil, errTruncated
		case Varint:
			return num, typ, b[1:2:2], 2
		}
	}
	num, typ, t := ConsumeTag(b)
	if t < 0 {
		return 0, 0, nil, t
	}
	m := ConsumeValue(typ, b[t:])
	if m < 0 {
		return 0, 0, nil, m
	}
	v = b[t : t+m : t+m]
	if typ == Bytes {
		v, _ = ConsumeBytes(v)
	}
	return num, typ, v, t + m
}
