package codec

import (
	"bytes"
	"hash/maphash"
	"runtime"
	"sync"
	"unsafe"
	"weak"
)

// Shared parts: the pods of one ReplicaSet are one template stamped out many times, so a
// cache of them holds the same container specs, probes, env lists, tolerations and
// image digests over and over. A parts table lets the objects of one cache hold each
// such part once: when the decoder has built a part (the packed buffer of a struct's
// Unknown members, or a long string), it looks the bytes up and, if a live object
// already holds the same bytes, hands out that copy instead.
//
// The table never keeps a part alive. It holds weak pointers; when the last object
// holding a part is collected, the part goes, and a cleanup removes its entry. So a
// cache whose objects all change or go away returns to the heap it started from
// (TestChurnReturnsToBaseline in package informer replaces every pod ten times and
// checks that). Sharing is only as safe as the objects are read-only, which is why a
// table belongs to one cache (MapTable holds it) and never to the process.
//
// A part seen once costs the table nothing but a slot in seen: only a part seen a
// second time is entered, so the many parts unique to one object (its status, its
// container's ID) pay neither an entry nor a weak pointer. A part of at most internMax
// bytes goes to the process's bounded intern table instead: an entry here (the weak
// pointer and the cleanup the runtime keeps for it) costs about 100 bytes, more than
// sharing a short part saves when it repeats only twice (a pod's volume name, in its
// volume and its mount); and the runtime may batch tiny pointer-free allocations, so a
// weak pointer into one would never clear.
type parts struct {
	seed maphash.Seed
	mu   sync.Mutex
	live map[uint64]part
	seen [seenSlots]uint64 // hashes of parts seen once, lossy
	flip bool              // which of its two slots the next first sighting takes
}

// part is an entry: a weak pointer to the first byte of a shared part, and its length.
type part struct {
	first weak.Pointer[byte]
	n     int
}

// partRef is what a part's cleanup is given: its entry, to remove it only if the entry
// is still that part's (a part with the same hash may have replaced it since).
type partRef struct {
	h     uint64
	first weak.Pointer[byte]
}

const seenSlots = 1 << 12

func newParts() *parts { return &parts{seed: maphash.MakeSeed(), live: map[uint64]part{}} }

// bytes returns a copy of b that is never modified (cap == len), or the table's part
// with the same bytes.
func (t *parts) bytes(b []byte) []byte {
	if len(b) <= internMax {
		return internBytes(b)
	}
	return t.share(b, false)
}

// adopt is bytes for a b of more than internMax bytes that the caller gives up: b itself
// is kept when no part equals it, and never changed.
func (t *parts) adopt(b []byte) []byte { return t.share(b[:len(b):len(b)], true) }

// string returns b as a string, or the table's part with the same bytes as one (its
// bytes are never modified, so the string may share them).
func (t *parts) string(b []byte) string {
	if len(b) <= internMax {
		return internString(b)
	}
	c := t.share(b, false)
	return unsafe.String(unsafe.SliceData(c), len(c))
}

// share returns the live part equal to b, or else b (owned) or a copy of it, which
// becomes a part if b was seen before.
func (t *parts) share(b []byte, owned bool) []byte {
	h := maphash.Bytes(t.seed, b)
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.live[h]; ok && e.n == len(b) {
		if p := e.first.Value(); p != nil && bytes.Equal(unsafe.Slice(p, e.n), b) {
			return unsafe.Slice(p, e.n)
		}
	}
	c := b
	if !owned {
		c = append(make([]byte, 0, len(b)), b...)
	}
	// Two slots may hold h, and a first sighting takes one of them in turn: two parts
	// whose hashes share one slot, seen one after the other again and again, would
	// otherwise push each other out forever and never be entered.
	i, j := h&(seenSlots-1), (h>>32)&(seenSlots-1)
	if t.seen[i] != h && t.seen[j] != h {
		if t.flip = !t.flip; t.flip {
			i = j
		}
		t.seen[i] = h
		return c
	}
	w := weak.Make(&c[0])
	t.live[h] = part{w, len(c)}
	runtime.AddCleanup(&c[0], t.forget, partRef{h, w})
	return c
}

func (t *parts) forget(r partRef) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.live[r.h]; ok && e.first == r.first {
		delete(t.live, r.h)
	}
}

// len returns the number of entries.
func (t *parts) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.live)
}
