package shardgroup

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/kinformer/kinformer/shard"
)

// MaxBuckets bounds Options.Buckets. The acting annotation of a member that holds every
// other bucket lists each one: at 4096 buckets that is about 10 KB, well inside the
// apiserver's 256 KB for all of an object's annotations, and a selector of 2048 ranges is
// already far past what a URL carries (see shard.DefaultBuckets).
const MaxBuckets = 4096

// BucketSet is a set of the equal buckets a group divides the hash space into, together
// with their number: bucket i of n is the hashes from ⌊i·2^64/n⌋ up to, not including,
// ⌊(i+1)·2^64/n⌋, the buckets of shard.Assign. The zero BucketSet is empty and belongs to
// no division; sets are values, never modified once made.
//
// Its String is the text members publish in their Lease's annotations, and
// ParseBucketSet reads it back: the number of buckets, a colon, and the members as
// ascending comma-separated runs, a single bucket written alone and a run of several as
// first-last, both inclusive:
//
//	256:0-31,64,100-127
//	256:
//
// The form is canonical: runs are as long as possible (two runs never touch), numbers
// have no sign, no leading zero and no white space. So a set has exactly one text, and
// two members that agree on a set write the same bytes.
type BucketSet struct {
	n    int
	bits []uint64 // bit i of bits[i/64] is bucket i; nil when empty
}

// newBucketSet returns an empty set of n buckets.
func newBucketSet(n int) BucketSet { return BucketSet{n: n} }

// bucketsOf returns the set of n buckets holding the given indexes, which must be in
// range.
func bucketsOf(n int, idx ...int) BucketSet {
	s := BucketSet{n: n}
	if len(idx) == 0 {
		return s
	}
	s.bits = make([]uint64, words(n))
	for _, i := range idx {
		s.bits[i/64] |= 1 << (i % 64)
	}
	return s
}

// allBuckets is every bucket of n.
func allBuckets(n int) BucketSet {
	s := BucketSet{n: n, bits: make([]uint64, words(n))}
	for i := range s.bits {
		s.bits[i] = math.MaxUint64
	}
	if r := n % 64; r != 0 {
		s.bits[len(s.bits)-1] = 1<<r - 1
	}
	return s
}

func words(n int) int { return (n + 63) / 64 }

// Total is how many buckets the hash space is divided into (0 for the zero BucketSet).
func (s BucketSet) Total() int { return s.n }

// Len is how many buckets the set holds.
func (s BucketSet) Len() int {
	c := 0
	for _, w := range s.bits {
		c += bits.OnesCount64(w)
	}
	return c
}

// IsEmpty reports whether the set holds no bucket.
func (s BucketSet) IsEmpty() bool {
	for _, w := range s.bits {
		if w != 0 {
			return false
		}
	}
	return true
}

// Has reports whether bucket i is in the set.
func (s BucketSet) Has(i int) bool {
	if i < 0 || i >= s.n || s.bits == nil {
		return false
	}
	return s.bits[i/64]&(1<<(i%64)) != 0
}

// Equal reports whether s and t divide the space alike and hold the same buckets.
func (s BucketSet) Equal(t BucketSet) bool {
	if s.n != t.n {
		return s.IsEmpty() && t.IsEmpty() && (s.n == 0 || t.n == 0)
	}
	for i := range words(s.n) {
		if s.word(i) != t.word(i) {
			return false
		}
	}
	return true
}

// Indexes lists the buckets of the set, ascending.
func (s BucketSet) Indexes() []int {
	var out []int
	for i, w := range s.bits {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			out = append(out, i*64+b)
			w &^= 1 << b
		}
	}
	return out
}

// Ranges is the part of the hash space the set covers, as sorted ranges, adjacent
// buckets merged: what a shard.Selector of this set holds.
func (s BucketSet) Ranges() []shard.Range {
	var out []shard.Range
	s.runs(func(first, last int) {
		out = append(out, shard.Range{First: bucketRange(first, s.n).First, Last: bucketRange(last, s.n).Last})
	})
	return out
}

// runs calls fn with each maximal run of consecutive buckets, ascending.
func (s BucketSet) runs(fn func(first, last int)) {
	start := -1
	for i := 0; i <= s.n; i++ {
		in := i < s.n && s.Has(i)
		switch {
		case in && start < 0:
			start = i
		case !in && start >= 0:
			fn(start, i-1)
			start = -1
		}
	}
}

func (s BucketSet) word(i int) uint64 {
	if i < len(s.bits) {
		return s.bits[i]
	}
	return 0
}

// combine returns the set of s's division whose words are op of s's and t's; t must
// divide the space as s does, or be empty.
func (s BucketSet) combine(t BucketSet, op func(a, b uint64) uint64) BucketSet {
	if s.n == 0 {
		s.n = t.n
	}
	out := BucketSet{n: s.n, bits: make([]uint64, words(s.n))}
	nonzero := false
	for i := range out.bits {
		out.bits[i] = op(s.word(i), t.word(i))
		nonzero = nonzero || out.bits[i] != 0
	}
	if !nonzero {
		out.bits = nil
	}
	return out
}

// Union is the buckets in s or in t.
func (s BucketSet) Union(t BucketSet) BucketSet {
	return s.combine(t, func(a, b uint64) uint64 { return a | b })
}

// Intersect is the buckets in both s and t.
func (s BucketSet) Intersect(t BucketSet) BucketSet {
	return s.combine(t, func(a, b uint64) uint64 { return a & b })
}

// Minus is the buckets of s not in t.
func (s BucketSet) Minus(t BucketSet) BucketSet {
	return s.combine(t, func(a, b uint64) uint64 { return a &^ b })
}

// String writes the set in its canonical text form (see BucketSet); the zero BucketSet
// is "".
func (s BucketSet) String() string {
	if s.n == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(strconv.Itoa(s.n))
	b.WriteByte(':')
	sep := ""
	s.runs(func(first, last int) {
		b.WriteString(sep)
		sep = ","
		b.WriteString(strconv.Itoa(first))
		if last > first {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(last))
		}
	})
	return b.String()
}

// ErrBucketSyntax is wrapped by every error of ParseBucketSet.
var ErrBucketSyntax = errors.New("shardgroup: malformed bucket set")

// ParseBucketSet reads a BucketSet from its text form, and accepts only the canonical
// text String writes: a bucket count from 1 to MaxBuckets, then runs in ascending order
// that neither overlap nor touch, inside the count, without white space, signs or
// leading zeros, and with first < last in every first-last run. Anything else is an error
// wrapping ErrBucketSyntax and saying where: a member must not guess at what another one
// claims.
func ParseBucketSet(text string) (BucketSet, error) {
	fail := func(format string, args ...any) (BucketSet, error) {
		return BucketSet{}, fmt.Errorf("%w %q: %s", ErrBucketSyntax, text, fmt.Sprintf(format, args...))
	}
	count, list, ok := strings.Cut(text, ":")
	if !ok {
		return fail("no colon after the number of buckets")
	}
	n, err := parseIndex(count)
	if err != nil {
		return fail("number of buckets: %v", err)
	}
	if n < 1 || n > MaxBuckets {
		return fail("number of buckets %d is not between 1 and %d", n, MaxBuckets)
	}
	s := newBucketSet(n)
	if list == "" {
		return s, nil
	}
	s.bits = make([]uint64, words(n))
	next := 0 // the lowest bucket the next run may start at
	for i, run := range strings.Split(list, ",") {
		lo, hi, isRun := strings.Cut(run, "-")
		first, err := parseIndex(lo)
		if err != nil {
			return fail("run %d %q: %v", i+1, run, err)
		}
		last := first
		if isRun {
			if last, err = parseIndex(hi); err != nil {
				return fail("run %d %q: %v", i+1, run, err)
			}
			if last <= first {
				return fail("run %d %q: the last bucket must be above the first", i+1, run)
			}
		}
		switch {
		case i > 0 && first == next-1:
			return fail("run %d %q touches the run before it: write them as one", i+1, run)
		case first < next:
			return fail("run %d %q is not above the run before it", i+1, run)
		case last >= n:
			return fail("run %d %q: bucket %d is outside the %d buckets", i+1, run, last, n)
		}
		for b := first; b <= last; b++ {
			s.bits[b/64] |= 1 << (b % 64)
		}
		next = last + 2
	}
	return s, nil
}

// parseIndex reads a decimal number without sign, white space or leading zero.
func parseIndex(s string) (int, error) {
	switch {
	case s == "":
		return 0, errors.New("empty number")
	case len(s) > 1 && s[0] == '0':
		return 0, fmt.Errorf("%q has a leading zero", s)
	case len(s) > 5:
		return 0, fmt.Errorf("%q is too large", s)
	}
	v := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q is not a decimal number", s)
		}
		v = v*10 + int(c-'0')
	}
	return v, nil
}

// bucketRange is bucket i of n: [⌊i·2^64/n⌋, ⌊(i+1)·2^64/n⌋), the bucket shard.Assign
// gives out (whose own copy of this formula is unexported; a test holds the two to
// agreement).
func bucketRange(i, n int) shard.Range {
	first, _ := bits.Div64(uint64(i), 0, uint64(n))
	last := uint64(math.MaxUint64)
	if i+1 < n {
		next, _ := bits.Div64(uint64(i+1), 0, uint64(n))
		last = next - 1
	}
	return shard.Range{First: first, Last: last}
}

// BucketOf is the bucket, of n equal buckets of the hash space, that holds hash h: the
// last i whose first hash is at or below h (⌊h·n/2^64⌋ is that i or the one before it,
// since bucket starts are rounded down). It places a namespace as the members do:
// BucketOf(shard.Hash(namespace), n).
func BucketOf(h uint64, n int) int {
	i, _ := bits.Mul64(h, uint64(n))
	if next := int(i) + 1; next < n && bucketRange(next, n).First <= h {
		return next
	}
	return int(i)
}

// inDivision returns the buckets of n that share a hash with s, whatever division s
// uses: the same set when s divides the space into n, more when its buckets are coarser
// or cut across n's. A member whose peers were configured with another Buckets thus
// still sees every hash they claim.
func inDivision(s BucketSet, n int) BucketSet {
	switch {
	case s.IsEmpty():
		return newBucketSet(n)
	case s.n == n:
		return s
	}
	out := BucketSet{n: n, bits: make([]uint64, words(n))}
	for _, r := range s.Ranges() {
		for b := BucketOf(r.First, n); b <= BucketOf(r.Last, n); b++ {
			out.bits[b/64] |= 1 << (b % 64)
		}
	}
	return out
}
