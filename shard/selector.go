package shard

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Selector is a shardSelector: the part of the hash space of one Field that a list or
// watch asks for. An object is selected when the hash of its Field value lies in any of
// the Ranges.
//
// A Selector without ranges does not filter, whatever its Field: String is "" and
// Matches accepts every value, exactly as the server treats a request without the
// parameter. So "owns nothing" cannot be said with a Selector; see Assignment.Selector.
type Selector struct {
	Field  Field
	Ranges []Range
}

// All selects the whole hash space of f. Sent to a server, it filters nothing but is
// still a sharded request, so the list's metadata.shardInfo tells whether the server
// honours shardSelector at all.
func All(f Field) Selector { return Selector{Field: f, Ranges: []Range{Whole()}} }

// IsZero reports whether s has no ranges, that is whether it leaves the request
// unfiltered and should not be sent at all. The Field alone does not count.
func (s Selector) IsZero() bool { return len(s.Ranges) == 0 }

// Matches reports whether an object whose Field has this value is selected: whether
// Hash(value) lies in one of the ranges. A selector without ranges matches every value.
//
// The caller passes the value of s.Field (the namespace or the uid); Matches does not
// know objects.
func (s Selector) Matches(value string) bool {
	if len(s.Ranges) == 0 {
		return true
	}
	h := Hash(value)
	for _, r := range s.Ranges {
		if r.Contains(h) {
			return true
		}
	}
	return false
}

// Validate reports what the server would refuse in s.String(): a Field it does not hash,
// or an inverted range (First > Last). A selector without ranges is valid: it is the
// absent parameter. Selectors from Parse are always valid, and so are those from All
// and Assignment.Selector given Namespace or UID.
func (s Selector) Validate() error {
	if len(s.Ranges) == 0 {
		return nil
	}
	if !s.Field.valid() {
		return fmt.Errorf("shard: field %q is not one the server hashes (want %s or %s)", s.Field, Namespace, UID)
	}
	for i, r := range s.Ranges {
		if r.First > r.Last {
			return fmt.Errorf("shard: range %d is inverted: first %s is above last %s", i, hex16(r.First), hex16(r.Last))
		}
	}
	return nil
}

// Normalize returns s with its ranges sorted and every overlapping or adjacent pair
// merged, so that equal sets of hashes give equal Selectors (and equal Strings). It
// selects exactly what s selects. s itself is not modified.
//
// Inverted ranges (see Validate) cannot be merged; they are kept, after the others.
func (s Selector) Normalize() Selector {
	out := Selector{Field: s.Field}
	if len(s.Ranges) == 0 {
		return out
	}
	var bad []Range
	good := make([]Range, 0, len(s.Ranges))
	for _, r := range s.Ranges {
		if r.First > r.Last {
			bad = append(bad, r)
		} else {
			good = append(good, r)
		}
	}
	out.Ranges = append(mergeRanges(good), bad...)
	return out
}

// mergeRanges sorts valid ranges and merges the overlapping and adjacent ones, in place.
func mergeRanges(rs []Range) []Range {
	if len(rs) == 0 {
		return rs
	}
	slices.SortFunc(rs, func(a, b Range) int {
		if c := cmp.Compare(a.First, b.First); c != 0 {
			return c
		}
		return cmp.Compare(a.Last, b.Last)
	})
	out := rs[:1]
	for _, r := range rs[1:] {
		cur := &out[len(out)-1]
		// cur.Last+1 would wrap when cur reaches the top; nothing can follow it then.
		if cur.Last == math.MaxUint64 || r.First <= cur.Last+1 {
			cur.Last = max(cur.Last, r.Last)
			continue
		}
		out = append(out, r)
	}
	return out
}

// String is the wire form of s, the value of the shardSelector parameter:
//
//	shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000') || shardRange(...)
//
// one shardRange per range, in s's order, the start as 16 lower-case hex digits and the
// end, exclusive, likewise or as 0x10000000000000000 for the top of the space. This is
// the form the server echoes in a sharded list's metadata.shardInfo.selector, byte for
// byte, so a caller may compare the echo with what it sent.
//
// A selector without ranges is "": omit the parameter. String renders s as it is, valid
// or not; for a Selector put together by hand, call Validate first.
func (s Selector) String() string {
	if len(s.Ranges) == 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(len(s.Ranges) * (len("shardRange(, '0x', '0x') || ") + len(s.Field) + 16 + 17))
	for i, r := range s.Ranges {
		if i > 0 {
			b.WriteString(" || ")
		}
		b.WriteString("shardRange(")
		b.WriteString(string(s.Field))
		b.WriteString(", '")
		b.WriteString(hex16(r.First))
		b.WriteString("', '")
		b.WriteString(endHex(r.Last))
		b.WriteString("')")
	}
	return b.String()
}

// topOfSpace is 2^64 written as the server wants the exclusive end of the whole space.
const topOfSpace = "0x10000000000000000"

// endHex writes the exclusive end of a range whose last hash is last.
func endHex(last uint64) string {
	if last == math.MaxUint64 {
		return topOfSpace
	}
	return hex16(last + 1)
}

// hex16 writes v as the server writes a bound: 0x and exactly 16 lower-case digits.
func hex16(v uint64) string {
	const digits = "0123456789abcdef"
	var b [18]byte
	b[0], b[1] = '0', 'x'
	for i := 17; i >= 2; i-- {
		b[i] = digits[v&0xf]
		v >>= 4
	}
	return string(b[:])
}

// Without is the part of the space in have that no range of drop covers: what a process
// still owns after giving drop away. The result is sorted and merged.
func Without(have, drop []Range) []Range {
	var out []Range
	for _, r := range have {
		parts := []Range{r}
		for _, d := range drop {
			var next []Range
			for _, p := range parts {
				next = append(next, p.minus(d)...)
			}
			parts = next
		}
		out = append(out, parts...)
	}
	return mergeRanges(out)
}

// minus is what is left of r outside d: none, one or two ranges.
func (r Range) minus(d Range) []Range {
	if d.Last < r.First || d.First > r.Last {
		return []Range{r}
	}
	var out []Range
	if d.First > r.First {
		out = append(out, Range{First: r.First, Last: d.First - 1})
	}
	if d.Last < r.Last {
		out = append(out, Range{First: d.Last + 1, Last: r.Last})
	}
	return out
}
