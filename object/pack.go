package object

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strings"
)

// The packed form of a JSON value, in which Unknown keeps its members: each string that
// is one of the words (packWords: the member names and common values of the Kubernetes
// API) becomes two bytes, a mark and the low byte of the word's index. Marks
// keyMark..keyMark+3 stand for "word": (a member name and its colon), valueMark..
// valueMark+3 for "word"; the mark's offset from either is the index's high bits. JSON
// text never holds these bytes (control characters are escaped in strings, and only
// white space may stand between tokens), so unpack knows them. A pod's spec packs to
// about a third of its JSON.
const (
	keyMark   = 0x01
	valueMark = 0x05
	lastMark  = 0x08
)

var words = strings.Fields(packWords)

// wordTable finds a word's index: open addressing on wordHash, each slot the index + 1
// (0 for none). wordStarts has a bit for the first two bytes of every word (or its only
// byte and 0), which rules out most other strings at once. Built when the package loads,
// read-only afterwards.
var (
	wordStarts            [1 << 16 / 64]uint64
	wordTable, maxWordLen = buildWordTable()
)

func buildWordTable() (*[1 << 12]uint16, int) {
	if len(words) > 1024 {
		panic("object: more than 1024 packWords")
	}
	var t [1 << 12]uint16
	longest := 0
	for i, w := range words {
		if strings.ContainsFunc(w, func(r rune) bool { return r <= lastMark || r == '"' || r == '\\' }) {
			panic("object: packWords has a word a JSON string holds escaped: " + w)
		}
		longest = max(longest, len(w))
		k := startKey([]byte(w))
		wordStarts[k/64] |= 1 << (k % 64)
		s := wordHash([]byte(w))
		for t[s] != 0 {
			if words[t[s]-1] == w {
				panic("object: packWords repeats " + w)
			}
			s = (s + 1) & (len(t) - 1)
		}
		t[s] = uint16(i + 1)
	}
	return &t, longest
}

func startKey(b []byte) int {
	if len(b) == 1 {
		return int(b[0]) << 8
	}
	return int(b[0])<<8 | int(b[1])
}

func wordHash(b []byte) int {
	n := len(b)
	h := uint32(n)*0x9e3779b1 ^ uint32(b[0])<<16 ^ uint32(b[n/2])<<8 ^ uint32(b[n-1])
	h *= 0x85ebca6b
	return int(h >> 20) // 12 bits
}

// lookupWord returns the index of the word b, or -1.
func lookupWord(b []byte) int {
	if len(b) == 0 || len(b) > maxWordLen {
		return -1
	}
	if k := startKey(b); wordStarts[k/64]&(1<<(k%64)) == 0 {
		return -1
	}
	for s := wordHash(b); ; s = (s + 1) & (len(wordTable) - 1) {
		e := wordTable[s]
		if e == 0 {
			return -1
		}
		if words[e-1] == string(b) {
			return int(e - 1)
		}
	}
}

// appendWord appends the code of word w: as a member name (followed by its colon in the
// text) if key, else as a string value.
func appendWord(dst []byte, w int, key bool) []byte {
	mark := byte(valueMark)
	if key {
		mark = keyMark
	}
	return append(dst, mark+byte(w>>8), byte(w))
}

// scanValue finds the end of the JSON value at data[i] and appends its packed form to
// dst. It reports the index just past the value (-1 if it does not end within data) and
// whether any word was packed (if not, what it appended is the value's text itself).
// Like jsonscan.ValueEnd it counts brackets of either kind alike.
func scanValue(data []byte, i int, dst []byte) (end int, out []byte, packed bool) {
	return scan(data, i, dst, true)
}

// skipValue returns the index just past the JSON value at data[i], or -1.
func skipValue(data []byte, i int) int {
	end, _, _ := scan(data, i, nil, false)
	return end
}

// scan is scanValue, or skipValue when !packing.
func scan(data []byte, i int, dst []byte, packing bool) (end int, out []byte, packed bool) {
	last, depth, j := i, 0, i
	for j < len(data) {
		switch data[j] {
		case '"':
			e := quotedEnd(data, j)
			if e < 0 {
				return -1, dst, false
			}
			if packing {
				// A string with escapes never equals a word: words hold no backslash.
				if w := lookupWord(data[j+1 : e-1]); w >= 0 {
					dst = append(dst, data[last:j]...)
					key := depth > 0 && e < len(data) && data[e] == ':'
					dst = appendWord(dst, w, key)
					if key {
						e++
					}
					last, packed = e, true
				}
			}
			if j = e; depth == 0 {
				end = j
			}
		case '{', '[':
			depth++
			j++
		case '}', ']':
			if depth--; depth < 0 {
				return -1, dst, false
			}
			if j++; depth == 0 {
				end = j
			}
		default:
			if depth > 0 {
				j++
				continue
			}
			for j < len(data) && !endsScalar(data[j]) { // a number or a literal
				j++
			}
			if j == i {
				return -1, dst, false
			}
			end = j
		}
		if end > 0 {
			if packing {
				dst = append(dst, data[last:end]...)
			}
			return end, dst, packed
		}
	}
	return -1, dst, false
}

// quotedEnd returns the index just past the string whose opening quote is data[i], or -1.
func quotedEnd(data []byte, i int) int {
	end, _ := scanString(data, i)
	return end
}

// scanString returns the index just past the string whose opening quote is data[i], or
// -1, and whether the string has no escapes (its bytes are its value). It looks at eight
// bytes at a time for a quote or a backslash.
func scanString(data []byte, i int) (end int, plain bool) {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	plain = true
	j := i + 1
	for j+8 <= len(data) {
		x := binary.LittleEndian.Uint64(data[j:])
		q, b := x^(ones*'"'), x^(ones*'\\')
		// The lowest byte flagged is the first quote or backslash (higher flags may be
		// false, after a borrow).
		m := ((q-ones)&^q | (b-ones)&^b) & highs
		if m == 0 {
			j += 8
			continue
		}
		j += bits.TrailingZeros64(m) / 8
		if data[j] == '"' {
			return j + 1, plain
		}
		plain = false
		j += 2 // the backslash and the byte it escapes
	}
	for j < len(data) {
		switch data[j] {
		case '"':
			return j + 1, plain
		case '\\':
			plain = false
			j++
		}
		j++
	}
	return -1, false
}

// pack appends the packed form of the JSON text v (a whole value, which may have white
// space around it) to dst, and reports whether any word was packed.
func pack(dst, v []byte) ([]byte, bool) {
	packed := false
	for {
		q := bytes.IndexByte(v, '"')
		if q < 0 {
			break
		}
		end := quotedEnd(v, q)
		if end < 0 {
			break
		}
		if w := lookupWord(v[q+1 : end-1]); w >= 0 {
			dst = append(dst, v[:q]...)
			key := end < len(v) && v[end] == ':'
			dst = appendWord(dst, w, key)
			if key {
				end++
			}
			packed = true
		} else {
			dst = append(dst, v[:end]...)
		}
		v = v[end:]
	}
	return append(dst, v...), packed
}

// unpack appends the JSON text of the packed value p to dst.
func unpack(dst, p []byte) []byte {
	for {
		i := 0
		for i < len(p) && p[i] > lastMark {
			i++
		}
		dst = append(dst, p[:i]...)
		if i+1 >= len(p) {
			return append(dst, p[i:]...)
		}
		mark := p[i]
		w := int(mark-keyMark)&3<<8 | int(p[i+1])
		if mark < keyMark || w >= len(words) {
			dst = append(dst, mark) // not a mark of pack's: kept as it was
			p = p[i+1:]
			continue
		}
		dst = append(dst, '"')
		dst = append(dst, words[w]...)
		dst = append(dst, '"')
		if mark < valueMark {
			dst = append(dst, ':')
		}
		p = p[i+2:]
	}
}
