package jsonscan

// An object's members are read with three steps, the caller finding the end of each
// value in between (by decoding it, or with ValueEnd):
//
//	j, more := FirstMember(data, i) // data[i] is '{'
//	for more {
//		nameEnd, plain, value := Member(data, j) // the name is data[j+1 : nameEnd-1]
//		end := ValueEnd(data, value)
//		j, more = NextMember(data, end)
//	}
//	// j is just past the closing '}', or -1 if the object is malformed

// FirstMember steps into the object whose opening brace is data[i]. It returns the index
// of its first member's name and true, or the index just past its closing brace and
// false if it has no members.
func FirstMember(data []byte, i int) (next int, more bool) {
	j := SkipSpace(data, i+1)
	if j < len(data) && data[j] == '}' {
		return j + 1, false
	}
	return j, true
}

// Member reads the name of the member at data[i] (the name's opening quote) and the colon
// after it. It returns the index just past the name's closing quote, whether the name has
// no escapes (then data[i+1:nameEnd-1] is the name), and the index of the value's first
// byte. value is -1 if no member starts at data[i]; nameEnd too if no name does.
func Member(data []byte, i int) (nameEnd int, plain bool, value int) {
	if uint(i) >= uint(len(data)) || data[i] != '"' {
		return -1, false, -1
	}
	if nameEnd, plain, _ = stringRest(data, i+1); nameEnd < 0 {
		return -1, false, -1
	}
	j := SkipSpace(data, nameEnd)
	if j >= len(data) || data[j] != ':' {
		return nameEnd, plain, -1
	}
	if j = SkipSpace(data, j+1); j >= len(data) {
		return nameEnd, plain, -1
	}
	return nameEnd, plain, j
}

// NextMember steps over what follows a member's value, which ends at data[i]. It returns
// the index of the next member's name and true after a comma, or the index just past the
// object's closing brace and false. next is -1 if neither follows.
func NextMember(data []byte, i int) (next int, more bool) {
	for ; i < len(data); i++ {
		switch data[i] {
		case ',':
			return SkipSpace(data, i+1), true
		case '}':
			return i + 1, false
		case ' ', '\n', '\r', '\t':
		default:
			return -1, false
		}
	}
	return -1, false
}
