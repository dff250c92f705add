package codec

import (
	"bytes"
	"errors"
	"hash/maphash"
	"reflect"
	"sync"
	"unsafe"
	"weak"

	"github.com/kinformer/kinformer/internal/protowire"
)

// Decoding against the object's last state. Most watch events are MODIFIED, and most of
// a modified object is what it was: a pod's spec does not change after it is created,
// and a kubelet's status update changes a condition or a container's state, not the
// rest. A MapTable remembers, for each object it decoded from a watch's MODIFIED event
// or, after the list, its ADDED one (DecodeProtobufModified), that object and a digest
// of the bytes of each of its top-level fields (the spec, the status). The next state
// of the same namespace and name is then decoded against it:
//
//   - a field whose bytes have the same digest is the remembered object's, taken whole
//     (its slices, maps and heads are then shared with it), neither decoded nor read;
//   - any other field is decoded field by field against the remembered one's: each part
//     that reads the same (same, below: exact, and allocating nothing) is taken from it,
//     the rest decoded.
//
// A digest is 128 bits, two 64-bit hashes of the bytes under seeds the table draws and
// keeps to itself (maphash: fast, not built to resist collisions made on purpose, but
// no one outside the process knows the seeds): two different states of one field would
// have to agree on both for one to be taken for the other. Objects are taken from only
// while the cache's read-only rule holds: a handler that writes into a cached object
// may see the write in the states that follow, until the mutation detector reports it
// and the table forgets.
//
// How an object is held. The table must keep alive no object the cache let go of (a
// deleted one, one a relist found gone, one outside the cache's shard, one a custom
// transform replaced), yet a weak pointer for every object, the first design, cost a
// registration with the runtime at every event (about a twentieth of a steady watch's
// CPU) and made the collector's pauses longer (the p99 at 20k events/s fell by a third
// without them). So the objects of the last changes are held by plain pointers, and the
// rest weakly: puts are counted in periods of recentsPeriod, and at the end of a period
// each object put in the one before and not since is demoted to a weak pointer (one
// registration for an object that stayed unchanged that long, none for one that
// changes often). At most 2×recentsPeriod objects are held strongly, most of them the
// cache's own; an object the cache let go of is held at most two periods of puts (a
// quiet cache's last ones stay until changes come). A weak pointer still finds the
// object while the cache holds it, however long it stays unchanged; a DELETED event's
// object is held weakly at once (DecodeProtobufDeleted), so an object made again under
// its name soon after (a StatefulSet's pod) is decoded against it while it lasts; what
// is remembered of the objects collected is dropped as the table grows (about a
// hundred bytes an object, never more than twice the live ones and a thousand). A
// list's object, when the table remembers a state of it, takes that state's place.

// recents are the objects a table remembers, by a hash of their namespace and name (a
// map of two strings hashes and compares both at every lookup; the object found says
// whether it is the one sought).
type recents struct {
	seeds [2]maphash.Seed
	mu    sync.Mutex
	m     map[uint64]recent
	gen   uint32   // the period: periods ended so far
	fresh []uint64 // the keys put in this period (one per put), and
	older []uint64 // in the one before: held strongly
	swept int      // len(m) after the last sweep of the objects collected
}

// recentsPeriod is the number of puts in a period: a period and the one before hold at
// most twice as many objects strongly.
const recentsPeriod = 1024

// recent is one object decoded through the table, and the digests of its top-level
// fields' bytes (those of number nums[i], or 0).
type recent struct {
	// table decoded the object: one of the same type, and the same options, is decoded
	// against it (a table may serve several types, whose objects may share a name).
	table *ptable
	obj   unsafe.Pointer     // the object, held strongly (put in this period or the one before), or nil:
	weak  weak.Pointer[byte] // the object, held weakly
	nums  [recentFields]protowire.Number
	gen   uint32 // the period it was put in
	sums  [recentFields]digest
}

type digest [2]uint64

// recentFields bounds the top-level fields remembered of an object: after its metadata,
// the spec and the status, and one more.
const recentFields = 3

func newRecents() *recents {
	return &recents{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, m: map[uint64]recent{}}
}

func (r *recents) digest(b []byte) digest {
	return digest{maphash.Bytes(r.seeds[0], b), maphash.Bytes(r.seeds[1], b)}
}

func (r *recents) key(namespace, name string) uint64 {
	return maphash.String(r.seeds[0], name) ^ maphash.String(r.seeds[1], namespace)
}

// get returns what is remembered under namespace and name: an object of that name, or
// of another whose key is the same, which the caller tells apart; nil when the object
// was held weakly and is collected.
func (r *recents) get(namespace, name string) (recent, unsafe.Pointer) {
	k := r.key(namespace, name)
	r.mu.Lock()
	rec, ok := r.m[k]
	r.mu.Unlock()
	if !ok {
		return recent{}, nil
	}
	if rec.obj == nil {
		return rec, unsafe.Pointer(rec.weak.Value())
	}
	return rec, rec.obj
}

// put remembers rec, whose object it holds strongly unless rec.weak is set.
func (r *recents) put(namespace, name string, rec recent) {
	k := r.key(namespace, name)
	r.mu.Lock()
	defer r.mu.Unlock()
	rec.gen = r.gen
	r.m[k] = rec
	if rec.obj != nil {
		r.fresh = append(r.fresh, k)
	}
	if len(r.fresh) >= recentsPeriod {
		r.endPeriod()
	}
	if len(r.m) >= 2*r.swept+1024 {
		for k, v := range r.m {
			if v.obj == nil && v.weak.Value() == nil {
				delete(r.m, k) // collected
			}
		}
		r.swept = len(r.m)
	}
}

// endPeriod demotes to weak pointers the objects put in the period before this one and
// not since.
func (r *recents) endPeriod() {
	for _, k := range r.older {
		if v, ok := r.m[k]; ok && v.gen != r.gen && v.obj != nil {
			v.weak, v.obj = weak.Make((*byte)(v.obj)), nil
			r.m[k] = v
		}
	}
	r.older, r.fresh = r.fresh, r.older[:0]
	r.gen++
}

// drop forgets what is remembered under namespace and name.
func (r *recents) drop(namespace, name string) {
	r.mu.Lock()
	delete(r.m, r.key(namespace, name))
	r.mu.Unlock()
}

func (r *recents) forget() {
	r.mu.Lock()
	clear(r.m)
	r.fresh, r.older, r.swept = r.fresh[:0], r.older[:0], 0
	r.mu.Unlock()
}

// recall is what a decode does with the table's last state of the object.
type recall uint8

const (
	// recallUse decodes against the last state, and puts the object in its place when
	// there was one (a list's object, which the cache now holds instead).
	recallUse recall = iota
	// recallKeep decodes against the last state, and remembers the object (a change).
	recallKeep
	// recallDrop decodes against the last state, and remembers the object weakly (a
	// deletion: an object of the same name made again soon after is decoded against
	// it while it lasts).
	recallDrop
)

// topLevel is what decodeObject knows of the top-level fields while it decodes them:
// what was remembered of the object's last state, and what is remembered of this one.
type topLevel struct {
	r        *recents
	meta     protowire.Number
	remember bool
	prior    unsafe.Pointer // the last state, or nil
	old      recent
	now      recent
	n        int
	seen     uint64 // the fields met, by index in their table (recorded or not)
	dup      bool   // a field given twice, or one too many: this state is not remembered
}

// take reports whether the field f, of value v, is the prior's (and copies it then),
// noting its digest.
func (tl *topLevel) take(f *pfield, v []byte, p unsafe.Pointer) bool {
	if tl.prior == nil && !tl.remember || f.num == tl.meta {
		return false // the metadata changes with every state: compared part by part
	}
	if f.index >= 64 || tl.seen&(1<<f.index) != 0 {
		tl.dup = true // merged into what came before: nothing to take, nor to remember
		return false
	}
	tl.seen |= 1 << f.index
	d := tl.r.digest(v)
	if tl.n < recentFields {
		tl.now.nums[tl.n], tl.now.sums[tl.n] = f.num, d
		tl.n++
	} else {
		tl.dup = true
	}
	if tl.prior == nil {
		return false
	}
	for i, num := range tl.old.nums {
		if num == f.num && tl.old.sums[i] == d {
			f.copy(unsafe.Add(p, f.offset), unsafe.Add(tl.prior, f.offset))
			return true
		}
	}
	return false
}

// decodeObject decodes msg, an object, into the struct at p (whose table is t): its
// metadata first, then the rest against the last state the table remembers of the
// object of that namespace and name (see above); mode says what the table keeps after.
func (t *ptable) decodeObject(msg []byte, p unsafe.Pointer, maps *MapTable, mode recall) error {
	num, _, meta, n := protowire.Next(msg)
	if maps == nil || t.meta == nil || n <= 0 || num != t.meta.num {
		return t.decode(msg, p) // the apiserver writes the metadata first; else no match
	}
	tl := topLevel{r: maps.recents, meta: t.meta.num, remember: mode != recallUse}
	if namespace, name := t.meta.nameIn(meta); name != "" {
		if old, prior := tl.r.get(namespace, name); old.table == t && prior != nil && t.meta.names(prior, namespace, name) {
			tl.old, tl.prior = old, prior
		}
	}
	var unknown builder
	if err := t.fieldsOf(msg, p, tl.prior, &tl, func(f []byte) {
		if t.unknown >= 0 {
			unknown.addField(f)
		}
	}); err != nil {
		return err
	}
	t.setUnknown(p, tl.prior, &unknown)
	namespace, name := *(*string)(unsafe.Add(p, t.meta.namespace)), *(*string)(unsafe.Add(p, t.meta.name))
	switch {
	case name == "":
	case tl.dup:
		if tl.prior != nil || mode == recallDrop {
			tl.r.drop(namespace, name) // a state not remembered: nor is the last
		}
	case mode == recallDrop:
		tl.now.table, tl.now.weak = t, weak.Make((*byte)(p))
		tl.r.put(namespace, name, tl.now)
	case mode == recallKeep || tl.prior != nil:
		tl.now.table, tl.now.obj = t, p
		tl.r.put(namespace, name, tl.now)
	}
	return nil
}

// names reports whether the object at p has that namespace and name.
func (m *pmeta) names(p unsafe.Pointer, namespace, name string) bool {
	return *(*string)(unsafe.Add(p, m.name)) == name && *(*string)(unsafe.Add(p, m.namespace)) == namespace
}

// nameIn returns the namespace and name that meta, an object's metadata message, holds
// (their first occurrences), as strings of meta's bytes: to look up, not to keep.
func (m *pmeta) nameIn(meta []byte) (namespace, name string) {
	var found int
	for len(meta) > 0 && found < 2 {
		num, wire, v, n := protowire.Next(meta)
		if n < 0 {
			break
		}
		meta = meta[n:]
		if wire != protowire.Bytes || len(v) == 0 {
			continue
		}
		switch num {
		case m.nameNum:
			name, found = unsafe.String(&v[0], len(v)), found+1
		case m.namespaceNum:
			namespace, found = unsafe.String(&v[0], len(v)), found+1
		}
	}
	return namespace, name
}

// decodeOver decodes one occurrence of f into p, taking it from prior's when they read
// the same; a struct is decoded over prior's field by field.
func (f *pfield) decodeOver(v []byte, p, prior unsafe.Pointer) error {
	if prior != nil && f.shares {
		old := unsafe.Add(prior, f.offset)
		switch {
		case f.sub != nil && f.sub.head == nil:
			return f.sub.decodeOver(v, p, old)
		case f.sub != nil && !isZero(p, f.typ.Size()):
			// A headed struct given twice in a struct of more than 64 message fields, which
			// fieldsOf does not merge, decodes into what the first gave; same says what
			// a decode from zero makes.
			return f.decode(v, p)
		}
		if f.same(v, old) {
			f.copy(p, old)
			return nil
		}
	}
	return f.decode(v, p)
}

type (
	// psameFunc reports whether v, one occurrence of a field, decodes to the value at p.
	psameFunc func(v []byte, p unsafe.Pointer) bool
	// psameAllFunc is psameFunc for the run of a repeated field's n occurrences.
	psameAllFunc func(run []byte, num protowire.Number, n int, p unsafe.Pointer) bool
	// copyFunc copies the value at src over the one at dst.
	copyFunc func(dst, src unsafe.Pointer)
)

// pmeta is where an object's name and namespace are, by which its last state is found.
type pmeta struct {
	num                   protowire.Number // the metadata's field
	name, namespace       uintptr          // offsets in the object
	nameNum, namespaceNum protowire.Number // their fields in the metadata
}

func pmetaOf(f *pfield, meta *ptable) *pmeta {
	m := &pmeta{num: f.num}
	var found int
	for _, mf := range meta.fields {
		switch {
		case mf.name == "name" && mf.typ.Kind() == reflect.String:
			m.name, m.nameNum, found = f.offset+mf.offset, mf.num, found+1
		case mf.name == "namespace" && mf.typ.Kind() == reflect.String:
			m.namespace, m.namespaceNum, found = f.offset+mf.offset, mf.num, found+1
		}
	}
	if found != 2 {
		return nil
	}
	return m
}

// same reports whether msg decodes to exactly the struct at p: each field msg holds to
// the value p holds, each field it lacks zero in p, its unknown fields p's, in order.
func (t *ptable) same(msg []byte, p unsafe.Pointer) bool {
	if p == nil || t.err != nil {
		return false
	}
	if t.head != nil {
		return t.sameHeaded(msg, p)
	}
	var unknown []byte
	if t.unknown >= 0 {
		run, proto := (*Members)(unsafe.Add(p, t.unknown)).runOf()
		if len(run) > 0 && !proto {
			return false
		}
		unknown = run
	}
	ok := t.sameFields(msg, p, func(field []byte) bool {
		if t.unknown < 0 {
			return true // dropped by the decoder too
		}
		if !bytes.HasPrefix(unknown, field) {
			return false
		}
		unknown = unknown[len(field):]
		return true
	})
	return ok && len(unknown) == 0
}

// sameFields is same for the fields t has a Go field for, handing every other field to
// other, which says whether it is the one expected.
func (t *ptable) sameFields(msg []byte, p unsafe.Pointer, other func(field []byte) bool) bool {
	var seen [4]uint64 // by index in t.fields
	if len(t.fields) > len(seen)*64 {
		return false
	}
	for i := 0; i < len(msg); {
		num, wire, v, n := protowire.Next(msg[i:])
		if n < 0 {
			return false
		}
		field := msg[i : i+n]
		f := t.field(num)
		switch {
		case num == t.skip:
		case f == nil:
			if !other(field) {
				return false
			}
		case wire != f.wire || seen[f.index/64]&(1<<(f.index%64)) != 0:
			return false // wrong (the decoder fails), or given twice: not worth the doubt
		case f.all != nil:
			run, count := adjacent(msg[i:], num)
			if f.sameAll == nil || !f.sameAll(run, num, count, unsafe.Add(p, f.offset)) {
				return false
			}
			n = len(run)
			seen[f.index/64] |= 1 << (f.index % 64)
		default:
			if f.same == nil || !f.same(v, unsafe.Add(p, f.offset)) {
				return false
			}
			seen[f.index/64] |= 1 << (f.index % 64)
		}
		i += n
	}
	for _, f := range t.fields {
		if seen[f.index/64]&(1<<(f.index%64)) == 0 && !isZero(unsafe.Add(p, f.offset), f.typ.Size()) {
			return false
		}
	}
	return true
}

// sameHeaded is same for a headed type: its own fields in the struct, the others in
// its head.
func (t *ptable) sameHeaded(msg []byte, p unsafe.Pointer) bool {
	sp := scratch.Get().(*[]byte)
	key := (*sp)[:0]
	ok := t.sameFields(msg, p, func(f []byte) bool {
		key = append(key, f...)
		return true
	})
	ok = ok && t.head.table.same(key, *(*unsafe.Pointer)(unsafe.Add(p, t.head.offset)))
	if cap(key) <= 64<<10 {
		*sp = key[:0]
		scratch.Put(sp)
	}
	return ok
}

// isZero reports whether the size bytes at p are all zero: the zero value, which is what
// decoding leaves a field the message does not hold.
func isZero(p unsafe.Pointer, size uintptr) bool {
	b := unsafe.Slice((*byte)(p), size)
	for len(b) >= 8 {
		if *(*uint64)(unsafe.Pointer(&b[0])) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func psameString(v []byte, p unsafe.Pointer) bool { return *(*string)(p) == string(v) }

func psameInt32(v []byte, p unsafe.Pointer) bool { return *(*int32)(p) == int32(int64(varint(v))) }

func psameInt64(v []byte, p unsafe.Pointer) bool { return *(*int64)(p) == int64(varint(v)) }

func psameBool(v []byte, p unsafe.Pointer) bool { return *(*bool)(p) == (varint(v) != 0) }

func psamePointer(elem psameFunc) psameFunc {
	if elem == nil {
		return nil
	}
	return func(v []byte, p unsafe.Pointer) bool {
		e := *(*unsafe.Pointer)(p)
		return e != nil && elem(v, e)
	}
}

var errDiffers = errors.New("differs")

// psameSlice: as many elements as occurrences, each the same.
func psameSlice(typ reflect.Type, wire protowire.Type, elem psameFunc) psameAllFunc {
	if elem == nil {
		return nil
	}
	size := typ.Elem().Size()
	return func(run []byte, num protowire.Number, n int, p unsafe.Pointer) bool {
		s := (*sliceHeader)(p)
		if s.len != n {
			return false
		}
		_, err := occurrences(run, num, wire, func(k int, v []byte) error {
			if !elem(v, unsafe.Add(s.data, uintptr(k)*size)) {
				return errDiffers
			}
			return nil
		})
		return err == nil
	}
}

func psameStringMap(run []byte, num protowire.Number, _ int, p unsafe.Pointer) bool {
	m := *(*map[string]string)(p)
	return m != nil && holdsEntries(m, run, num)
}

// typedCopy returns the copyFunc of typ's values: the garbage collector sees each
// pointer written.
func typedCopy(typ reflect.Type) copyFunc {
	switch typ.Kind() {
	case reflect.String:
		return func(dst, src unsafe.Pointer) { *(*string)(dst) = *(*string)(src) }
	case reflect.Pointer, reflect.Map:
		return func(dst, src unsafe.Pointer) { *(*unsafe.Pointer)(dst) = *(*unsafe.Pointer)(src) }
	case reflect.Slice:
		return func(dst, src unsafe.Pointer) { *(*sliceHeader)(dst) = *(*sliceHeader)(src) }
	default:
		return func(dst, src unsafe.Pointer) { reflect.NewAt(typ, dst).Elem().Set(reflect.NewAt(typ, src).Elem()) }
	}
}
