package codec

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
// The tables are the one piece of package-level mutable state in the engine, kept
// because sharing across every informer of a process is their point, and because they
// cannot change any result: a lookup returns an equal value or a fresh one.
//
// They are lossy and bounded: a fixed number of slots, each holding the last value
// stored under its hash, so they never grow and never need cleaning (each holds at most
// internSlots values of internMax bytes); a value that is pushed out merely stops being
// shared from then on. Slots are atomic pointers, so concurrent decoders need no lock.
// Values are immutable (strings) or never written after they are stored (byte slices),
// so sharing them between objects is safe. The standard library's unique.Make would do
// the same job, but its map grows with every distinct string alive, and a lookup there
// costs more (BenchmarkIntern).

const (
	internMax   = 64      // longer values are rarely repeated, and cost more to hash
	internSlots = 1 << 13 // the pages of a table are touched only when used
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
	slot := &stringTable[internSlot(b)]
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
	slot := &bytesTable[internSlot(b)]
	if p := slot.Load(); p != nil && string(*p) == string(b) {
		return *p
	}
	c := append([]byte(nil), b...)
	c = c[:len(c):len(c)]
	slot.Store(&c)
	return c
}

func internSlot(b []byte) uint64 { return maphash.Bytes(internSeed, b) & (internSlots - 1) }
