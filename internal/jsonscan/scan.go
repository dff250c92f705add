package jsonscan

// The functions here assume the input is JSON and check only what they need to find an
// end: a malformed value yields a wrong end or -1, never a panic. Decoding, and with it
// validation, is left to the caller.

// IsSpace reports whether c is JSON white space.
func IsSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

// SkipSpace returns the index of the first byte at or after data[i] that is not white
// space, or len(data) if there is none.
func SkipSpace(data []byte, i int) int {
	for i < len(data) && IsSpace(data[i]) {
		i++
	}
	return i
}

// StringEnd returns the index just past the string that starts at data[i] (its opening
// quote), or -1 if data[i] is not a quote or the string does not end within data.
func StringEnd(data []byte, i int) int {
	if i >= len(data) || data[i] != '"' {
		return -1
	}
	end, _ := stringRest(data, i+1)
	return end
}

// ValueEnd returns the index just past the value that starts at data[i], or -1 if there
// is none or it does not end within data. A number or literal ends at the first byte
// that cannot continue it (or at the end of data).
func ValueEnd(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return StringEnd(data, i)
	case '{', '[':
		var s Scanner
		if n := s.End(data[i:]); n >= 0 {
			return i + n
		}
		return -1
	}
	j := i // number, true, false, null
	for j < len(data) && !endsScalar(data[j]) {
		j++
	}
	return j
}

func endsScalar(c byte) bool { return c == ',' || c == '}' || c == ']' || IsSpace(c) }

// Scanner finds the end of an object or array whose bytes may arrive in several pieces:
// it carries the nesting depth, and whether a piece ended inside a string or an escape,
// from one piece to the next, so that no byte is scanned twice. The zero value is ready
// to scan a value from its opening bracket. Brackets of either kind count alike; whether
// they match is left to the decoder.
type Scanner struct {
	depth    int
	inString bool // the last piece ended inside a string
	escaped  bool // ... right after a backslash
}

// End scans the next piece of the value and returns the index in piece just past its
// closing bracket, or -1 if the value goes on past the piece: then pass the bytes that
// follow to End again. The first piece must begin with the value's opening bracket.
func (s *Scanner) End(piece []byte) int {
	i := 0
	if s.inString {
		if s.escaped {
			i = 1 // the escaped byte
		}
		end, escaped := stringRest(piece, i)
		if end < 0 {
			s.escaped = escaped
			return -1
		}
		s.inString, s.escaped = false, false
		i = end
	}
	for ; i < len(piece); i++ {
		switch piece[i] {
		case '"':
			end, escaped := stringRest(piece, i+1)
			if end < 0 {
				s.inString, s.escaped = true, escaped
				return -1
			}
			i = end - 1
		case '{', '[':
			s.depth++
		case '}', ']':
			s.depth--
			if s.depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// stringRest scans a string from data[i], a byte inside it, and returns the index just
// past its closing quote; or -1 and whether data ended in the middle of an escape (its
// backslash the last byte), so that the next byte is escaped.
func stringRest(data []byte, i int) (end int, escaped bool) {
	for ; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1, false
		}
	}
	return -1, i > len(data)
}
