package codec

import (
	"reflect"
	"slices"
)

// A projection is a type an embedder declares with only the members they read, such as
// a pod's name, labels and container images:
//
//	type PodImages struct {
//		object.ObjectMeta `json:"metadata"`
//		Spec struct {
//			Containers []struct {
//				Image string `json:"image"`
//			} `json:"containers"`
//		} `json:"spec"`
//	}
//
// The codec decodes it with tables as it decodes its own types, straight from the
// stream: the structs of the projection that keep no unknown members are decoded as
// Direct ones (members no field claims are skipped unread), the metadata as an object's
// (Options apply: shared maps and lists, managedFields dropped). A projection is
// registered per MapTable, on first use, for the cache that decodes it; without a table
// (json.Unmarshal) it is decoded by encoding/json, with the same result.

// projection returns the registry that decodes typ, a struct with the schema's metadata
// member, as a projection; nil for any other type. It is built once per table.
func (t *MapTable) projection(base *registry, typ reflect.Type) *registry {
	if base == nil || typ.Kind() != reflect.Struct {
		return nil
	}
	md := base.schema.Metadata
	if f, ok := fieldNamed(typ, md.Member); !ok || f.Type != md.Type {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if r, ok := t.projections[typ]; ok {
		return r
	}
	s := *base.schema
	s.Types = []reflect.Type{typ}
	s.Direct = slices.Clone(s.Direct)
	for _, st := range structsOf(typ, s.Unknown) {
		if !slices.Contains(s.Direct, st) && !keepsUnknown(st, s.Unknown) && st != md.Type {
			s.Direct = append(s.Direct, st)
		}
	}
	r := newRegistry(&s) // registryFor gives it the table's parts, as to the schema's own
	t.projections[typ] = r
	return r
}

// Registered reports whether typ is one of the schema's own types (given to Register, or
// reached from one).
func Registered(typ reflect.Type) bool {
	if registered == nil {
		return false
	}
	_, ok := registered.tables[typ]
	return ok
}

// Lossless reports whether values of typ keep every member they are decoded from, so
// that writing one back drops nothing: the schema's own types do, and so does a type
// each of whose structs has an Unknown field. A projection that leaves members out does
// not.
func Lossless(typ reflect.Type) bool {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if registered == nil || typ.Kind() != reflect.Struct {
		return true
	}
	if _, ok := registered.tables[typ]; ok {
		return true
	}
	for _, st := range structsOf(typ, registered.schema.Unknown) {
		if _, own := registered.tables[st]; !own && !keepsUnknown(st, registered.schema.Unknown) {
			return false
		}
	}
	return true
}

// structsOf returns typ and the structs its fields reach (through pointers, slices,
// arrays and map values), each once; it does not look into unknown.
func structsOf(typ, unknown reflect.Type) []reflect.Type {
	var out []reflect.Type
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for {
			switch t.Kind() {
			case reflect.Pointer, reflect.Slice, reflect.Array:
				t = t.Elem()
				continue
			case reflect.Map:
				t = t.Elem()
				continue
			}
			break
		}
		if t.Kind() != reflect.Struct || t == unknown || slices.Contains(out, t) {
			return
		}
		out = append(out, t)
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() {
				walk(f.Type)
			}
		}
	}
	walk(typ)
	return out
}

// keepsUnknown reports whether the struct st has a field of the type unknown.
func keepsUnknown(st, unknown reflect.Type) bool {
	for i := range st.NumField() {
		if st.Field(i).Type == unknown {
			return true
		}
	}
	return false
}

// fieldNamed returns the field of typ that the JSON member name decodes into.
func fieldNamed(typ reflect.Type, name string) (reflect.StructField, bool) {
	for i := range typ.NumField() {
		if f := typ.Field(i); jsonName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// jsonName is the member name of field f ("" when it has none: untagged embedded, or
// skipped).
func jsonName(f reflect.StructField) string {
	name, _, skip := jsonTag(f)
	if skip {
		return ""
	}
	if name == "" && !f.Anonymous {
		return f.Name
	}
	return name
}
