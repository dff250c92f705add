package streamserver

import (
	"bufio"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// obj is a JSON object whose keys keep their order, so objects come out in the field
// order of the apiserver's Go structs (kind, apiVersion, metadata, spec, status) rather
// than sorted. It is only used at start-up, to build the templates.
type obj []field

type field struct {
	k string
	v any
}

// hole marks a value that changes per write: it is left out of the encoded bytes and
// filled in when the object is written (see template.write).
type hole uint8

const (
	holeRV    hole = iota // metadata.resourceVersion: decimal digits, inside quotes
	holeStamp             // the send-time annotation: 19 zero-padded digits, inside quotes
)

// stampWidth is the width of the send-time stamp: time.Now().UnixNano() zero-padded.
const stampWidth = 19

// zeroStamp is the stamp lists carry.
var zeroStamp = []byte("0000000000000000000")

// raw is a string known to need no JSON escaping (base64, digits): copied as is.
type raw string

// template is a pre-encoded JSON object with holes for its resourceVersion and send-time
// stamp. The bytes around the holes are stored once, contiguously; writing the object is
// a handful of copies into a bufio.Writer, with no encoding and no allocation.
type template struct {
	buf   []byte
	at    [2]int  // offsets in buf where the holes go, ascending
	kinds [2]hole // what goes in each
}

// size is the length of the object written with an rv of rvLen digits.
func (t *template) size(rvLen int) int { return len(t.buf) + rvLen + stampWidth }

// write writes the object with the given resourceVersion digits and stamp.
func (t *template) write(w *bufio.Writer, rv, stamp []byte) {
	prev := 0
	for i, at := range t.at {
		w.Write(t.buf[prev:at])
		if t.kinds[i] == holeRV {
			w.Write(rv)
		} else {
			w.Write(stamp)
		}
		prev = at
	}
	w.Write(t.buf[prev:])
}

// appendTo is write for a byte slice (tests, examples).
func (t *template) appendTo(b []byte, rv, stamp []byte) []byte {
	prev := 0
	for i, at := range t.at {
		b = append(b, t.buf[prev:at]...)
		if t.kinds[i] == holeRV {
			b = append(b, rv...)
		} else {
			b = append(b, stamp...)
		}
		prev = at
	}
	return append(b, t.buf[prev:]...)
}

// encoder turns an obj tree into a template.
type encoder struct {
	buf   []byte
	holes int
	t     template
}

func newTemplate(o obj) template {
	e := &encoder{buf: make([]byte, 0, 4096)}
	e.value(o)
	if e.holes != 2 {
		panic("streamserver: an object must have exactly one resourceVersion and one stamp hole")
	}
	e.t.buf = append([]byte(nil), e.buf...) // trim capacity
	return e.t
}

func (e *encoder) value(v any) {
	switch v := v.(type) {
	case obj:
		e.buf = append(e.buf, '{')
		for i, f := range v {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.str(f.k)
			e.buf = append(e.buf, ':')
			e.value(f.v)
		}
		e.buf = append(e.buf, '}')
	case []obj:
		e.buf = append(e.buf, '[')
		for i, x := range v {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.value(x)
		}
		e.buf = append(e.buf, ']')
	case []string:
		e.buf = append(e.buf, '[')
		for i, x := range v {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.str(x)
		}
		e.buf = append(e.buf, ']')
	case string:
		e.str(v)
	case raw:
		e.buf = append(e.buf, '"')
		e.buf = append(e.buf, v...)
		e.buf = append(e.buf, '"')
	case int:
		e.buf = strconv.AppendInt(e.buf, int64(v), 10)
	case int64:
		e.buf = strconv.AppendInt(e.buf, v, 10)
	case bool:
		e.buf = strconv.AppendBool(e.buf, v)
	case nil:
		e.buf = append(e.buf, "null"...)
	case hole:
		if e.holes == 2 {
			panic("streamserver: more than two holes")
		}
		e.buf = append(e.buf, '"')
		e.t.at[e.holes], e.t.kinds[e.holes] = len(e.buf), v
		e.holes++
		e.buf = append(e.buf, '"')
	default:
		panic(fmt.Sprintf("streamserver: cannot encode %T", v))
	}
}

const hexDigits = "0123456789abcdef"

// str appends s as a JSON string, escaped as encoding/json does.
func (e *encoder) str(s string) {
	e.buf = append(e.buf, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				e.buf = append(e.buf, '\\', c)
			case c == '\n':
				e.buf = append(e.buf, '\\', 'n')
			case c == '\t':
				e.buf = append(e.buf, '\\', 't')
			case c == '\r':
				e.buf = append(e.buf, '\\', 'r')
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				e.buf = append(e.buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				e.buf = append(e.buf, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			e.buf = append(e.buf, `\ufffd`...)
		} else {
			e.buf = append(e.buf, s[i:i+n]...)
		}
		i += n
	}
	e.buf = append(e.buf, '"')
}

// putStamp writes ns as 19 zero-padded decimal digits into b.
func putStamp(b *[stampWidth]byte, ns int64) {
	u := uint64(ns)
	for i := stampWidth - 1; i >= 0; i-- {
		b[i] = byte('0' + u%10)
		u /= 10
	}
}
