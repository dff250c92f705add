package codec

import (
	"strconv"
	"time"

	"github.com/kinformer/kinformer/internal/jsonscan"
)

// The packed form of a JSON value, in which Members keeps values. Three kinds of string
// become a mark (a control byte) and a few bytes of their own:
//   - one of the words (words.go: the member names and common values of the Kubernetes
//     API) becomes two bytes, a mark and the low byte of the word's index. Marks
//     keyMark..keyMark+3 stand for "word": (a member name and its colon),
//     valueMark..valueMark+3 for "word"; the mark's offset from either is the index's
//     high bits;
//   - a time as the API writes it, "2025-03-27T12:55:09Z" (22 bytes with its quotes),
//     becomes timeMark and its seconds in 5 bytes;
//   - an IPv4 address in its dotted form, "10.100.7.104", becomes ipv4Mark and its 4
//     bytes.
//
// The last two are what makes a pod's own status members small: its IPs and its start
// time are in every pod, and no two pods share them. Only forms that print back to the
// same bytes are packed (no leading zeros, no leap second, no fraction or offset), so
// unpacking gives back the text exactly. JSON text never holds a mark (control
// characters are escaped in strings, and only space, tab, line feed and carriage return
// may stand between tokens), so unpack knows them.
const (
	keyMark   = 0x01
	valueMark = 0x05
	timeMark  = 0x0b
	ipv4Mark  = 0x0c

	marks = 1<<keyMark | 1<<(keyMark+1) | 1<<(keyMark+2) | 1<<(keyMark+3) |
		1<<valueMark | 1<<(valueMark+1) | 1<<(valueMark+2) | 1<<(valueMark+3) |
		1<<timeMark | 1<<ipv4Mark
)

func isMark(r rune) bool { return r < 32 && marks>>r&1 != 0 }

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
	var code [6]byte
	end = jsonscan.EachString(data, i, func(start, end int) {
		// A string with escapes is none of the packed forms: they hold no backslash.
		s := data[start+1 : end-1]
		key := end < len(data) && data[end] == ':'
		n := 0
		if mayBeWord(s) {
			if word := findWord(s); word >= 0 {
				n = len(appendWord(code[:0], word, key))
			}
		}
		if n == 0 && !key {
			n = len(appendTime(code[:0], s))
			if n == 0 {
				n = len(appendIPv4(code[:0], s))
			}
		}
		if n == 0 {
			return
		}
		dst = append(dst, data[last:start]...)
		dst = append(dst, code[:n]...)
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
		for i < len(p) && !isMark(rune(p[i])) {
			i++
		}
		dst = append(dst, p[:i]...)
		if i == len(p) {
			return dst
		}
		n, out := unpackCode(dst, p[i:])
		if n == 0 { // not a code of pack's: kept as it was
			out, n = append(dst, p[i]), 1
		}
		dst, p = out, p[i+n:]
	}
}

// unpackCode appends the text of the code that p starts with and returns its length in
// p, or 0 if p does not start with a whole code.
func unpackCode(dst, p []byte) (int, []byte) {
	switch mark := p[0]; {
	case mark == timeMark && len(p) >= 6:
		var secs int64
		for _, c := range p[1:6] {
			secs = secs<<8 | int64(c)
		}
		dst = append(dst, '"')
		dst = time.Unix(secs-unixFromYear1, 0).UTC().AppendFormat(dst, time.RFC3339)
		return 6, append(dst, '"')
	case mark == ipv4Mark && len(p) >= 5:
		dst = append(dst, '"')
		for k, c := range p[1:5] {
			if k > 0 {
				dst = append(dst, '.')
			}
			dst = strconv.AppendUint(dst, uint64(c), 10)
		}
		return 5, append(dst, '"')
	case mark >= keyMark && mark < valueMark+4 && len(p) >= 2:
		w := int(mark-keyMark)&3<<8 | int(p[1])
		if w >= len(words) {
			return 0, dst
		}
		dst = append(dst, '"')
		dst = append(dst, words[w]...)
		dst = append(dst, '"')
		if mark < valueMark {
			dst = append(dst, ':')
		}
		return 2, dst
	}
	return 0, dst
}

// unixFromYear1 is the Unix time of 0001-01-01T00:00:00Z, negated: a packed time counts
// its seconds from there, so that every year the API's form can write (0001 to 9999)
// fits 5 bytes unsigned.
const unixFromYear1 = 62135596800

// appendTime appends the code of s if it is a time in the form the API writes
// ("2006-01-02T15:04:05Z", in UTC, whole seconds), which the code prints back exactly;
// otherwise it appends nothing.
func appendTime(dst, s []byte) []byte {
	t, ok := ParseUTCSeconds(s)
	if !ok || t.Year() < 1 {
		return dst
	}
	v := t.Unix() + unixFromYear1
	return append(dst, timeMark, byte(v>>32), byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// ParseUTCSeconds reads the form the API writes times in, 2006-01-02T15:04:05Z, without
// time.Parse, and reports whether s was exactly that: a valid date and time that
// formatting with time.RFC3339 in UTC writes as s again. Anything else (a fraction, an
// offset, the 30th of February, a leap second) is false; time.Parse may still read it.
func ParseUTCSeconds(s []byte) (time.Time, bool) {
	if len(s) != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != 'Z' {
		return time.Time{}, false
	}
	num := func(from, to int) int {
		v := 0
		for _, c := range s[from:to] {
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	year, month, day := num(0, 4), num(5, 7), num(8, 10)
	hour, minute, sec := num(11, 13), num(14, 16), num(17, 19)
	if year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.UTC)
	if t.Day() != day { // the 31st of a shorter month, which time.Date moves on
		return time.Time{}, false
	}
	return t, true
}

// appendIPv4 appends the code of s if it is an IPv4 address in dotted decimal with no
// leading zeros, which the code prints back exactly; otherwise it appends nothing.
func appendIPv4(dst, s []byte) []byte {
	if len(s) < 7 || len(s) > 15 {
		return dst
	}
	var ip [4]byte
	part, v, digits := 0, 0, 0
	for k := 0; k <= len(s); k++ {
		if k == len(s) || s[k] == '.' {
			if digits == 0 || v > 255 || part > 3 {
				return dst
			}
			ip[part] = byte(v)
			part, v, digits = part+1, 0, 0
			continue
		}
		c := s[k]
		if c < '0' || c > '9' || (digits == 1 && v == 0) { // a leading zero prints back without it
			return dst
		}
		v, digits = v*10+int(c-'0'), digits+1
	}
	if part != 4 {
		return dst
	}
	return append(dst, ipv4Mark, ip[0], ip[1], ip[2], ip[3])
}
