package object

import (
	"hash/maphash"
	"sync/atomic"
)

// Interning: a cache holding thousands of objects sees the same short strings over and
// over (namespaces, label keys and values, owner names and UIDs, node names, condition
// types), and the same small runs of unknown members (a pod condition's
// "lastProbeTime":null). The decoder looks each one up in a small table and, when the
// same bytes are already there, uses that copy instead of allocating its own.
//
// The table is lossy and bounded: a fixed number of slots, each holding the last value
// stored under its hash, so it never grows and never needs cleaning (it holds at most
// internSlots values of internMax bytes); a value that is pushed out merely stops being
// shared from then on. Slots are atomic pointers, so
// concurrent decoders need no lock. Values are immutable (strings) or never written
// after they are stored (byte slices), so sharing them between objects is safe.
//
// Measured against the standard library's unique.Make (1000 distinct strings, all hits):
// ~18 ns a lookup here, ~41 ns for unique.Make, neither allocating; and unique's map
// grows with every distinct string alive, where this table's size is fixed.

const (
	internMax   = 64      // longer values are rarely repeated, and cost more to hash
	internSlots = 1 << 13 // 64 KB of pointers per table; the pages are touched only when used
)

var internSeed = maphash.MakeSeed()

var (
	stringTable [internSlots]atomic.Pointer[string]
	bytesTable  [internSlots]atomic.Pointer[[]byte]
)

// internString returns b as a string, shared with earlier calls for the same bytes where
// the table still holds them.
func internString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > internMax {
		return string(b)
	}
	slot := &stringTable[maphash.Bytes(internSeed, b)&(internSlots-1)]
	if p := slot.Load(); p != nil && *p == string(b) {
		return *p
	}
	s := string(b)
	slot.Store(&s)
	return s
}

// internBytes returns a copy of b that is never modified, shared with earlier calls for
// the same bytes where the table still holds them.
func internBytes(b []byte) []byte {
	if len(b) > internMax {
		return append([]byte(nil), b...)
	}
	slot := &bytesTable[maphash.Bytes(internSeed, b)&(internSlots-1)]
	if p := slot.Load(); p != nil && string(*p) == string(b) {
		return *p
	}
	c := append([]byte(nil), b...)
	c = c[:len(c):len(c)]
	slot.Store(&c)
	return c
}
