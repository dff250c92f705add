package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// maxDepth is encoding/json's nesting limit, so Valid and json.Valid agree on deep input.
const maxDepth = 10000

// Valid reports whether data is exactly one JSON value, with optional white space around
// it: what json.Valid reports, in one pass of a plain recursive-descent check instead of
// encoding/json's state machine, which calls a function per byte. Like json.Valid it
// accepts any byte from 0x20 up inside strings (it does not check UTF-8).
func Valid(data []byte) bool {
	i, ok := validValue(data, SkipSpace(data, 0), 0)
	return ok && SkipSpace(data, i) == len(data)
}

// ValidAt reports whether a JSON value starts at data[i] (its first byte, not white
// space) and ends within data, valid as Valid would find it alone, and returns the index
// just past it. It is false both for a value that is not valid and for one that data
// cuts short: a caller that reads a stream tells the two apart another way.
func ValidAt(data []byte, i int) (end int, ok bool) {
	if i < 0 {
		return i, false
	}
	return validValue(data, i, 0)
}

// validValue checks the value at data[i] and returns the index just past it.
func validValue(data []byte, i, depth int) (int, bool) {
	if i >= len(data) {
		return i, false
	}
	switch c := data[i]; {
	case c == '"':
		return validString(data, i)
	case c == '{':
		return validObject(data, i, depth+1)
	case c == '[':
		return validArray(data, i, depth+1)
	case c == 't':
		return literal(data, i, "true")
	case c == 'f':
		return literal(data, i, "false")
	case c == 'n':
		return literal(data, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return validNumber(data, i)
	}
	return i, false
}

func validObject(data []byte, i, depth int) (int, bool) {
	if depth > maxDepth {
		return i, false
	}
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return i, false
		}
		var ok bool
		if i, ok = validString(data, i); !ok {
			return i, false
		}
		i = SkipSpace(data, i)
		if i >= len(data) || data[i] != ':' {
			return i, false
		}
		if i, ok = validValue(data, SkipSpace(data, i+1), depth); !ok {
			return i, false
		}
		i = SkipSpace(data, i)
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case ',':
			i = SkipSpace(data, i+1)
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

func validArray(data []byte, i, depth int) (int, bool) {
	if depth > maxDepth {
		return i, false
	}
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = validValue(data, i, depth); !ok {
			return i, false
		}
		i = SkipSpace(data, i)
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case ',':
			i = SkipSpace(data, i+1)
		case ']':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// validString checks the string whose opening quote is data[i]. As stringRest does, it
// steps over eight plain bytes at a time: a word is plain when it has no quote, no
// backslash and no control byte (under 0x20, which JSON forbids raw in a string).
func validString(data []byte, i int) (int, bool) {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	j := i + 1
	for {
		for j+8 <= len(data) {
			x := binary.LittleEndian.Uint64(data[j:])
			q, b := x^(ones*'"'), x^(ones*'\\')
			// The lowest byte flagged is the first quote, backslash or control byte
			// (higher flags may be false, after a borrow).
			m := ((q-ones)&^q | (b-ones)&^b | (x-ones*0x20)&^x) & highs
			if m != 0 {
				j += bits.TrailingZeros64(m) / 8
				break
			}
			j += 8
		}
		if j >= len(data) {
			return len(data), false
		}
		switch c := data[j]; {
		case c == '"':
			return j + 1, true
		case c < 0x20:
			return j, false
		case c == '\\':
			j++
			if j >= len(data) {
				return j, false
			}
			switch data[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(data) || !isHex(data[j+1]) || !isHex(data[j+2]) || !isHex(data[j+3]) || !isHex(data[j+4]) {
					return j, false
				}
				j += 4
			default:
				return j, false
			}
			j++
		default: // a plain byte of the last few, looked at one by one
			j++
		}
	}
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// validNumber checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at data[i].
func validNumber(data []byte, i int) (int, bool) {
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && data[i] >= '1' && data[i] <= '9':
		i = digits(data, i)
	default:
		return i, false
	}
	if i < len(data) && data[i] == '.' {
		j := digits(data, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := digits(data, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

func digits(data []byte, i int) int {
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		i++
	}
	return i
}

func literal(data []byte, i int, word string) (int, bool) {
	if len(data)-i < len(word) || string(data[i:i+len(word)]) != word {
		return i, false
	}
	return i + len(word), true
}
