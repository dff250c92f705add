package codec

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sync"
)

// builder writes members, packed, into a scratch buffer, and build copies them into one
// exactly sized buffer: the Members of one struct.
type builder struct {
	sp    *[]byte // the scratch buffer's pool entry
	buf   []byte
	n     int
	small [16]span
	more  []span
	index map[string]int // by name, once there are many members
	// proto says the members are protobuf fields, added with addField, verbatim.
	proto bool
}

// span is a member in buf: buf[start:end], or dropped (a later one had its name). name
// is the raw name the decoder found, for finding duplicates.
type span struct {
	start, end int
	name       []byte
}

// scratch holds the builders' buffers between uses: decoders running at once each take
// their own.
var scratch = sync.Pool{New: func() any { return new([]byte) }}

func (b *builder) grow() {
	if b.sp == nil {
		b.sp = scratch.Get().(*[]byte)
		b.buf = (*b.sp)[:0]
	}
}

// addValue adds the member name whose value is at data[i], as the decoder finds it, and
// returns the index just past the value. A later member of the same name replaces an
// earlier one (as a JSON decoder does: the last of duplicate members wins).
func (b *builder) addValue(name, data []byte, i int) int {
	b.grow()
	start := len(b.buf)
	b.buf = appendName(b.buf, name)
	at := len(b.buf)
	end, buf, packed := packValue(append(b.buf, make([]byte, binary.MaxVarintLen64)...), data, i)
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
func (b *builder) addText(name string, value []byte) {
	b.grow()
	start := len(b.buf)
	b.buf = appendName(b.buf, []byte(name))
	at := len(b.buf)
	packed := false
	if bytes.ContainsFunc(value, isMark) { // not JSON text: kept as it is
		b.buf = append(b.buf, make([]byte, binary.MaxVarintLen64)...)
		b.buf = append(b.buf, value...)
	} else {
		b.buf, packed = packText(append(b.buf, make([]byte, binary.MaxVarintLen64)...), value)
	}
	b.placeValue(at, packed)
	b.push(span{start, len(b.buf), nil})
}

// addField adds a protobuf field, its tag and value as written.
func (b *builder) addField(f []byte) {
	b.grow()
	b.proto = true
	b.buf = append(b.buf, f...)
}

// addMember adds a member as stored in a Members. Names must be unique.
func (b *builder) addMember(m member) {
	b.grow()
	start := len(b.buf)
	b.buf = append(b.buf, m.enc...)
	b.push(span{start, len(b.buf), nil})
}

// placeValue writes the header of the value that follows room for the longest header
// at buf[at:], and moves the value next to it.
func (b *builder) placeValue(at int, packed bool) {
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

func (b *builder) push(s span) {
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

func (b *builder) find(name []byte) (int, bool) {
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

func (b *builder) at(i int) *span {
	if i < len(b.small) {
		return &b.small[i]
	}
	return &b.more[i-len(b.small)]
}

// build returns the Members' buffer (see withLength): nil for no members. It may be
// shared with other Members holding the same members (buffers are never written once
// built): a small one through the intern table, a larger one through parts when it is
// set. A large buffer (a Secret's data) is copied once, into the buffer kept.
func (b *builder) build(parts *parts) []byte {
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
	switch n := uvarintLen(len(out)<<1) + len(out); {
	case len(out) == 0:
	case n <= internMax:
		// Small: framed on the stack, and shared through the intern table.
		var small [internMax]byte
		buf = internBytes(withLength(small[:0], out, b.proto))
	case parts != nil && n <= maxFramedInScratch:
		// Framed in the scratch buffer's room past its end (which the next use writes
		// over; the room grown stays with the pool's buffer): a part the table holds
		// costs no allocation.
		b.buf = slices.Grow(b.buf, n)
		buf = parts.bytes(withLength(b.buf[len(b.buf):len(b.buf)], out, b.proto))
	case parts != nil:
		buf = parts.adopt(withLength(make([]byte, 0, n), out, b.proto))
	default:
		buf = withLength(make([]byte, 0, n), out, b.proto) // the one copy kept
	}
	b.discard()
	return buf
}

// holds reports whether the protobuf fields added are exactly those m holds, in order
// (none, when m is empty).
func (b *builder) holds(m Members) bool {
	run, proto := m.runOf()
	if b.sp == nil {
		return m.p == nil
	}
	return proto && b.proto && bytes.Equal(run, b.buf)
}

// discard gives the scratch buffer back (build does, once it has built).
func (b *builder) discard() {
	if b.sp != nil && cap(b.buf) <= 64<<10 {
		*b.sp = b.buf[:0]
		scratch.Put(b.sp)
	}
	b.sp = nil
}

func (b *builder) dropped() bool {
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

// maxFramedInScratch bounds the buffers framed in the scratch buffer's room: a larger
// one (a Secret's data) would double a scratch buffer that the pool then drops, so it is
// framed in the buffer kept instead.
const maxFramedInScratch = 16 << 10

// uvarintLen is the length of n as a uvarint.
func uvarintLen(n int) int {
	l := 1
	for ; n >= 0x80; n >>= 7 {
		l++
	}
	return l
}
