package codec

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"iter"
	"reflect"
	"unsafe"
)

// Members holds JSON members byte for byte, in the order they came, in one compact buffer
// that is never changed once built: Set and Delete build a new one. So a Members is a
// value: copying it is cheap, the copies are independent, and one may be shared by
// objects and goroutines. The zero value holds no members. object.Unknown is a Members.
type Members struct {
	// p points at the buffer (nil for no members): a uvarint, the length of the run
	// that follows, then the run. One pointer rather than a slice, because every struct
	// of every cached object carries a Members: a pod has a dozen, and 8 bytes instead of
	// 24 is about 200 bytes a pod.
	//
	// It is an unsafe.Pointer, not a *byte, for what reflect.DeepEqual (and ==) make of
	// it: identity. Given a *byte, DeepEqual would compare the first byte of each buffer
	// and call different members equal; given an unsafe.Pointer it calls two Members equal
	// only when they share their buffer (as a cache's objects do), and otherwise says they
	// differ, which a caller asking "did it change?" survives. Equal compares members.
	//
	// The length is written len<<1|proto: proto says the run is protobuf fields, the
	// fields of a message that no Go field claims, as the server wrote them (see
	// proto.go), rather than JSON members.
	//
	// A JSON run is the members: each a name header, the name's bytes unless the header
	// names a word, a value header and the value's bytes. A name header is a uvarint,
	// index<<1|1 for the word words[index], len<<1 for a name of len bytes that follow.
	// A value header is len<<1|packed: a packed value holds word codes (see pack.go),
	// any other is the JSON text itself. Names are unique.
	p unsafe.Pointer
}

// run returns the members' bytes, which must not be changed: JSON members, unless
// the Members holds protobuf fields.
func (u Members) run() []byte {
	run, _ := u.runOf()
	return run
}

// runOf returns the members' bytes, and whether they are protobuf fields.
func (u Members) runOf() ([]byte, bool) {
	if u.p == nil {
		return nil, false
	}
	// The length's bytes are read one at a time: the buffer may be shorter than the
	// longest uvarint, and nothing may be read past it.
	var n uint64
	for i, shift := 0, uint(0); ; i, shift = i+1, shift+7 {
		c := *(*byte)(unsafe.Add(u.p, i))
		n |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return unsafe.Slice((*byte)(unsafe.Add(u.p, i+1)), n>>1), n&1 != 0
		}
	}
}

// withLength returns run behind its length, as a Members' buffer is laid out, in dst's
// room: proto says run is protobuf fields.
func withLength(dst, run []byte, proto bool) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(run))<<1|boolBit(proto))
	return append(dst, run...)
}

// membersOf returns the Members whose buffer is buf (as withLength lays it out; empty
// for no members).
func membersOf(buf []byte) Members {
	if len(buf) == 0 {
		return Members{}
	}
	return Members{p: unsafe.Pointer(&buf[0])}
}

// Len returns the number of members (of fields, for protobuf fields).
func (u Members) Len() int {
	if run, proto := u.runOf(); proto {
		return countFields(run)
	}
	n := 0
	for range u.members() {
		n++
	}
	return n
}

// Get returns the value of the member name (its JSON text), or nil if there is none. A
// value is never empty (a member set to nothing reads null). It may be shared with u: do
// not change it. Protobuf fields have numbers, not names: Get finds none of them.
func (u Members) Get(name string) json.RawMessage {
	for m := range u.members() {
		if m.is(name) {
			return m.text()
		}
	}
	return nil
}

// All yields every member's name and value, in order (none for protobuf fields).
func (u Members) All() iter.Seq2[string, json.RawMessage] {
	return func(yield func(string, json.RawMessage) bool) {
		for m := range u.members() {
			if !yield(m.nameString(), m.text()) {
				return
			}
		}
	}
}

// Set adds the member name with a copy of value, or replaces its value where it is
// already there (keeping its place). An empty value is stored as null, which is what
// encoding a nil json.RawMessage gives. Protobuf fields cannot take a JSON member: Set
// on them panics (ErrProtobufMembers says why).
func (u *Members) Set(name string, value json.RawMessage) {
	if u.IsProtobuf() {
		panic(fmt.Sprintf("codec: Set(%q) on members decoded from protobuf: %v", name, ErrProtobufMembers))
	}
	if len(value) == 0 {
		value = json.RawMessage("null")
	}
	var b builder
	found := false
	for m := range u.members() {
		if m.is(name) {
			b.addText(name, value)
			found = true
			continue
		}
		b.addMember(m)
	}
	if !found {
		b.addText(name, value)
	}
	*u = membersOf(b.build(nil))
}

// Delete removes the member name, if there is one.
func (u *Members) Delete(name string) {
	if u.Get(name) == nil {
		return // the common case for a transform: nothing to build, nothing allocated
	}
	var b builder
	for m := range u.members() {
		if !m.is(name) {
			b.addMember(m)
		}
	}
	*u = membersOf(b.build(nil))
}

// Equal reports whether u and v hold the same members with the same values, as JSON:
// member order, and the spacing and escaping of a value, make no difference (encoding an
// object compacts its unknown members' values). Protobuf fields equal the same fields,
// byte for byte, in any order but that of the fields of one number (as protobuf reads
// them), and never JSON members.
func (u Members) Equal(v Members) bool {
	ur, up := u.runOf()
	vr, vp := v.runOf()
	if up != vp || up {
		return up == vp && protoFieldsEqual(ur, vr)
	}
	if bytes.Equal(ur, vr) {
		return true
	}
	if u.Len() != v.Len() {
		return false
	}
	for m := range u.members() {
		b := v.Get(m.nameString())
		if b == nil || !jsonEqual(m.text(), b) {
			return false
		}
	}
	return true
}

// String shows the members as a JSON object, for %v and test failures; protobuf fields
// as their numbers and lengths.
func (u Members) String() string {
	if run, proto := u.runOf(); proto {
		return protoFieldsString(run)
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for m := range u.members() {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		writeName(&b, m.nameString())
		b.Write(m.appendText(b.AvailableBuffer()))
	}
	b.WriteByte('}')
	return b.String()
}

// jsonEqual compares two JSON values by meaning, numbers by their text.
func jsonEqual(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	decode := func(data []byte) (any, bool) {
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		var v any
		return v, d.Decode(&v) == nil
	}
	x, okx := decode(a)
	y, oky := decode(b)
	return okx && oky && reflect.DeepEqual(x, y)
}

// member is one member as stored.
type member struct {
	name   []byte // when word < 0
	word   int    // index in words, or -1
	value  []byte // packed or not, as stored
	packed bool
	enc    []byte // the whole member as stored
}

func (m member) is(name string) bool {
	if m.word >= 0 {
		return words[m.word] == name
	}
	return string(m.name) == name
}

func (m member) nameString() string {
	if m.word >= 0 {
		return words[m.word]
	}
	return string(m.name)
}

// text returns the value's JSON text: shared with the buffer, or unpacked into a new one.
func (m member) text() json.RawMessage {
	if !m.packed {
		return m.value[:len(m.value):len(m.value)] // an append must not run into the next member
	}
	return unpack(make([]byte, 0, 2*len(m.value)), m.value)
}

// appendText appends the value's JSON text to dst.
func (m member) appendText(dst []byte) []byte {
	if !m.packed {
		return append(dst, m.value...)
	}
	return unpack(dst, m.value)
}

// members yields the members as stored. A malformed buffer (which only the builder
// makes) ends the iteration.
func (u Members) members() iter.Seq[member] {
	return func(yield func(member) bool) {
		b, proto := u.runOf()
		if proto {
			return // fields, not members
		}
		for len(b) > 0 {
			start := b
			var m member
			h, k := binary.Uvarint(b)
			if k <= 0 {
				return
			}
			b = b[k:]
			if h&1 != 0 {
				if m.word = int(h >> 1); m.word >= len(words) {
					return
				}
			} else {
				m.word = -1
				if m.name, b = cut(b, h>>1); m.name == nil {
					return
				}
			}
			if h, k = binary.Uvarint(b); k <= 0 {
				return
			}
			m.packed = h&1 != 0
			if m.value, b = cut(b[k:], h>>1); m.value == nil {
				return
			}
			m.enc = start[: len(start)-len(b) : len(start)-len(b)]
			if !yield(m) {
				return
			}
		}
	}
}

// cut returns the first n bytes of b (nil if there are not that many) and the rest.
func cut(b []byte, n uint64) (part, rest []byte) {
	if n > uint64(len(b)) {
		return nil, nil
	}
	return b[:n:n], b[n:]
}
