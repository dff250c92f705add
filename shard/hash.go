package shard

import "math"

// Field is the object field whose hash places an object in the hash space. The server
// hashes only the two below; Parse and Validate refuse any other.
type Field string

const (
	// Namespace shards by metadata.namespace: every object of a namespace lands on the
	// same shard, and every cluster-scoped object (namespace "") on one shard.
	Namespace Field = "object.metadata.namespace"
	// UID shards by metadata.uid: the most even spread, but related objects scatter.
	UID Field = "object.metadata.uid"
)

// valid reports whether the server hashes f.
func (f Field) valid() bool { return f == Namespace || f == UID }

// FNV-1a, 64 bits: the server's hash. Written out rather than taken from hash/fnv so that
// hashing a string needs neither a hash.Hash nor a []byte copy of it.
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// Hash is the 64-bit FNV-1a hash of s's bytes, the value a shardRange compares against
// its bounds. It is the same as hash/fnv's New64a over []byte(s), without allocating.
func Hash(s string) uint64 {
	h := uint64(fnvOffset64)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime64
	}
	return h
}

// Range is a run of consecutive hash values, both ends included: it holds h when
// First <= h <= Last.
//
// The wire writes a range half-open, start included and end excluded, so the end of the
// whole space is 2^64, one more than a uint64 holds. Keeping the last value instead of
// the exclusive end lets plain uint64s name every range the wire can name, the whole
// space included ({0, math.MaxUint64}), and leaves no way to write an empty range: a
// Range with First > Last is invalid (Validate says so), not empty. The zero Range is the
// single hash 0.
type Range struct {
	First uint64 // lowest hash in the range
	Last  uint64 // highest hash in the range, included
}

// Whole is the range covering the whole hash space, 0 through 2^64-1.
func Whole() Range { return Range{First: 0, Last: math.MaxUint64} }

// Contains reports whether h lies in r.
func (r Range) Contains(h uint64) bool { return r.First <= h && h <= r.Last }

// Fraction is the share of the hash space r covers: 1 for Whole, 1/256 for one of 256
// equal buckets, 0 for an invalid (inverted) range.
func (r Range) Fraction() float64 {
	if r.First > r.Last {
		return 0
	}
	// Last-First+1 would overflow for the whole space; add the 1 as a float instead.
	return (float64(r.Last-r.First) + 1) / (1 << 64)
}
