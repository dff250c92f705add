package codec

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"unsafe"

	"github.com/kinformer/kinformer/internal/protowire"
)

// Protobuf: the same types, the same objects in memory, read from the apiserver's other
// encoding. A Kubernetes object in protobuf is a message whose fields are numbered as
// k8s.io/api's generated.proto numbers them; package object writes each field's number
// in a pb tag beside its json tag (`json:"namespace,omitempty" pb:"3"`), and the codec
// builds a protobuf table from those tags as it builds a JSON table from the json tags.
//
// What carries over from the JSON path, unchanged:
//   - a field no Go field claims is kept, as its bytes, in the struct's Unknown (a
//     Members whose run is protobuf fields rather than JSON members), and written back
//     by MarshalProtobuf in its place among the others: nothing is lost on a round trip;
//   - Options: managedFields (field 17 of ObjectMeta) skipped unread, labels and
//     annotations shared through the MapTable, owner references shared by their bytes;
//   - interning of short strings, parts shared by their bytes, heads found by their
//     bytes (a head's protobuf fields and its JSON text never read alike: a JSON text
//     starts with '{', which is no valid protobuf tag).
//
// What is its own: the object of a watch's MODIFIED event (or of its ADDED one, after
// the list) is remembered by the table, and the next state of the same object decoded
// against it, what reads the same taken from it (protoprior.go).
//
// What does not: a field of a type this package cannot read from protobuf (a
// json.RawMessage, whose bytes would not be JSON) or without a pb tag makes its struct,
// and every object holding it, one that only JSON decodes; ProtobufError says which
// field, and listwatch asks such a resource for JSON. A tag of "-" says the field is
// not in the message at all (TypeMeta: a protobuf object's kind is in its envelope).
//
// Repeated fields (slices, and maps, which protobuf writes as repeated entries) are
// decoded at their first occurrence, all of them at once: counted first (a scan of tags
// and lengths, cheap next to JSON's scan of every byte), made at their size, filled.

// ptable is a struct's protobuf table: built once, by field number, read-only after.
type ptable struct {
	typ    reflect.Type
	byNum  []*pfield // indexed by field number
	fields []*pfield // in number order
	// unknown is the offset of the struct's Unknown field, or -1: fields no Go field
	// claims are then skipped.
	unknown int
	// skip is a field number dropped unread (managedFields, in a metadata variant).
	skip   protowire.Number
	head   *phead
	parts  *parts
	object *pobject
	// meta, set on an object's tables (and their variants), says where its metadata and
	// the metadata's name and namespace are: decodeObject finds the object's last state
	// by them.
	meta *pmeta
	// err says why the struct cannot be decoded from protobuf; nil when it can.
	err error
}

type pfield struct {
	name   string // the JSON member name, as variants and errors name the field
	num    protowire.Number
	offset uintptr
	typ    reflect.Type
	wire   protowire.Type
	// bit marks a repeated field as decoded, in the message being decoded.
	bit uint64
	// mbit is the field's bit among its table's message fields (a struct, or a pointer
	// to one), whose occurrences merge when given twice (fieldsOf); 0 for any other
	// field, and past the 64th message field (not merged).
	mbit uint64
	// decode decodes one occurrence: v is a Bytes field's content, or a varint's bytes.
	decode pdecodeFunc
	// all, set for a repeated field, decodes a run of its occurrences at once: the
	// adjacent ones where it first occurs (the apiserver writes them together), or all
	// of them, gathered, when one occurs after other fields.
	all    pdecodeAllFunc
	encode pencodeFunc
	// same reports, without allocating, whether one occurrence decodes to exactly the
	// value at p (sameAll: a run of a repeated field), and copy copies a value over
	// another: a field the object's last state holds alike is taken from it
	// (protoprior.go).
	same    psameFunc
	sameAll psameAllFunc
	copy    copyFunc
	// allOver, when set, is all against the last state's value at prior: that value when
	// the run reads the same (sameAll is not asked then), else a map whose values that did
	// not change are its strings.
	allOver func(run []byte, num protowire.Number, n int, p, prior unsafe.Pointer) error
	// sub is a struct-valued field's table, which decodes it over the last state's field
	// by field; index is the field's place in its table's fields; shares says the field
	// is compared before it is decoded.
	sub    *ptable
	index  int
	shares bool
}

type (
	pdecodeFunc func(v []byte, p unsafe.Pointer) error
	// pdecodeAllFunc decodes run, which holds n fields, all numbered num (counted by
	// the loop that found them: the decoder reads them once).
	pdecodeAllFunc func(run []byte, num protowire.Number, n int, p unsafe.Pointer) error
	// pencodeFunc appends the field at p, tag and value (each element, for a repeated
	// one), and nothing for a field that is absent (a nil pointer, an empty slice).
	pencodeFunc func(dst []byte, num protowire.Number, p unsafe.Pointer) ([]byte, error)
)

// pobject is what an object's protobuf table knows of its metadata, for variants.
type pobject struct {
	metadata *Metadata
	field    *pfield // the metadata field
	meta     *ptable
	dropped  *ptable // the variant that skips managedFields
}

// phead is a headed type's head, for protobuf.
type phead struct {
	*head
	table *ptable
}

// MessageType is a type that a function of its own package reads from a protobuf
// message and writes to one (a timestamp, an int-or-string). Message makes one.
type MessageType struct {
	typ    reflect.Type
	decode pdecodeFunc
	encode func(dst []byte, p unsafe.Pointer) []byte
	same   psameFunc
}

// Message describes T, read from and written to a protobuf message by decode (which
// sets all of *v; a message given twice is handed its occurrences back to back, which
// protobuf reads as their merge) and encode (which appends the
// message's fields, without tag or length, to dst); same
// reports whether a message decodes to exactly v (the same value in the same
// representation), and must not allocate: it is asked for every such field of an
// object the cache already holds.
func Message[T any](decode func(v *T, msg []byte) error, encode func(v *T, dst []byte) []byte, same func(v *T, msg []byte) bool) MessageType {
	return MessageType{
		typ:    reflect.TypeFor[T](),
		decode: func(msg []byte, p unsafe.Pointer) error { return decode((*T)(p), msg) },
		encode: func(dst []byte, p unsafe.Pointer) []byte { return encode((*T)(p), dst) },
		same:   func(msg []byte, p unsafe.Pointer) bool { return same((*T)(p), msg) },
	}
}

// ptableFor returns typ's protobuf table. The registry builds them when it is made, for
// its types and every struct they reach, and only reads them after; any other type has
// none, which the table returned says.
func (r *registry) ptableFor(typ reflect.Type) *ptable {
	if t := r.ptables[typ]; t != nil {
		return t
	}
	return &ptable{typ: typ, err: fmt.Errorf("%v is not a type of the schema: %w", typ, errNoProtobuf)}
}

// buildPtable returns typ's protobuf table, building it (and those of the structs it
// reaches) if it has none: only while the registry is made, before any decode reads it.
func (r *registry) buildPtable(typ reflect.Type) *ptable {
	if t, ok := r.ptables[typ]; ok {
		return t
	}
	t := &ptable{typ: typ, unknown: -1, parts: r.parts}
	r.ptables[typ] = t // first: a field's type may lead back to this one
	bit := uint(0)
	r.addPFields(t, typ, 0, &bit)
	if r.headed[typ] {
		r.pheadFor(t)
	}
	slices.SortFunc(t.fields, func(a, b *pfield) int { return int(a.num - b.num) })
	mbits := 0
	for i, f := range t.fields {
		f.index = i
		if isMessage(f) && mbits < 64 {
			f.mbit = 1 << mbits
			mbits++
		}
		for int(f.num) >= len(t.byNum) {
			t.byNum = append(t.byNum, nil)
		}
		if t.byNum[f.num] != nil && t.err == nil {
			t.err = fmt.Errorf("%v: two fields numbered %d", typ, f.num)
		}
		t.byNum[f.num] = f
	}
	r.pfindMetadata(t)
	return t
}

// isMessage reports whether f's value is one message: a struct, or a pointer to one.
func isMessage(f *pfield) bool {
	elem := f.typ
	if elem.Kind() == reflect.Pointer {
		elem = elem.Elem()
	}
	return f.wire == protowire.Bytes && f.all == nil && elem.Kind() == reflect.Struct
}

func (r *registry) addPFields(t *ptable, typ reflect.Type, base uintptr, bit *uint) {
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if f.Type == r.schema.Unknown && base == 0 {
			t.unknown = int(f.Offset)
			continue
		}
		name, _, skip := jsonTag(f)
		if skip {
			continue
		}
		tag, tagged := f.Tag.Lookup("pb")
		if tag == "-" {
			continue
		}
		if name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct && !tagged {
			r.addPFields(t, f.Type, base+f.Offset, bit) // untagged embedded struct: flattened
			continue
		}
		if name == "" {
			name = f.Name
		}
		num, err := strconv.ParseUint(tag, 10, 32)
		if !tagged || err != nil || num == 0 || num > uint64(protowire.MaxNumber) {
			t.setErr(fmt.Errorf("%v.%s has no protobuf field number (a pb tag)", typ, f.Name))
			continue
		}
		intern := typ != r.schema.Metadata.Type || !slices.Contains(r.schema.Metadata.NotInterned, name)
		pf := &pfield{name: name, num: protowire.Number(num), offset: base + f.Offset, typ: f.Type}
		if err := r.pcodecFor(pf, f.Type, intern); err != nil {
			t.setErr(fmt.Errorf("%v.%s: %w", typ, f.Name, err))
			continue
		}
		pf.copy = typedCopy(f.Type)
		// A varint is as cheap to decode as to compare; anything else that decodes to a
		// string, a pointer or a struct is worth taking from the last state.
		pf.shares = pf.same != nil && (pf.wire == protowire.Bytes || f.Type.Kind() == reflect.Pointer)
		if pf.all != nil {
			if *bit == 64 {
				t.setErr(fmt.Errorf("%v has more than 64 repeated fields", typ))
				continue
			}
			pf.bit = 1 << *bit
			*bit++
		}
		t.fields = append(t.fields, pf)
	}
}

func (t *ptable) setErr(err error) {
	if t.err == nil {
		t.err = err
	}
}

var errNoProtobuf = errors.New("its type has no protobuf encoding this codec reads")

// pcodecFor sets f's wire type, decoders and encoder for values of typ.
func (r *registry) pcodecFor(f *pfield, typ reflect.Type, intern bool) error {
	if m, ok := r.messages[typ]; ok {
		f.wire, f.decode, f.same = protowire.Bytes, m.decode, m.same
		f.encode = func(dst []byte, num protowire.Number, p unsafe.Pointer) ([]byte, error) {
			return appendMessage(dst, num, func(b []byte) ([]byte, error) { return m.encode(b, p), nil })
		}
		return nil
	}
	switch typ.Kind() {
	case reflect.String:
		f.wire, f.decode, f.encode, f.same = protowire.Bytes, pdecodeString(intern, r.parts), pencodeString, psameString
	case reflect.Int32:
		f.wire, f.decode, f.encode, f.same = protowire.Varint, pdecodeInt32, pencodeInt32, psameInt32
	case reflect.Int64:
		f.wire, f.decode, f.encode, f.same = protowire.Varint, pdecodeInt64, pencodeInt64, psameInt64
	case reflect.Bool:
		f.wire, f.decode, f.encode, f.same = protowire.Varint, pdecodeBool, pencodeBool, psameBool
	case reflect.Struct:
		if typ == r.schema.Unknown {
			return errNoProtobuf
		}
		sub := r.buildPtable(typ)
		f.wire, f.sub = protowire.Bytes, sub
		f.decode = func(v []byte, p unsafe.Pointer) error { return sub.decode(v, p) }
		f.same = func(v []byte, p unsafe.Pointer) bool { return sub.same(v, p) }
		f.encode = func(dst []byte, num protowire.Number, p unsafe.Pointer) ([]byte, error) {
			return appendMessage(dst, num, func(b []byte) ([]byte, error) { return sub.encode(b, p) })
		}
		if sub.err != nil {
			return sub.err
		}
	case reflect.Pointer:
		var elem pfield
		if err := r.pcodecFor(&elem, typ.Elem(), intern); err != nil || elem.all != nil {
			return cmpErr(err, errNoProtobuf)
		}
		f.wire, f.decode, f.encode = elem.wire, pdecodePointer(typ.Elem(), elem.decode), pencodePointer(elem.encode)
		f.same = psamePointer(elem.same)
	case reflect.Slice:
		if typ.Elem().Kind() == reflect.Uint8 {
			return errNoProtobuf // bytes (json.RawMessage): nothing modelled is
		}
		var elem pfield
		if err := r.pcodecFor(&elem, typ.Elem(), intern); err != nil || elem.all != nil {
			return cmpErr(err, errNoProtobuf)
		}
		f.wire, f.all, f.encode = elem.wire, pdecodeSlice(typ, elem.wire, elem.decode), pencodeSlice(typ, elem.encode)
		f.sameAll = psameSlice(typ, elem.wire, elem.same)
	case reflect.Map:
		if typ != stringMapType {
			return errNoProtobuf
		}
		f.wire, f.all, f.encode, f.sameAll = protowire.Bytes, pdecodeStringMap, pencodeStringMap, psameStringMap
		f.allOver = pdecodeStringMapOver
	default:
		return errNoProtobuf
	}
	return nil
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// pheadFor sets up a headed type's head, as headFor does for JSON: the same slots.
func (r *registry) pheadFor(t *ptable) {
	jt := r.tables[t.typ]
	if jt == nil || jt.head == nil {
		t.setErr(fmt.Errorf("headed type %v has no JSON table", t.typ))
		return
	}
	ht := r.buildPtable(jt.head.typ)
	if ht.err != nil {
		t.setErr(ht.err)
	}
	t.head = &phead{head: jt.head, table: ht}
}

// pfindMetadata marks t as an object's table if it is one, as findMetadata does.
func (r *registry) pfindMetadata(t *ptable) {
	md := &r.schema.Metadata
	for _, f := range t.fields {
		if f.name == md.Member && f.typ == md.Type {
			t.object = &pobject{metadata: md, field: f, meta: r.ptables[md.Type]}
			t.meta = pmetaOf(f, t.object.meta)
			t.object.dropped = t.withMeta(t.object.metaVariant(true, nil))
			return
		}
	}
}

// metaVariant returns a copy of the metadata's table that skips the droppable field
// (drop) and decodes the shared maps and lists through share (when not nil).
func (o *pobject) metaVariant(drop bool, share *MapTable) *ptable {
	m := o.meta.clone()
	if drop {
		m.skip = protowire.Number(o.metadata.DroppableNumber)
	}
	if share != nil {
		for i, f := range m.fields {
			switch {
			case slices.Contains(o.metadata.SharedMaps, f.name):
				c := *f
				c.all, c.allOver = share.pdecodeMap, share.pdecodeMapOver
				m.setField(i, &c)
			case slices.Contains(o.metadata.SharedLists, f.name):
				c := *f
				c.all = share.pbyBytes(f.typ, f.all)
				m.setField(i, &c)
			}
		}
	}
	return m
}

// withMeta returns a copy of t, an object's table, whose metadata field is decoded by
// meta; the copy is not itself an object's table.
func (t *ptable) withMeta(meta *ptable) *ptable {
	v := t.clone()
	v.object = nil
	for i, f := range v.fields {
		if f == t.object.field {
			c := *f
			c.decode = func(b []byte, p unsafe.Pointer) error { return meta.decode(b, p) }
			c.same = func(b []byte, p unsafe.Pointer) bool { return meta.same(b, p) }
			c.sub = meta // decoded against an earlier state as meta decodes
			v.setField(i, &c)
		}
	}
	return v
}

func (t *ptable) clone() *ptable {
	c := *t
	c.byNum, c.fields = slices.Clone(t.byNum), slices.Clone(t.fields)
	return &c
}

func (t *ptable) setField(i int, f *pfield) {
	t.fields[i] = f
	t.byNum[f.num] = f
}

// ptableOf is the table that decodes a T from protobuf as opts ask (T a pointer to a
// type in the schema), or an error saying why there is none.
func ptableOf[T any](r *registry, opts Options) (*ptable, error) {
	rt := reflect.TypeFor[T]()
	if rt.Kind() != reflect.Pointer || r == nil || r.tables[rt.Elem()] == nil {
		return nil, fmt.Errorf("%v is not a type of the schema: %w", rt, errNoProtobuf)
	}
	t := r.ptableFor(rt.Elem())
	if t.err != nil {
		return nil, t.err
	}
	if opts != (Options{}) && t.object != nil {
		if opts.Maps == nil {
			return t.object.dropped, nil
		}
		return opts.Maps.pvariant(r, t, opts.DropManagedFields), nil
	}
	return t, nil
}

// ProtobufError says why a T cannot be decoded from protobuf (and encoded to it): nil
// when it can. T is a pointer to a type of the schema given to Register.
func ProtobufError[T any]() error {
	_, err := ptableOf[T](registered, Options{})
	return err
}

// DecodeProtobuf decodes msg, an object's protobuf message (the raw bytes of its
// envelope, not the envelope), into a new T, a pointer to a type of the schema. Fields
// no Go field claims are kept, as protobuf, in the Unknown members. Malformed input
// gives an error, never a panic. Through the table of opts.Maps, it is decoded against
// the last state the table remembers of the object, and then takes that state's place
// (a list's object, after a relist: the cache now holds it); an object the table
// remembers nothing of is not remembered.
func DecodeProtobuf[T any](msg []byte, opts Options) (T, error) {
	return decodeProtobuf[T](registered, msg, opts, recallUse)
}

// DecodeProtobufModified is DecodeProtobuf for an object that just changed (a watch's
// MODIFIED event, or an ADDED one after the list: what changes next): the table
// of opts.Maps remembers it, and decodes the next state of the same object against it
// (protoprior.go).
func DecodeProtobufModified[T any](msg []byte, opts Options) (T, error) {
	return decodeProtobuf[T](registered, msg, opts, recallKeep)
}

// DecodeProtobufDeleted is DecodeProtobuf for the object of a DELETED event: the table
// of opts.Maps holds it weakly, so that it goes once nothing else holds it, and an
// object made again under its name before then is decoded against it.
func DecodeProtobufDeleted[T any](msg []byte, opts Options) (T, error) {
	return decodeProtobuf[T](registered, msg, opts, recallDrop)
}

func decodeProtobuf[T any](r *registry, msg []byte, opts Options, mode recall) (T, error) {
	t, err := ptableOf[T](r, opts)
	if err != nil {
		var zero T
		return zero, err
	}
	v := reflect.New(reflect.TypeFor[T]().Elem())
	return v.Interface().(T), t.decodeObject(msg, v.UnsafePointer(), opts.Maps, mode)
}

// MarshalProtobuf encodes v, of a type in the schema, as its protobuf message: its
// fields in number order, the protobuf fields it carried among them. An Unknown holding
// JSON members cannot be written so (ErrJSONMembers).
func MarshalProtobuf[T any](v *T) ([]byte, error) {
	t := registered.ptableFor(reflect.TypeFor[T]())
	if t.err != nil {
		return nil, t.err
	}
	return t.encode(nil, unsafe.Pointer(v))
}

// MarshalProtobufValue is MarshalProtobuf of v, a pointer to a type of the schema.
func MarshalProtobufValue(v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return nil, fmt.Errorf("codec: MarshalProtobufValue of %T: not a pointer to an object", v)
	}
	t := registered.ptableFor(rv.Type().Elem())
	if t.err != nil {
		return nil, t.err
	}
	return t.encode(nil, rv.UnsafePointer())
}

// SetTypeMeta sets the apiVersion and kind of v, a pointer to a type of the schema
// whose JSON has those members (an object's TypeMeta): a protobuf object has them in
// its envelope, not in its message. Other values are left alone.
func SetTypeMeta(v any, apiVersion, kind string) {
	if registered == nil {
		return
	}
	typ := reflect.TypeOf(v)
	if typ == nil || typ.Kind() != reflect.Pointer {
		return
	}
	t := registered.tables[typ.Elem()]
	p := reflect.ValueOf(v).UnsafePointer()
	if t == nil || t.typeMeta == nil || p == nil {
		return
	}
	// Interned: an envelope's strings are its own, and every object kept its copies.
	*(*string)(unsafe.Add(p, t.typeMeta[0])) = internString(unsafe.Slice(unsafe.StringData(apiVersion), len(apiVersion)))
	*(*string)(unsafe.Add(p, t.typeMeta[1])) = internString(unsafe.Slice(unsafe.StringData(kind), len(kind)))
}
