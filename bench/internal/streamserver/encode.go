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
	// The holes of a lazily generated pod (lazy.go), each filled from the pod's index.
	holeNS          // metadata.namespace
	holeName        // the 5-character suffix of metadata.name (after the ReplicaSet's name and "-")
	holeUID         // metadata.uid: 36 characters
	holePodIP       // status.podIP and status.podIPs[0].ip: 14 characters
	holeContainerID // the 64 hex digits of a containerStatus's containerID (after "containerd://")
	numHoles
)

// rawHole is a hole written without quotes: a number or an object (the realistic lazy
// pods' restartCounts and lastStates).
type rawHole hole

// holeMarkBase is the first of the runes that stand for holes inside strings, keys
// included: marker(h) anywhere in a string is encoded as hole h (see encoder.str). They
// are in Unicode's private use area, which no generated object uses otherwise.
const holeMarkBase = 0xE000

// marker is the string that stands for hole h inside a string.
func marker(h hole) string { return string(rune(holeMarkBase + int(h))) }

// spliced is a string value with a hole inside it: before, the hole's bytes, after.
type spliced struct {
	before string
	h      hole
	after  string
}

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

// encoder turns an obj tree into the bytes around its holes.
type encoder struct {
	buf   []byte
	at    []int  // offsets in buf where the holes go, ascending
	kinds []hole // what goes in each
}

// newTemplate encodes an object that has exactly the two holes of every object, its
// resourceVersion and its stamp: the hot path's fixed-size template.
func newTemplate(o obj) template {
	e := &encoder{buf: make([]byte, 0, 4096)}
	e.value(o)
	if len(e.kinds) != 2 || e.kinds[0] == e.kinds[1] || max(e.kinds[0], e.kinds[1]) > holeStamp {
		panic("streamserver: an object must have exactly one resourceVersion and one stamp hole")
	}
	return template{buf: append([]byte(nil), e.buf...), // trim capacity
		at: [2]int{e.at[0], e.at[1]}, kinds: [2]hole{e.kinds[0], e.kinds[1]}}
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
	case []int:
		e.buf = append(e.buf, '[')
		for i, x := range v {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.buf = strconv.AppendInt(e.buf, int64(x), 10)
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
		e.buf = append(e.buf, '"')
		e.hole(v)
		e.buf = append(e.buf, '"')
	case rawHole:
		e.hole(hole(v))
	case spliced:
		e.str(v.before)
		e.buf = e.buf[:len(e.buf)-1] // reopen the string
		e.hole(v.h)
		at := len(e.buf)
		e.str(v.after)
		e.buf = append(e.buf[:at], e.buf[at+1:]...) // drop after's opening quote
	default:
		panic(fmt.Sprintf("streamserver: cannot encode %T", v))
	}
}

func (e *encoder) hole(h hole) {
	e.at = append(e.at, len(e.buf))
	e.kinds = append(e.kinds, h)
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
		if r >= holeMarkBase && r < holeMarkBase+256 { // marker: a hole inside the string
			e.hole(hole(r - holeMarkBase))
			i += n
			continue
		}
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
