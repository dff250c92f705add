package codec

import "github.com/kinformer/kinformer/internal/jsonscan"

// The packed form of a JSON value, in which Members keeps values: each string that is
// one of the words (words.go: the member names and common values of the Kubernetes API)
// becomes two bytes, a mark and the low byte of the word's index. Marks keyMark..
// keyMark+3 stand for "word": (a member name and its colon), valueMark..valueMark+3 for
// "word"; the mark's offset from either is the index's high bits. JSON text never holds
// these bytes (control characters are escaped in strings, and only white space may
// stand between tokens), so unpack knows them.
const (
	keyMark   = 0x01
	valueMark = 0x05
	lastMark  = 0x08
)

func isMark(r rune) bool { return r <= lastMark }

// appendWord appends the code of word w: as a member name (followed by its colon in the
// text) if key, else as a string value.
func appendWord(dst []byte, w int, key bool) []byte {
	mark := byte(valueMark)
	if key {
		mark = keyMark
	}
	return append(dst, mark+byte(w>>8), byte(w))
}

// packValue finds the end of the JSON value at data[i] and appends its packed form to
// dst, in one pass. It reports the index just past the value (-1 if it does not end
// within data) and whether any word was packed (if not, what it appended is the value's
// text itself).
func packValue(dst, data []byte, i int) (end int, out []byte, packed bool) {
	last := i // data[last:] is not yet in dst
	end = jsonscan.EachString(data, i, func(start, end int) {
		// A string with escapes never equals a word: words hold no backslash.
		s := data[start+1 : end-1]
		if !mayBeWord(s) {
			return
		}
		word := findWord(s)
		if word < 0 {
			return
		}
		dst = append(dst, data[last:start]...)
		key := end < len(data) && data[end] == ':'
		dst = appendWord(dst, word, key)
		if key {
			end++
		}
		last, packed = end, true
	})
	if end < 0 {
		return -1, dst, false
	}
	return end, append(dst, data[last:end]...), packed
}

// packText appends the packed form of the JSON text v to dst (one value, with white space
// around it or not), and reports whether any word was packed. What is not part of one
// value is appended as it is.
func packText(dst, v []byte) ([]byte, bool) {
	i := jsonscan.SkipSpace(v, 0)
	end, out, packed := packValue(append(dst, v[:i]...), v, i)
	if end < 0 {
		return append(dst, v...), false
	}
	return append(out, v[end:]...), packed
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
