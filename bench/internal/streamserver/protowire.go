package streamserver

import (
	"errors"
	"fmt"
)

// The few protobuf wire facts the server needs, written by hand so that the main module
// never imports k8s.io or a protobuf library. See
// https://protobuf.dev/programming-guides/encoding/ for the encoding.

// Wire types of a field's tag.
const (
	wireVarint = 0
	wire64     = 1
	wireBytes  = 2 // length-delimited: strings, bytes, embedded messages
	wire32     = 5
)

// pbTag is the tag byte of field (1-15) with wire type wt.
func pbTag(field, wt int) byte { return byte(field<<3 | wt) }

// appendVarint appends v as a base-128 varint, least significant group first.
func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// varintLen is the length of v as a varint.
func varintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// readVarint reads the varint at the start of b and returns it and its length.
func readVarint(b []byte) (uint64, int, error) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return v, i + 1, nil
		}
	}
	return 0, 0, errors.New("truncated or overlong varint")
}

// appendBytesField appends field (1-15) as a length-delimited field holding p.
func appendBytesField(b []byte, field int, p []byte) []byte {
	b = append(b, pbTag(field, wireBytes))
	b = appendVarint(b, uint64(len(p)))
	return append(b, p...)
}

// appendStringField is appendBytesField for a string.
func appendStringField(b []byte, field int, s string) []byte {
	b = append(b, pbTag(field, wireBytes))
	b = appendVarint(b, uint64(len(s)))
	return append(b, s...)
}

// bytesFieldLen is the length of a length-delimited field (1-15) of n bytes.
func bytesFieldLen(n int) int { return 1 + varintLen(uint64(n)) + n }

// pbField is one field of a message, as eachField reads it.
type pbField struct {
	num, wt int
	val     []byte // a length-delimited field's bytes (nil for the other wire types)
	v       uint64 // a varint field's value
	at      int    // val's offset in the message
}

// eachField calls fn for every field of msg in order. It reads only the framing: a
// length-delimited field's bytes are handed over as they are.
func eachField(msg []byte, fn func(f pbField) error) error {
	for i := 0; i < len(msg); {
		key, n, err := readVarint(msg[i:])
		if err != nil {
			return fmt.Errorf("at byte %d: tag: %w", i, err)
		}
		i += n
		f := pbField{num: int(key >> 3), wt: int(key & 7)}
		if f.num == 0 {
			return fmt.Errorf("at byte %d: field number 0", i-n)
		}
		switch f.wt {
		case wireVarint:
			if f.v, n, err = readVarint(msg[i:]); err != nil {
				return fmt.Errorf("field %d: %w", f.num, err)
			}
			i += n
		case wire64:
			i += 8
		case wire32:
			i += 4
		case wireBytes:
			l, n, err := readVarint(msg[i:])
			if err != nil {
				return fmt.Errorf("field %d: length: %w", f.num, err)
			}
			i += n
			if l > uint64(len(msg)-i) {
				return fmt.Errorf("field %d: %d bytes, only %d left", f.num, l, len(msg)-i)
			}
			f.val, f.at = msg[i:i+int(l)], i
			i += int(l)
		default:
			return fmt.Errorf("field %d: unsupported wire type %d", f.num, f.wt)
		}
		if i > len(msg) {
			return fmt.Errorf("field %d: truncated", f.num)
		}
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}
