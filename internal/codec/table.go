package codec

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// table describes how a struct maps to JSON members: built once per type, by Register,
// read-only afterwards. Every field has a decodeFunc that writes the field in place
// through its offset, so decoding needs no reflection.
type table struct {
	typ    reflect.Type
	byName map[string]*field
	fields []*field // in declaration order
	// unknown is the offset of the struct's Unknown field, or -1 when it has none: then
	// members no field claims are dropped, after a case-insensitive match (as
	// encoding/json does).
	unknown int
	// skip names a member dropped unread: Metadata.Droppable, in the metadata table of a
	// variant for Options.DropManagedFields.
	skip string
	// object is set in an object's table: what the variants that Options ask for are
	// made from.
	object *object
	// parts is where the struct's Unknown buffer is looked up once built (nil: only
	// small buffers are shared, through the intern table).
	parts *parts
	// head is set in a headed type's table (heads.go).
	head *head
	// typeMeta, when set, are the offsets of the string fields of the apiVersion and
	// kind members (SetTypeMeta).
	typeMeta *[2]uintptr
}

type field struct {
	name   string
	index  []int   // path through untagged embedded structs
	offset uintptr // of the field in the outermost struct
	omit   bool    // omitempty or omitzero
	decode decodeFunc
}

// object is what an object's table knows of its metadata. A variant of the table is a
// copy whose metadata member decodes through a variant of the metadata's table.
type object struct {
	metadata *Metadata
	meta     *table // the metadata's own table
	// dropped is the object's variant whose metadata skips the droppable member.
	dropped *table
}

var (
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	stringMapType   = reflect.TypeFor[map[string]string]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

func (r *registry) tableFor(typ reflect.Type) *table {
	if t, ok := r.tables[typ]; ok {
		return t
	}
	t := &table{typ: typ, byName: map[string]*field{}, unknown: -1, parts: r.parts}
	r.tables[typ] = t // first: a field's type may lead back to this one
	r.addFields(t, typ, typ, nil, 0)
	if r.headed[typ] {
		r.headFor(t)
	}
	r.findMetadata(t)
	av, k := t.byName["apiVersion"], t.byName["kind"]
	if av != nil && k != nil && typ.FieldByIndex(av.index).Type.Kind() == reflect.String && typ.FieldByIndex(k.index).Type.Kind() == reflect.String {
		t.typeMeta = &[2]uintptr{av.offset, k.offset}
	}
	return t
}

// findMetadata marks t as an object's table if it is one, and builds its variant for
// DropManagedFields. (Variants that share maps are made per MapTable, on first use: see
// MapTable.variant.)
func (r *registry) findMetadata(t *table) {
	md := &r.schema.Metadata
	f := t.byName[md.Member]
	if f == nil || len(f.index) != 1 || t.typ.Field(f.index[0]).Type != md.Type {
		return
	}
	t.object = &object{metadata: md, meta: r.tables[md.Type]}
	t.object.dropped = t.withMeta(t.object.metaVariant(true, nil))
}

// metaVariant returns a copy of the metadata's table that skips the droppable member
// (drop) and decodes the shared maps and lists through share (when not nil).
func (o *object) metaVariant(drop bool, share *MapTable) *table {
	m := *o.meta
	m.byName = cloneFields(m.byName)
	if drop {
		m.skip = o.metadata.Droppable
	}
	if share != nil {
		for _, name := range o.metadata.SharedMaps {
			f := *m.byName[name]
			f.decode = share.decodeMap
			m.byName[name] = &f
		}
		for _, name := range o.metadata.SharedLists {
			f := *m.byName[name]
			f.decode = share.byText(m.typ.FieldByIndex(f.index).Type, f.decode)
			m.byName[name] = &f
		}
	}
	return &m
}

// withMeta returns a copy of t, an object's table, whose metadata member is decoded by
// meta; the copy shares everything else with t, and is not itself an object's table.
func (t *table) withMeta(meta *table) *table {
	v := *t
	v.object = nil
	v.byName = cloneFields(t.byName)
	f := *t.byName[t.object.metadata.Member]
	f.decode = meta.decode
	v.byName[f.name] = &f
	return &v
}

func cloneFields(m map[string]*field) map[string]*field { return maps.Clone(m) }

// hasTable reports whether values of typ are decoded by a table.
func (r *registry) hasTable(typ reflect.Type) bool {
	if typ.Kind() != reflect.Struct {
		return false
	}
	if r.direct[typ] || r.headed[typ] {
		return true
	}
	for i := range typ.NumField() {
		if typ.Field(i).Type == r.schema.Unknown {
			return true
		}
	}
	return false
}

func (r *registry) addFields(t *table, outer, typ reflect.Type, prefix []int, base uintptr) {
	md := &r.schema.Metadata
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if prefix == nil && f.Type == r.schema.Unknown {
			t.unknown = int(f.Offset)
			continue
		}
		name, omit, skip := jsonTag(f)
		if skip {
			continue
		}
		index := append(slices.Clone(prefix), i)
		if name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct {
			r.addFields(t, outer, f.Type, index, base+f.Offset) // untagged embedded struct (TypeMeta): flattened
			continue
		}
		if name == "" {
			name = f.Name
		}
		intern := outer != md.Type || !slices.Contains(md.NotInterned, name)
		fi := &field{name: name, index: index, offset: base + f.Offset, omit: omit}
		t.byName[name] = fi
		t.fields = append(t.fields, fi)
		fi.decode = r.decoderFor(f.Type, intern)
	}
}

// decoderFor returns the decodeFunc for values of typ. intern says whether short strings
// are interned.
func (r *registry) decoderFor(typ reflect.Type, intern bool) decodeFunc {
	if decode := r.text[typ]; decode != nil {
		return decode
	}
	switch {
	case typ == rawMessageType:
		return decodeRawMessage
	case typ == stringMapType:
		return decodeStringMap
	case r.hasTable(typ):
		return r.tableFor(typ).decode
	case reflect.PointerTo(typ).Implements(unmarshalerType):
		return decodeUnmarshaler(typ)
	}
	switch typ.Kind() {
	case reflect.String:
		return decodeString(typ, intern, r.parts)
	case reflect.Int64, reflect.Int32:
		return decodeInt(typ)
	case reflect.Bool:
		return decodeBool(typ)
	case reflect.Pointer:
		return decodePointer(typ, r.decoderFor(typ.Elem(), intern))
	case reflect.Slice:
		return decodeSlice(typ, r.decoderFor(typ.Elem(), intern))
	}
	return decodeFallback(typ)
}

// jsonTag reads a field's json tag: its name, whether it may be omitted when empty
// (omitempty or omitzero), and whether it is not serialized at all.
func jsonTag(f reflect.StructField) (name string, omit, skip bool) {
	if !f.IsExported() {
		return "", false, true
	}
	tag, ok := f.Tag.Lookup("json")
	if !ok {
		return "", false, false
	}
	if tag == "-" {
		return "", false, true
	}
	name, opts, _ := strings.Cut(tag, ",")
	for _, o := range strings.Split(opts, ",") {
		if o == "omitempty" || o == "omitzero" {
			omit = true
		}
	}
	return name, omit, false
}
