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

// EndsScalar reports whether c ends a number or a literal (true, false, null): a comma, a
// closing bracket or white space.
func EndsScalar(c byte) bool { return c == ',' || c == '}' || c == ']' || IsSpace(c) }

// ValueEnd returns the index just past the value that starts at data[i], or -1 if there
// is none (i may be -1, a failed step's result) or it does not end within data. A number
// or literal ends at the first byte that cannot continue it (or at the end of data).
func ValueEnd(data []byte, i int) int {
	if uint(i) >= uint(len(data)) {
		return -1
	}
	switch data[i] {
	case '"':
		end, _ := String(data, i)
		return end
	case '{', '[':
		var s Scanner
		return s.scan(data, i, nil)
	}
	return scalarEnd(data, i)
}

// scalarEnd returns the index just past the number or literal at data[i], or -1 if there
// is none.
func scalarEnd(data []byte, i int) int {
	j := i
	for j < len(data) && !EndsScalar(data[j]) {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

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
		end, _, cut := stringRest(piece, i)
		if end < 0 {
			s.escaped = cut
			return -1
		}
		s.inString, s.escaped = false, false
		i = end
	}
	return s.scan(piece, i, nil)
}

// scan is the one loop that finds where values end, for End, ValueEnd and EachString:
// it goes through data from i, inside a value of which s.depth brackets are open, past
// every string (calling visit with its bounds, when visit is not nil), and returns the
// index just past the bracket that closes the value; or -1 if data runs out first, with
// a string cut short noted in s, for End to finish in the next piece.
func (s *Scanner) scan(data []byte, i int, visit func(start, end int)) int {
	depth := s.depth
	for ; i < len(data); i++ {
		switch data[i] {
		case '"':
			e, _, cut := stringRest(data, i+1)
			if e < 0 {
				s.depth, s.inString, s.escaped = depth, true, cut
				return -1
			}
			if visit != nil {
				visit(i, e)
			}
			i = e - 1
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				s.depth = 0
				return i + 1
			}
		}
	}
	s.depth = depth
	return -1
}
