package object

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"iter"
	"reflect"
	"sync"
)

// Unknown holds the JSON members of an object that this package does not model: their
// names and their values byte for byte, in the order they came. Every struct that mirrors
// a part of a Kubernetes object carries one, so that decoding and encoding again loses
// nothing: fields added in later API versions, managedFields, a pod spec's volumes and
// probes.
//
// All the members of one Unknown live in a single compact buffer (the names and strings
// of the Kubernetes API kept in two bytes each), which is never changed once built: Set
// and Delete build a new one. So an Unknown is a value: copying it (with the struct it
// is in) is cheap, the copies are independent, and one may be shared by objects and
// goroutines. The zero value holds no members.
type Unknown struct {
	// b is a run of members: each a name header, the name's bytes unless the header
	// names a word, a value header and the value's bytes. A name header is a uvarint,
	// index<<1|1 for the word packWords[index], len<<1 for a name of len bytes that
	// follow. A value header is len<<1|packed: a packed value holds word codes (see
	// pack), any other is the JSON text itself. Names are unique.
	b []byte
}

// Len returns the number of members.
func (u Unknown) Len() int {
	n := 0
	for range u.members() {
		n++
	}
	return n
}

// Get returns the value of the member name (its JSON text), or nil if there is none. A
// value is never empty (a member set to nothing reads null). It may be shared with u: do
// not change it.
func (u Unknown) Get(name string) json.RawMessage {
	for m := range u.members() {
		if m.is(name) {
			return m.text()
		}
	}
	return nil
}

// All yields every member's name and value, in order.
func (u Unknown) All() iter.Seq2[string, json.RawMessage] {
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
// encoding a nil json.RawMessage gives.
func (u *Unknown) Set(name string, value json.RawMessage) {
	if len(value) == 0 {
		value = json.RawMessage("null")
	}
	var b unknownBuilder
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
	u.b = b.build()
}

// Delete removes the member name, if there is one.
func (u *Unknown) Delete(name string) {
	if u.Get(name) == nil {
		return // the common case for a transform: nothing to build, nothing allocated
	}
	var b unknownBuilder
	for m := range u.members() {
		if !m.is(name) {
			b.addMember(m)
		}
	}
	u.b = b.build()
}

// Equal reports whether u and v hold the same members with the same values, as JSON:
// member order, and the spacing and escaping of a value, make no difference (encoding an
// object compacts its unknown members' values).
func (u Unknown) Equal(v Unknown) bool {
	if bytes.Equal(u.b, v.b) {
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

// String shows the members as a JSON object, for %v and test failures.
func (u Unknown) String() string {
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
		return m.value
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

// members yields the members as stored. A malformed buffer (which only this file
// builds) ends the iteration.
func (u Unknown) members() iter.Seq[member] {
	return func(yield func(member) bool) {
		b := u.b
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

// unknownBuilder writes members, packed, into a scratch buffer, and build copies them
// into one exactly sized buffer.
type unknownBuilder struct {
	sp    *[]byte // the scratch buffer's pool entry
	buf   []byte
	n     int
	small [16]span
	more  []span
	index map[string]int // by name, once there are many members
}

// span is a member in buf: buf[start:end], or dropped (a later one had its name). name
// is the raw name the decoder found, for finding duplicates.
type span struct {
	start, end int
	name       []byte
}

var scratch = sync.Pool{New: func() any { return new([]byte) }}

func (b *unknownBuilder) grow() {
	if b.sp == nil {
		b.sp = scratch.Get().(*[]byte)
		b.buf = (*b.sp)[:0]
	}
}

// addValue adds the member name whose value is at data[i], as the decoder finds it, and
// returns the index just past the value. A later member of the same name replaces an
// earlier one (as a JSON decoder does: the last of duplicate members wins).
func (b *unknownBuilder) addValue(name, data []byte, i int) int {
	b.grow()
	start := len(b.buf)
	b.buf = appendName(b.buf, name)
	at := len(b.buf)
	end, buf, packed := scanValue(data, i, append(b.buf, make([]byte, binary.MaxVarintLen64)...))
	b.buf = buf
	if end < 0 {
		b.buf = b.buf[:start]
		return -1
	}
	b.placeValue(at, packed)
	if j, ok := b.find(name); ok {
		b.at(j).start = -1
	}
	b.push(span{start, len(b.buf), name})
	return end
}

// addText adds a new member whose value is the JSON text value. Names must be unique.
func (b *unknownBuilder) addText(name string, value []byte) {
	b.grow()
	start := len(b.buf)
	b.buf = appendName(b.buf, []byte(name))
	at := len(b.buf)
	packed := false
	if bytes.ContainsFunc(value, isMark) { // not JSON text: kept as it is
		b.buf = append(b.buf, make([]byte, binary.MaxVarintLen64)...)
		b.buf = append(b.buf, value...)
	} else {
		b.buf, packed = pack(append(b.buf, make([]byte, binary.MaxVarintLen64)...), value)
	}
	b.placeValue(at, packed)
	b.push(span{start, len(b.buf), nil})
}

// addMember adds a member as stored in an Unknown. Names must be unique.
func (b *unknownBuilder) addMember(m member) {
	b.grow()
	start := len(b.buf)
	b.buf = append(b.buf, m.enc...)
	b.push(span{start, len(b.buf), nil})
}

// placeValue writes the header of the value that follows room for the longest header
// at buf[at:], and moves the value next to it.
func (b *unknownBuilder) placeValue(at int, packed bool) {
	const room = binary.MaxVarintLen64
	n := len(b.buf) - at - room
	var hdr [room]byte
	h := binary.PutUvarint(hdr[:], uint64(n)<<1|boolBit(packed))
	copy(b.buf[at:], hdr[:h])
	copy(b.buf[at+h:], b.buf[at+room:])
	b.buf = b.buf[:at+h+n]
}

// appendName appends the header of name, and its bytes unless it is a word.
func appendName(dst, name []byte) []byte {
	if w := lookupWord(name); w >= 0 {
		return binary.AppendUvarint(dst, uint64(w)<<1|1)
	}
	dst = binary.AppendUvarint(dst, uint64(len(name))<<1)
	return append(dst, name...)
}

func (b *unknownBuilder) push(s span) {
	if b.n < len(b.small) {
		b.small[b.n] = s
	} else {
		b.more = append(b.more, s)
	}
	if b.index != nil {
		b.index[string(s.name)] = b.n
	}
	b.n++
}

func (b *unknownBuilder) find(name []byte) (int, bool) {
	if b.index == nil && b.n > len(b.small) {
		b.index = make(map[string]int, 2*b.n)
		for i := range b.n {
			b.index[string(b.at(i).name)] = i
		}
	}
	if b.index != nil {
		i, ok := b.index[string(name)]
		return i, ok
	}
	for i := range b.n {
		if s := b.at(i); s.start >= 0 && bytes.Equal(s.name, name) {
			return i, true
		}
	}
	return 0, false
}

func (b *unknownBuilder) at(i int) *span {
	if i < len(b.small) {
		return &b.small[i]
	}
	return &b.more[i-len(b.small)]
}

// build returns the Unknown's buffer: nil for no members; a small one may be shared with
// other Unknowns holding the same members (buffers are never written once built).
func (b *unknownBuilder) build() []byte {
	if b.sp == nil {
		return nil
	}
	out := b.buf
	if b.dropped() {
		w := 0
		for i := range b.n {
			if s := b.at(i); s.start >= 0 {
				w += copy(out[w:], out[s.start:s.end])
			}
		}
		out = out[:w]
	}
	var buf []byte
	switch {
	case len(out) == 0:
	case len(out) <= internMax:
		buf = internBytes(out)
	default:
		buf = append(make([]byte, 0, len(out)), out...)
	}
	if cap(b.buf) <= 64<<10 {
		*b.sp = b.buf[:0]
		scratch.Put(b.sp)
	}
	b.sp = nil
	return buf
}

func (b *unknownBuilder) dropped() bool {
	for i := range b.n {
		if b.at(i).start < 0 {
			return true
		}
	}
	return false
}

func boolBit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func isMark(r rune) bool { return r <= lastMark }

// writeName writes name as a JSON string, followed by a colon.
func writeName(b *bytes.Buffer, name string) {
	if plainName(name) {
		b.WriteByte('"')
		b.WriteString(name)
		b.WriteString(`":`)
		return
	}
	q, _ := json.Marshal(name)
	b.Write(q)
	b.WriteByte(':')
}

// plainName reports whether name needs no escaping in JSON (as encoding/json escapes,
// HTML characters included).
func plainName(name string) bool {
	for i := range len(name) {
		if c := name[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
