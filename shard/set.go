package shard

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Set is a set of hashes: sorted ranges that neither overlap nor touch, so that two Sets
// holding the same hashes are equal field for field and write the same text. It is a
// value, never modified once made; the zero Set is empty.
//
// Ranges, not buckets, because the parts a group divides the space into are cut where
// the load is (see Plan): two members that hold different plans for a moment must still
// see exactly which hashes each other claims.
type Set struct {
	rs []Range
}

// SetOf is the set of the hashes in rs, which may be unsorted, overlapping or adjacent.
// Inverted ranges (First > Last) hold nothing and are left out.
func SetOf(rs ...Range) Set {
	valid := make([]Range, 0, len(rs))
	for _, r := range rs {
		if r.First <= r.Last {
			valid = append(valid, r)
		}
	}
	if len(valid) == 0 {
		return Set{}
	}
	return Set{rs: mergeRanges(valid)}
}

// WholeSet is the whole hash space.
func WholeSet() Set { return Set{rs: []Range{Whole()}} }

// Ranges returns the set's ranges, sorted, none touching another: what a Selector of the
// set holds.
func (s Set) Ranges() []Range { return slices.Clone(s.rs) }

// IsEmpty reports whether the set holds no hash.
func (s Set) IsEmpty() bool { return len(s.rs) == 0 }

// Contains reports whether h is in the set.
func (s Set) Contains(h uint64) bool {
	// The last range starting at or below h is the only one that can hold it.
	i := sort.Search(len(s.rs), func(i int) bool { return s.rs[i].First > h }) - 1
	return i >= 0 && s.rs[i].Last >= h
}

// Has reports whether the hash of value (a namespace's name, say) is in the set.
func (s Set) Has(value string) bool { return s.Contains(Hash(value)) }

// Equal reports whether s and t hold the same hashes.
func (s Set) Equal(t Set) bool { return slices.Equal(s.rs, t.rs) }

// Union is the hashes in s or t.
func (s Set) Union(t Set) Set { return SetOf(append(slices.Clone(s.rs), t.rs...)...) }

// Intersect is the hashes in both s and t.
func (s Set) Intersect(t Set) Set {
	var out []Range
	for i, j := 0, 0; i < len(s.rs) && j < len(t.rs); {
		a, b := s.rs[i], t.rs[j]
		if lo, hi := max(a.First, b.First), min(a.Last, b.Last); lo <= hi {
			out = append(out, Range{First: lo, Last: hi})
		}
		if a.Last < b.Last {
			i++
		} else {
			j++
		}
	}
	return Set{rs: out} // pieces of disjoint, non-touching ranges are such too
}

// Minus is the hashes of s not in t.
func (s Set) Minus(t Set) Set {
	if s.IsEmpty() || t.IsEmpty() {
		return s
	}
	return Set{rs: Without(s.rs, t.rs)}
}

// Overlaps reports whether s and t share a hash.
func (s Set) Overlaps(t Set) bool { return !s.Intersect(t).IsEmpty() }

// Fraction is the share of the hash space the set covers, from 0 to 1.
func (s Set) Fraction() float64 {
	f := 0.0
	for _, r := range s.rs {
		f += r.Fraction()
	}
	return f
}

// Selector is the set as a selector on field, and whether there is one: an empty set
// has none, since a Selector without ranges selects everything.
func (s Set) Selector(field Field) (Selector, bool) {
	if s.IsEmpty() {
		return Selector{}, false
	}
	return Selector{Field: field, Ranges: s.Ranges()}, true
}

// String writes the set in its canonical text form: its ranges in order, separated by
// commas, each its first and last hash (both included) as 16 lower-case hex digits
// joined by '-':
//
//	0000000000000000-3fffffffffffffff,8000000000000000-8fffffffffffffff
//
// The empty set is "". ParseSet reads it back.
func (s Set) String() string {
	var b strings.Builder
	b.Grow(len(s.rs) * 34)
	for i, r := range s.rs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(hex16(r.First)[2:])
		b.WriteByte('-')
		b.WriteString(hex16(r.Last)[2:])
	}
	return b.String()
}

// ErrSetSyntax is wrapped by every error of ParseSet.
var ErrSetSyntax = errors.New("shard: malformed hash set")

// ParseSet reads a Set from the text String writes, and accepts only that canonical text:
// ranges of exactly 16 lower-case hex digits on each side of '-', first at or below last,
// in ascending order, neither overlapping nor touching the one before. Anything else is
// an error wrapping ErrSetSyntax that says where: a process reading what another one
// claims must not guess.
func ParseSet(text string) (Set, error) {
	if text == "" {
		return Set{}, nil
	}
	fail := func(i int, part, format string, args ...any) (Set, error) {
		return Set{}, fmt.Errorf("%w: range %d %q: %s", ErrSetSyntax, i+1, part, fmt.Sprintf(format, args...))
	}
	parts := strings.Split(text, ",")
	rs := make([]Range, 0, len(parts))
	for i, part := range parts {
		lo, hi, ok := strings.Cut(part, "-")
		if !ok {
			return fail(i, part, "want FIRST-LAST")
		}
		first, err := parseHex16(lo)
		if err != nil {
			return fail(i, part, "first: %v", err)
		}
		last, err := parseHex16(hi)
		if err != nil {
			return fail(i, part, "last: %v", err)
		}
		switch {
		case first > last:
			return fail(i, part, "first is above last")
		case i > 0 && (prevLast(rs) == math.MaxUint64 || first <= prevLast(rs)):
			return fail(i, part, "not above the range before it")
		case i > 0 && first == prevLast(rs)+1:
			return fail(i, part, "touches the range before it: write them as one")
		}
		rs = append(rs, Range{First: first, Last: last})
	}
	return Set{rs: rs}, nil
}

func prevLast(rs []Range) uint64 { return rs[len(rs)-1].Last }

// parseHex16 reads exactly 16 lower-case hex digits.
func parseHex16(s string) (uint64, error) {
	if len(s) != 16 {
		return 0, fmt.Errorf("%q is not 16 hex digits", s)
	}
	if strings.ToLower(s) != s {
		return 0, fmt.Errorf("%q is not lower case", s)
	}
	v, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not hex", s)
	}
	return v, nil
}
