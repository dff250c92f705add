package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// String returns the index just past the string whose opening quote is data[i], or -1 if
// data[i] is not a quote (or i is not an index of data) or the string does not end within
// data, and whether the string has no escapes (then its bytes are its value).
func String(data []byte, i int) (end int, plain bool) {
	if uint(i) >= uint(len(data)) || data[i] != '"' { // i < 0 included
		return -1, false
	}
	end, plain, _ = stringRest(data, i+1)
	return end, plain
}

// stringRest scans a string from data[i], a byte inside it, and returns the index just
// past its closing quote and whether no backslash came before it. If data ends first, it
// returns -1 and whether data ended right after a backslash (cut), so that the next byte,
// wherever it comes from, is escaped.
//
// It looks at eight bytes at a time for a quote or a backslash: most of a Kubernetes
// object's bytes are inside strings (its member names and most of its values), so this
// is where scanning spends its time.
func stringRest(data []byte, i int) (end int, plain, cut bool) {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	plain = true
	for i+8 <= len(data) {
		x := binary.LittleEndian.Uint64(data[i:])
		q, b := x^(ones*'"'), x^(ones*'\\')
		// A byte of q or b is zero where x holds a quote or a backslash. The lowest byte
		// flagged is the first of those (higher flags may be false, after a borrow).
		m := ((q-ones)&^q | (b-ones)&^b) & highs
		if m == 0 {
			i += 8
			continue
		}
		i += bits.TrailingZeros64(m) / 8
		if data[i] == '"' {
			return i + 1, plain, false
		}
		plain = false
		i += 2 // the backslash and the byte it escapes
	}
	for i < len(data) {
		switch data[i] {
		case '"':
			return i + 1, plain, false
		case '\\':
			plain = false
			i++
		}
		i++
	}
	return -1, false, i > len(data)
}
