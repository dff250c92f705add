package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unsafe"
)

// Marshal encodes v, whose type is in the schema given to Register: its fields, then the
// unknown members it carried, so that an object decoded and encoded again loses nothing.
// It is what the MarshalJSON of package object's types calls. Members come out sorted
// by name, which JSON does not give meaning to.
func Marshal[T any](v *T) ([]byte, error) { return marshal(registered, v) }

func marshal[T any](r *registry, v *T) ([]byte, error) {
	return r.lookup(reflect.TypeFor[T]()).encode(unsafe.Pointer(v))
}

// encode is the inverse of decode: the struct at p, whose table is t, as a JSON object.
// A headed struct's members are its own and its head's, written together.
func (t *table) encode(p unsafe.Pointer) ([]byte, error) {
	var c entries
	if err := c.add(t, p); err != nil {
		return nil, err
	}
	if t.head != nil {
		h := *(*unsafe.Pointer)(unsafe.Add(p, t.head.offset))
		if h == nil {
			h = t.head.zero
		}
		if err := c.add(t.head.table, h); err != nil {
			return nil, err
		}
	}
	return c.write(), nil
}

// entries are the members of an object being encoded, and the room they need.
type entries struct {
	list []entry
	size int
}

type entry struct {
	name    string
	value   []byte // a field's encoding
	unknown member // or an unknown member, written unpacked
}

// add appends the members of the struct at p, whose table is t.
func (c *entries) add(t *table, p unsafe.Pointer) error {
	rv := reflect.NewAt(t.typ, p).Elem()
	var unknown Members
	if t.unknown >= 0 {
		if unknown = *(*Members)(unsafe.Add(p, t.unknown)); unknown.IsProtobuf() {
			return fmt.Errorf("encoding %v as JSON: %w", t.typ, ErrProtobufMembers)
		}
	}
	if c.list == nil {
		c.list = make([]entry, 0, len(t.fields)+8)
		c.size = 2
	}
	first := len(c.list)
	for _, f := range t.fields {
		fv := rv.FieldByIndex(f.index)
		if f.omit && isEmpty(fv) {
			continue
		}
		b, err := json.Marshal(fv.Addr().Interface())
		if err != nil {
			return fmt.Errorf("encoding %q: %w", f.name, err)
		}
		c.list = append(c.list, entry{name: f.name, value: b})
		c.size += len(f.name) + len(b) + 4
	}
	written := c.list[first:len(c.list):len(c.list)]
	for m := range unknown.members() {
		name := m.nameString()
		if t.byName[name] != nil && slices.ContainsFunc(written, func(e entry) bool { return e.name == name }) {
			// A field of that name that is written wins. One left empty lets the member
			// through: what code written before the field was modelled set there.
			continue
		}
		c.list = append(c.list, entry{name: name, unknown: m})
		c.size += len(name) + 2*len(m.value) + 4
	}
	return nil
}

// write returns the members as a JSON object, sorted by name.
func (c *entries) write() []byte {
	// Sorted stably: of two members of one name, a headed struct's own field (added
	// first) is written, and its head's member (one set with With) is not.
	entries := c.list
	slices.SortStableFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	var buf bytes.Buffer
	buf.Grow(c.size + 2)
	buf.WriteByte('{')
	for i, e := range entries {
		if i > 0 && e.name == entries[i-1].name {
			continue
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		writeName(&buf, e.name)
		if e.value != nil {
			buf.Write(e.value)
		} else {
			buf.Write(e.unknown.appendText(buf.AvailableBuffer()))
		}
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

type zeroer interface{ IsZero() bool }

// isEmpty reports whether v is empty as omitempty and omitzero see it.
func isEmpty(v reflect.Value) bool {
	if z, ok := v.Interface().(zeroer); ok {
		if v.Kind() != reflect.Pointer || !v.IsNil() {
			return z.IsZero()
		}
	}
	switch v.Kind() {
	case reflect.Map, reflect.Slice, reflect.String, reflect.Array:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return v.IsZero()
}

// writeName writes name as a JSON string, followed by a colon.
func writeName(b *bytes.Buffer, name string) {
	if plainName(name) {
		b.WriteByte('"')
		b.WriteString(name)
		b.WriteString(`":`)
		return
	}
	q, _ := json.Marshal(name)
	b.Write(q)
	b.WriteByte(':')
}

// plainName reports whether name needs no escaping in JSON (as encoding/json escapes,
// HTML characters included).
func plainName(name string) bool {
	for i := range len(name) {
		if c := name[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
