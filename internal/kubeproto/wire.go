package kubeproto

import (
	"fmt"

	"github.com/kinformer/kinformer/internal/protowire"
)

// malformedError names the message and field at fault, since "truncated input" alone
// does not say where a broken body broke; it wraps the protowire error so that a caller
// can still tell a cut-off body (errors.Is(err, protowire.ErrTruncated)) from garbage.
type malformedError struct {
	msg string
	err error
}

func (e *malformedError) Error() string { return e.msg }
func (e *malformedError) Unwrap() error { return e.err }

// field is one field of a message, its value decoded as far as its wire type allows.
type field struct {
	num protowire.Number
	typ protowire.Type
	b   []byte // a Bytes field's value, capped so that appending to it cannot clobber what follows
	v   uint64 // a Varint field's value
}

// walk calls fn for each field of msg, in order, and stops at the first error, which it
// returns as is (so that an error from a caller's callback reaches the caller unchanged).
// what names the message in errors.
func walk(what string, msg []byte, fn func(f field) error) error {
	for off := 0; off < len(msg); {
		num, typ, n := protowire.ConsumeTag(msg[off:])
		if n < 0 {
			return tagError(what, off, n)
		}
		f := field{num: num, typ: typ}
		rest := msg[off+n:]
		var m int
		switch typ {
		case protowire.Varint:
			f.v, m = protowire.ConsumeVarint(rest)
		case protowire.Bytes:
			// Read the length here rather than through ConsumeBytes, to say in the error
			// how far past the end a length points.
			l, k := protowire.ConsumeVarint(rest)
			if k < 0 {
				return valueError(what, num, k)
			}
			if l > uint64(len(rest)-k) {
				return &malformedError{
					fmt.Sprintf("%s: truncated field %d (a %d-byte value, %d bytes left)", what, num, l, len(rest)-k),
					protowire.ErrTruncated}
			}
			end := k + int(l)
			f.b, m = rest[k:end:end], end
		default:
			m = protowire.ConsumeValue(typ, rest)
		}
		if m < 0 {
			return valueError(what, num, m)
		}
		if err := fn(f); err != nil {
			return err
		}
		off += n + m
	}
	return nil
}

func tagError(what string, off, code int) error {
	err := protowire.Error(code)
	if err == protowire.ErrTruncated {
		return &malformedError{fmt.Sprintf("%s: truncated field tag at byte %d", what, off), err}
	}
	return &malformedError{fmt.Sprintf("%s: bad field tag at byte %d: %v", what, off, err), err}
}

func valueError(what string, num protowire.Number, code int) error {
	err := protowire.Error(code)
	if err == protowire.ErrTruncated {
		return &malformedError{fmt.Sprintf("%s: truncated field %d", what, num), err}
	}
	return &malformedError{fmt.Sprintf("%s: field %d: %v", what, num, err), err}
}

// bytes returns the value of a known length-delimited field (a string, bytes or a
// message), or an error if the field has another wire type.
func (f field) bytes(what, name string) ([]byte, error) {
	if f.typ != protowire.Bytes {
		return nil, f.wrongType(what, name, protowire.Bytes)
	}
	return f.b, nil
}

// varint returns the value of a known varint field.
func (f field) varint(what, name string) (uint64, error) {
	if f.typ != protowire.Varint {
		return 0, f.wrongType(what, name, protowire.Varint)
	}
	return f.v, nil
}

// str returns a known string field's value as a copy, so that the string does not pin
// the whole response body.
func (f field) str(what, name string) (string, error) {
	b, err := f.bytes(what, name)
	return string(b), err
}

func (f field) wrongType(what, name string, want protowire.Type) error {
	return &malformedError{fmt.Sprintf("%s: field %d (%s) has wire type %s, want %s",
		what, f.num, name, typeName(f.typ), typeName(want)), nil}
}

func typeName(t protowire.Type) string {
	switch t {
	case protowire.Varint:
		return "varint"
	case protowire.Fixed64:
		return "fixed64"
	case protowire.Bytes:
		return "bytes"
	case protowire.Fixed32:
		return "fixed32"
	}
	return fmt.Sprint(int(t))
}

// The writers size each nested message before writing it, since its length precedes it.

func appendStringField(b []byte, num protowire.Number, s string) []byte {
	return protowire.AppendString(protowire.AppendTag(b, num, protowire.Bytes), s)
}

func appendBytesField(b []byte, num protowire.Number, v []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.Bytes), v)
}

func appendVarintField(b []byte, num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.Varint), v)
}

// appendMessageHeader writes the tag and length of a message field of size bytes.
func appendMessageHeader(b []byte, num protowire.Number, size int) []byte {
	return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.Bytes), uint64(size))
}

// sizeBytesField is the size of a length-delimited field of an n-byte value, with a
// one-byte tag (every field number here is below 16).
func sizeBytesField(n int) int { return 1 + protowire.SizeVarint(uint64(n)) + n }

func sizeVarintField(v uint64) int { return 1 + protowire.SizeVarint(v) }
