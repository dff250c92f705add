package shard

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sort"
)

// DefaultBuckets is the number of equal buckets Assign divides the hash space into when
// asked for fewer than one. Each member's count of buckets is binomial: among 8 members,
// 32 ± 5.3 (one standard deviation, ±17% of the space each owns). More buckets even the
// shares out but cut each member's part into more ranges, and the selector, which is a
// query parameter, grows with them: at 256 a member's selector has at most about 66
// ranges, 7 KB URL-encoded (with 2 members; 3 KB with 8). Proxies commonly refuse
// request lines over 8 KB, so raise it with care.
const DefaultBuckets = 256

// Assignment gives each member the ranges of the hash space it serves, sorted, adjacent
// ones merged. Made by Assign, it is a partition: every hash has exactly one owner.
type Assignment map[string][]Range

// Assign divides the hash space into buckets equal buckets (DefaultBuckets if buckets <
// 1) and gives each bucket to the member with the highest weight for it (rendezvous, or
// highest-random-weight, hashing). Every member appears in the result, with nil ranges
// if it won no bucket.
//
// The result depends only on the set of member names: order and duplicates in members
// do not matter, so every process that sees the same membership computes the same
// assignment with no coordination. Rendezvous hashing moves as little as possible when
// membership changes: a joining member takes about 1/N of the space, all of it from the
// others, and nothing moves between the others; a leaving member's buckets are spread
// over the rest and nothing else moves. Moved measures it.
//
// The weight of a bucket for a member is murmur3's 64-bit finalizer of Hash(member) xor
// the finalizer of (bucket index + 0x9e3779b97f4a7c15); ties go to the member whose name
// sorts first. Every member must compute the same weights to agree, so this function is
// part of the contract between them: changing it reshuffles every shard.
//
// The cost is one weight per member per bucket.
func Assign(members []string, buckets int) Assignment {
	if buckets < 1 {
		buckets = DefaultBuckets
	}
	names := slices.Clone(members)
	slices.Sort(names)
	names = slices.Compact(names)
	a := make(Assignment, len(names))
	if len(names) == 0 {
		return a
	}
	keys := make([]uint64, len(names))
	for i, m := range names {
		keys[i] = Hash(m)
		a[m] = nil
	}
	for b := range buckets {
		salt := mix64(uint64(b) + 0x9e3779b97f4a7c15)
		best, bestW := 0, mix64(keys[0]^salt)
		for i := 1; i < len(keys); i++ {
			// Strictly greater: on a tie the earlier name, in sorted order, keeps it.
			if w := mix64(keys[i] ^ salt); w > bestW {
				best, bestW = i, w
			}
		}
		r := bucket(b, buckets)
		rs := a[names[best]]
		if n := len(rs); n > 0 && rs[n-1].Last != math.MaxUint64 && rs[n-1].Last+1 == r.First {
			rs[n-1].Last = r.Last
		} else {
			rs = append(rs, r)
		}
		a[names[best]] = rs
	}
	return a
}

// bucket is the b-th of n equal buckets: [⌊b·2^64/n⌋, ⌊(b+1)·2^64/n⌋). When n does not
// divide 2^64 bucket sizes differ by at most one hash.
func bucket(b, n int) Range {
	first, _ := bits.Div64(uint64(b), 0, uint64(n))
	last := uint64(math.MaxUint64)
	if b+1 < n {
		next, _ := bits.Div64(uint64(b+1), 0, uint64(n))
		last = next - 1
	}
	return Range{First: first, Last: last}
}

// mix64 is murmur3's 64-bit finalizer: a bijection whose every output bit depends on
// every input bit, which FNV alone does not give for inputs that differ in a few bits.
func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// Selector is member's part of the hash space as a Selector on field. ok is false when
// member owns nothing: it is not in the assignment, or it won no bucket (possible, if
// unlikely, when members are many compared with buckets). Such a member must not list
// or watch at all, since a Selector without ranges selects everything.
func (a Assignment) Selector(member string, field Field) (sel Selector, ok bool) {
	rs := a[member]
	if len(rs) == 0 {
		return Selector{}, false
	}
	return Selector{Field: field, Ranges: slices.Clone(rs)}, true
}

// Moved is the fraction of the hash space, from 0 to 1, whose owner differs between
// before and after; a part owned in one and not the other counts as moved. After a
// member joins N-1 others the ideal is 1/N, after one leaves N others 1/N too.
//
// Both are expected to be partitions, as Assign makes; where ranges of an assignment
// overlap, one of the owners is taken.
func Moved(before, after Assignment) float64 {
	b, a := flatten(before), flatten(after)
	// Cut the space wherever a range of either side starts or ends; between two cuts,
	// each side has one owner (or none).
	cuts := []uint64{0}
	for _, side := range [][]owned{b, a} {
		for _, o := range side {
			cuts = append(cuts, o.First)
			if o.Last != math.MaxUint64 {
				cuts = append(cuts, o.Last+1)
			}
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	moved := 0.0
	for i, c := range cuts {
		seg := Range{First: c, Last: math.MaxUint64}
		if i+1 < len(cuts) {
			seg.Last = cuts[i+1] - 1
		}
		ob, inB := ownerAt(b, c)
		oa, inA := ownerAt(a, c)
		if inB != inA || ob != oa {
			moved += seg.Fraction()
		}
	}
	return min(moved, 1)
}

// owned is one range of an assignment and its member.
type owned struct {
	Range
	member string
}

// flatten lists a's ranges sorted by First.
func flatten(a Assignment) []owned {
	var out []owned
	for m, rs := range a {
		for _, r := range rs {
			if r.First <= r.Last {
				out = append(out, owned{Range: r, member: m})
			}
		}
	}
	slices.SortFunc(out, func(x, y owned) int {
		return cmp.Or(cmp.Compare(x.First, y.First), cmp.Compare(x.Last, y.Last), cmp.Compare(x.member, y.member))
	})
	return out
}

// ownerAt finds who owns h among ranges sorted by First.
func ownerAt(rs []owned, h uint64) (string, bool) {
	// The last range starting at or before h is the only candidate in a partition.
	i := sort.Search(len(rs), func(i int) bool { return rs[i].First > h }) - 1
	if i >= 0 && rs[i].Contains(h) {
		return rs[i].member, true
	}
	return "", false
}
