package codec

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kinformer/kinformer/internal/protowire"
)

// ErrProtobufMembers says why an object decoded from protobuf cannot be written as JSON,
// nor take JSON members: the fields it carries that no Go field models are protobuf
// bytes, known by number only, and this engine has no schema to turn them into JSON.
// Write such an object in protobuf, which carries them back intact.
var ErrProtobufMembers = errors.New("the members no field models were decoded from protobuf, which only protobuf can write")

// ErrJSONMembers is the converse: an object holding JSON members (decoded from JSON, or
// given members with Set) has nothing a protobuf message can carry them as.
var ErrJSONMembers = errors.New("the members no field models are JSON, which protobuf cannot carry")

// IsProtobuf reports whether u holds protobuf fields rather than JSON members.
func (u Members) IsProtobuf() bool {
	_, proto := u.runOf()
	return proto
}

// Protobuf returns the protobuf fields u holds, as the server wrote them (tag and value,
// in the order they came), and true; or nil and false when u holds JSON members. The
// bytes may be shared: do not change them.
func (u Members) Protobuf() ([]byte, bool) {
	run, proto := u.runOf()
	if !proto {
		return nil, false
	}
	return run[:len(run):len(run)], true
}

// protoFieldsEqual reports whether two runs of protobuf fields hold the same fields:
// the same bytes, or the same once sorted by number (stably: the occurrences of a
// repeated field keep their order, which is part of its value).
func protoFieldsEqual(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	x, okx := sortedFields(a)
	y, oky := sortedFields(b)
	return okx && oky && slices.EqualFunc(x, y, func(p, q piece) bool { return bytes.Equal(p.b, q.b) })
}

func sortedFields(run []byte) ([]piece, bool) {
	var out []piece
	for len(run) > 0 {
		num, _, n := protowire.ConsumeField(run)
		if n < 0 {
			return nil, false
		}
		out = append(out, piece{num, run[:n]})
		run = run[n:]
	}
	slices.SortStableFunc(out, func(p, q piece) int { return cmp.Compare(p.num, q.num) })
	return out, true
}

// ProtobufField returns the value of field num among the protobuf fields u holds (a
// Bytes field's content, a varint's bytes; the last occurrence, as protobuf reads a
// field given twice), and whether u holds one.
func (u Members) ProtobufField(num int32) ([]byte, bool) {
	run, proto := u.runOf()
	if !proto {
		return nil, false
	}
	var (
		value []byte
		found bool
	)
	for len(run) > 0 {
		n, _, v, l := protowire.Next(run)
		if l < 0 {
			break
		}
		if int32(n) == num {
			value, found = v, true
		}
		run = run[l:]
	}
	return value, found
}

// DeleteProtobufField removes every occurrence of field num from the protobuf fields u
// holds (a Members is never changed in place: it gets a new buffer); JSON members are
// left alone.
func (u *Members) DeleteProtobufField(num int32) {
	if _, ok := u.ProtobufField(num); !ok {
		return
	}
	run, _ := u.runOf()
	var b builder
	for len(run) > 0 {
		n, _, _, l := protowire.Next(run)
		if l < 0 {
			break
		}
		if int32(n) != num {
			b.addField(run[:l])
		}
		run = run[l:]
	}
	b.proto = true // even when nothing is left: an empty run reads as no members either way
	*u = membersOf(b.build(nil))
}

// countFields counts the fields of a run of protobuf fields.
func countFields(run []byte) int {
	n := 0
	for len(run) > 0 {
		_, _, l := protowire.ConsumeField(run)
		if l < 0 {
			break
		}
		run = run[l:]
		n++
	}
	return n
}

// protoFieldsString shows protobuf fields by number and size: {#5:12B,#7:varint}.
func protoFieldsString(run []byte) string {
	var b strings.Builder
	b.WriteString("protobuf{")
	for len(run) > 0 {
		num, typ, l := protowire.ConsumeField(run)
		if l < 0 {
			b.WriteString("malformed")
			break
		}
		if b.Len() > len("protobuf{") {
			b.WriteByte(',')
		}
		if typ == protowire.Bytes {
			_, _, tag := protowire.ConsumeTag(run) // its length: a tag may be written long
			v, _ := protowire.ConsumeBytes(run[tag:])
			fmt.Fprintf(&b, "#%d:%dB", num, len(v))
		} else {
			fmt.Fprintf(&b, "#%d", num)
		}
		run = run[l:]
	}
	b.WriteByte('}')
	return b.String()
}
