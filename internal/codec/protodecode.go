package codec

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/kinformer/kinformer/internal/protowire"
)

// The protobuf decoder: one pass over a message's fields, each decoded in place by its
// field's pdecodeFunc; a field no Go field claims goes, still as bytes, to the struct's
// Unknown. Everything kept is a copy (or an interned or shared value): nothing points
// into msg, which a watch frame's buffer reuses at once.

// decode decodes the message msg into the struct at p, whose table is t.
func (t *ptable) decode(msg []byte, p unsafe.Pointer) error {
	return t.decodeOver(msg, p, nil)
}

// decodeOver is decode, taking from the struct at prior (when not nil) every field
// that msg holds as prior holds it (see protoprior.go).
func (t *ptable) decodeOver(msg []byte, p, prior unsafe.Pointer) error {
	if t.head != nil {
		return t.decodeHeaded(msg, p)
	}
	var unknown builder
	if err := t.fieldsOf(msg, p, prior, nil, func(f []byte) {
		if t.unknown >= 0 {
			unknown.addField(f)
		}
	}); err != nil {
		return err
	}
	t.setUnknown(p, prior, &unknown)
	return nil
}

// setUnknown sets the Unknown of the struct at p to the fields unknown gathered: those
// of the struct at prior when they are the same fields.
func (t *ptable) setUnknown(p, prior unsafe.Pointer, unknown *builder) {
	if t.unknown < 0 {
		return
	}
	u := (*Members)(unsafe.Add(p, t.unknown))
	if prior != nil {
		if old := *(*Members)(unsafe.Add(prior, t.unknown)); unknown.holds(old) {
			unknown.discard()
			*u = old
			return
		}
	}
	*u = membersOf(unknown.build(t.parts))
}

// fieldsOf decodes msg's fields that t has a Go field for into the struct at p, and
// hands every other field, tag and value, to other. A field the struct at prior (when
// not nil) holds as msg does is copied from it rather than decoded; top, at an object's
// top level, is asked first (see topLevel).
func (t *ptable) fieldsOf(msg []byte, p, prior unsafe.Pointer, top *topLevel, other func(field []byte)) error {
	// done: the repeated fields whose first run was decoded; all: those decoded from all
	// their occurrences, gathered when one came after others (protobuf allows it). met
	// and merged are the same for the message fields: met once, merged (all their
	// occurrences decoded as one) when met again.
	var done, all, met, merged uint64
	for i := 0; i < len(msg); {
		num, wire, v, n := protowire.Next(msg[i:])
		if n < 0 {
			return fmt.Errorf("%v: %w", t.typ, protowire.Error(n))
		}
		start, end := i, i+n
		i = end
		f := t.field(num)
		var again bool // a message field met before
		if f != nil && f.mbit != 0 && wire == f.wire {
			again = met&f.mbit != 0
			met |= f.mbit
		}
		switch {
		case num == t.skip:
		case f == nil:
			other(msg[start:end])
		case wire != f.wire:
			return fmt.Errorf("%v: field %d (%s) has wire type %d, want %d", t.typ, num, f.name, wire, f.wire)
		case f.all != nil && done&f.bit == 0:
			done |= f.bit
			run, count := adjacent(msg[start:], num)
			i = start + len(run)
			decode := f.all
			if prior != nil {
				old := unsafe.Add(prior, f.offset)
				switch {
				case f.allOver != nil: // says itself whether the run is the last state's
					decode = func(run []byte, num protowire.Number, n int, p unsafe.Pointer) error {
						return f.allOver(run, num, n, p, old)
					}
				case f.sameAll != nil && f.sameAll(run, num, count, old):
					f.copy(unsafe.Add(p, f.offset), old)
					continue
				}
			}
			if err := decode(run, num, count, unsafe.Add(p, f.offset)); err != nil {
				return fmt.Errorf("%v: decoding %q: %w", t.typ, f.name, err)
			}
		case f.all != nil && all&f.bit == 0:
			// Met again after other fields: decoded again, from every occurrence in the
			// message, once (appending each in turn would copy the slice each time).
			all |= f.bit
			run, count := gather(msg, num)
			if err := f.all(run, num, count, unsafe.Add(p, f.offset)); err != nil {
				return fmt.Errorf("%v: decoding %q: %w", t.typ, f.name, err)
			}
		case f.all != nil: // in what gather found
		case again && merged&f.mbit != 0: // in what decodeMerged read
		case again:
			// A message given again merges into what it gave before: protobuf reads
			// several occurrences as their bytes back to back, so they are decoded so,
			// once, from the zero value (each part of it merged as protobuf merges it: a
			// repeated field's or a map's elements added, a field given twice the last).
			merged |= f.mbit
			if top != nil {
				top.dup = true
			}
			if err := f.decodeMerged(msg, unsafe.Add(p, f.offset)); err != nil {
				return fmt.Errorf("%v: decoding %q: %w", t.typ, f.name, err)
			}
		case top != nil && f.shares && f.wire == protowire.Bytes && top.take(f, v, p):
		default:
			if err := f.decodeOver(v, unsafe.Add(p, f.offset), prior); err != nil {
				return fmt.Errorf("%v: decoding %q: %w", t.typ, f.name, err)
			}
		}
	}
	return nil
}

// decodeMerged decodes every occurrence of the message field f in msg, their values
// back to back, into the zeroed value at p.
func (f *pfield) decodeMerged(msg []byte, p unsafe.Pointer) error {
	var joined []byte
	for len(msg) > 0 {
		num, _, v, n := protowire.Next(msg)
		if n < 0 {
			break // the caller's pass reports it
		}
		if num == f.num {
			joined = append(joined, v...)
		}
		msg = msg[n:]
	}
	reflect.NewAt(f.typ, p).Elem().SetZero()
	return f.decode(joined, p)
}

// field is the Go field of number num, or nil.
func (t *ptable) field(num protowire.Number) *pfield {
	if int(num) < len(t.byNum) {
		return t.byNum[num]
	}
	return nil
}

// decodeHeaded is decode for a headed type: its own fields into itself, the others
// into the head, found by their bytes as decodeHeaded finds a JSON head by its text.
func (t *ptable) decodeHeaded(msg []byte, p unsafe.Pointer) error {
	sp := scratch.Get().(*[]byte)
	key := (*sp)[:0]
	defer func() {
		if cap(key) <= 64<<10 {
			*sp = key[:0]
			scratch.Put(sp)
		}
	}()
	if err := t.fieldsOf(msg, p, nil, nil, func(f []byte) { key = append(key, f...) }); err != nil {
		return err
	}
	h, err := t.head.find(key, func(b []byte, v unsafe.Pointer) error { return t.head.table.decode(b, v) })
	if err != nil {
		return err
	}
	*(*unsafe.Pointer)(unsafe.Add(p, t.head.offset)) = h
	return nil
}

// varint reads the varint v holds, which ConsumeValue has found whole.
func varint(v []byte) uint64 {
	x, _ := protowire.ConsumeVarint(v)
	return x
}

func pdecodeString(intern bool, parts *parts) pdecodeFunc {
	return func(v []byte, p unsafe.Pointer) error {
		switch {
		case intern && parts != nil && len(v) > internMax:
			*(*string)(p) = parts.string(v)
		case intern:
			*(*string)(p) = internString(v)
		default:
			*(*string)(p) = string(v)
		}
		return nil
	}
}

// An int32 is written as the varint of its sign-extended 64-bit value.
func pdecodeInt32(v []byte, p unsafe.Pointer) error {
	*(*int32)(p) = int32(int64(varint(v)))
	return nil
}

func pdecodeInt64(v []byte, p unsafe.Pointer) error {
	*(*int64)(p) = int64(varint(v))
	return nil
}

func pdecodeBool(v []byte, p unsafe.Pointer) error {
	*(*bool)(p) = varint(v) != 0
	return nil
}

func pdecodePointer(elem reflect.Type, decode pdecodeFunc) pdecodeFunc {
	return func(v []byte, p unsafe.Pointer) error {
		e := reflect.New(elem).UnsafePointer()
		if err := decode(v, e); err != nil {
			return err
		}
		*(*unsafe.Pointer)(p) = e
		return nil
	}
}

// occurrences calls each with the value of every field num in msg (a Bytes field's
// content, a varint's bytes), after checking its wire type, and returns how many. The
// decoders give it a run of a field's occurrences, counted when the run was found, to
// fill a slice or map already made at their number.
func occurrences(msg []byte, num protowire.Number, wire protowire.Type, each func(k int, v []byte) error) (int, error) {
	k := 0
	for len(msg) > 0 {
		fnum, fwire, v, n := protowire.Next(msg)
		if n < 0 {
			return 0, protowire.Error(n)
		}
		if fnum == num {
			if fwire != wire {
				return 0, fmt.Errorf("field %d has wire type %d, want %d", num, fwire, wire)
			}
			if err := each(k, v); err != nil {
				return 0, err
			}
			k++
		}
		msg = msg[n:]
	}
	return k, nil
}

// pdecodeSlice decodes every occurrence of a repeated field into a slice made at their
// number.
func pdecodeSlice(typ reflect.Type, wire protowire.Type, elem pdecodeFunc) pdecodeAllFunc {
	size := typ.Elem().Size()
	var arrays [9]reflect.Type // as decodeSlice: one allocation for short slices
	for n := range arrays {
		arrays[n] = reflect.ArrayOf(n, typ.Elem())
	}
	return func(msg []byte, num protowire.Number, n int, p unsafe.Pointer) error {
		var base unsafe.Pointer
		if n < len(arrays) {
			base = reflect.New(arrays[n]).UnsafePointer()
		} else {
			base = reflect.MakeSlice(typ, n, n).UnsafePointer()
		}
		if _, err := occurrences(msg, num, wire, func(k int, v []byte) error {
			return elem(v, unsafe.Add(base, uintptr(k)*size))
		}); err != nil {
			return err
		}
		*(*sliceHeader)(p) = sliceHeader{data: base, len: n, cap: n}
		return nil
	}
}

// mapEntry reads a map entry's key (field 1) and value (field 2).
func mapEntry(v []byte) (key, value []byte, err error) {
	for len(v) > 0 {
		num, wire, n := protowire.ConsumeTag(v)
		if n < 0 {
			return nil, nil, protowire.Error(n)
		}
		if wire != protowire.Bytes {
			m := protowire.ConsumeValue(wire, v[n:])
			if m < 0 {
				return nil, nil, protowire.Error(m)
			}
			v = v[n+m:]
			continue // no field of an entry of strings: skipped, as protobuf readers do
		}
		b, m := protowire.ConsumeBytes(v[n:])
		if m < 0 {
			return nil, nil, protowire.Error(m)
		}
		switch num {
		case 1:
			key = b
		case 2:
			value = b
		}
		v = v[n+m:]
	}
	return key, value, nil
}

// pdecodeStringMap decodes labels or annotations: a map made at its size, its keys and
// short values interned.
func pdecodeStringMap(msg []byte, num protowire.Number, n int, p unsafe.Pointer) error {
	m := make(map[string]string, n)
	if _, err := occurrences(msg, num, protowire.Bytes, func(_ int, v []byte) error {
		k, val, err := mapEntry(v)
		m[internString(k)] = internString(val)
		return err
	}); err != nil {
		return err
	}
	*(*map[string]string)(p) = m
	return nil
}

// pdecodeStringMapOver is pdecodeStringMap against the map at prior, the last state's:
// that map itself when the run holds exactly its entries; else a new map, in which a
// value prior holds under the same key is its string and a value that changed gets a
// string of its own, not interned (a value that changes from state to state, a time, a
// count, would only push others out of the intern table).
func pdecodeStringMapOver(msg []byte, num protowire.Number, n int, p, prior unsafe.Pointer) error {
	old := *(*map[string]string)(prior)
	if old != nil && holdsEntries(old, msg, num) {
		*(*map[string]string)(p) = old
		return nil
	}
	return buildStringMapOver(msg, num, n, p, old)
}

// buildStringMapOver builds the map of a run that is not old's entries.
func buildStringMapOver(msg []byte, num protowire.Number, n int, p unsafe.Pointer, old map[string]string) error {
	m := make(map[string]string, n)
	if _, err := occurrences(msg, num, protowire.Bytes, func(_ int, v []byte) error {
		k, val, err := mapEntry(v)
		if was, ok := old[string(k)]; ok && was == string(val) {
			m[internString(k)] = was
		} else {
			m[internString(k)] = string(val)
		}
		return err
	}); err != nil {
		return err
	}
	*(*map[string]string)(p) = m
	return nil
}

// protoMap is a map the table holds: the digest of the entries it was decoded from.
type protoMap struct {
	d digest
	m map[string]string
}

// pdecodeMap is pdecodeStringMap through the table: the map of the same entries as a map
// the table holds is that map. It is found by a 128-bit digest of the entries' bytes
// under the table's own seeds (the apiserver writes a map's entries sorted by key, so
// equal maps are equal bytes), as the top-level fields of an object's last state are
// (protoprior.go): a map found is neither read nor checked entry by entry. The entries
// are not kept, so a map that changes with every event (an annotation with a time in
// it) costs the table no copy of them.
func (t *MapTable) pdecodeMap(run []byte, num protowire.Number, n int, p unsafe.Pointer) error {
	return t.pdecodeMapOver(run, num, n, p, nil)
}

// pdecodeMapOver is pdecodeMap against the map at prior, the object's last state's, when
// prior is not nil: a map the table does not hold is that one if the run holds exactly
// its entries, else built against it (pdecodeStringMapOver). A map that changed from the
// last state is not offered to other objects: what changes from one state to the next
// (a time, a count) would push shared maps out of their slots.
func (t *MapTable) pdecodeMapOver(run []byte, num protowire.Number, n int, p, prior unsafe.Pointer) error {
	if len(run) > sharedMapMax {
		if prior != nil {
			return pdecodeStringMapOver(run, num, n, p, prior)
		}
		return pdecodeStringMap(run, num, n, p)
	}
	d := t.recents.digest(run)
	slot := &t.pmaps[d[0]&(mapSlots-1)]
	if e := slot.Load(); e != nil && e.d == d {
		*(*map[string]string)(p) = e.m
		return nil
	}
	if prior == nil {
		if err := pdecodeStringMap(run, num, n, p); err != nil {
			return err
		}
	} else if old := *(*map[string]string)(prior); old != nil && holdsEntries(old, run, num) {
		*(*map[string]string)(p) = old // unchanged: offered again, its slot lost to another
	} else {
		return buildStringMapOver(run, num, n, p, old)
	}
	slot.Store(&protoMap{d: d, m: *(*map[string]string)(p)})
	return nil
}

var errNotHeld = errors.New("an entry the map does not hold")

// holdsEntries reports whether m is exactly the map the entries of run make. It asks
// for their keys in increasing order, as the apiserver writes them: then each is another
// key, and as many entries as m has, each of them in m, are all of m. (Without the order,
// [a=1, a=1] would pass for {a:1, b:2}.) Entries in another order are held by no map:
// they are decoded.
func holdsEntries(m map[string]string, run []byte, num protowire.Number) bool {
	n := 0
	var last []byte
	_, err := occurrences(run, num, protowire.Bytes, func(k int, v []byte) error {
		key, val, err := mapEntry(v)
		if err != nil || k > 0 && bytes.Compare(key, last) <= 0 {
			return errNotHeld
		}
		if got, ok := m[string(key)]; !ok || got != string(val) {
			return errNotHeld
		}
		last = key
		n++
		return nil
	})
	return err == nil && n == len(m)
}

// pbyBytes is byText for a repeated field: the slice decoded from the same run of
// occurrences as one the table holds is a copy of that one (owner references, which
// every pod of a ReplicaSet has alike).
func (t *MapTable) pbyBytes(typ reflect.Type, decode pdecodeAllFunc) pdecodeAllFunc {
	return func(run []byte, num protowire.Number, n int, p unsafe.Pointer) error {
		if len(run) > sharedListMax {
			return decode(run, num, n, p)
		}
		return t.shareByText(run, typ, p, func() (bool, error) { return true, decode(run, num, n, p) })
	}
}

// gather returns a copy of every field num of msg, in order, and how many: a run for
// a decoder.
func gather(msg []byte, num protowire.Number) (run []byte, count int) {
	for len(msg) > 0 {
		fnum, _, n := protowire.ConsumeField(msg)
		if n < 0 {
			break // the caller's pass reports it
		}
		if fnum == num {
			run = append(run, msg[:n]...)
			count++
		}
		msg = msg[n:]
	}
	return run, count
}

// adjacent returns the fields num at the start of msg, up to the first other field,
// and how many.
func adjacent(msg []byte, num protowire.Number) (run []byte, count int) {
	end := 0
	for end < len(msg) {
		fnum, _, _, n := protowire.Next(msg[end:])
		if n < 0 || fnum != num {
			break
		}
		end += n
		count++
	}
	return msg[:end], count
}

// pvariant is variant for protobuf: base's copy, from the table's own registry, whose
// metadata shares maps and lists through t (and skips managedFields when drop).
func (t *MapTable) pvariant(r *registry, base *ptable, drop bool) *ptable {
	return variantOf(t, base, drop, func() *ptable {
		own := t.registryFor(r).ptableFor(base.typ)
		return own.withMeta(own.object.metaVariant(drop, t))
	})
}
