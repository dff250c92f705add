package codec

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
)

// A projection is a type an embedder declares with only the members they read, such as
// a pod's name, labels and container images:
//
//	type PodImages struct {
//		Metadata object.ObjectMeta `json:"metadata"`
//		Spec     struct {
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

// projection returns the registry that decodes typ as a projection, built once per
// table; nil when typ is no projection the tables decode as encoding/json would (then
// encoding/json decodes it). Decoders look it up for every object: a sync.Map read.
func (t *MapTable) projection(base *registry, typ reflect.Type) *registry {
	if r, ok := t.projections.Load(typ); ok {
		return r.(*registry)
	}
	r, _ := t.projections.LoadOrStore(typ, buildProjection(base, typ))
	return r.(*registry)
}

// buildProjection is projection's registry, or nil. typ must be a struct holding the
// schema's metadata in a field of the metadata member's name, with no JSON methods of
// its own; the structs it reaches, but for the schema's own types, text types and types
// with their own UnmarshalJSON (decoded as they say), are decoded as Direct ones, and
// must be structs whose members encoding/json finds as the tables do: no embedded
// pointer or unexported struct, no two fields of one member name.
func buildProjection(base *registry, typ reflect.Type) *registry {
	if base == nil || typ.Kind() != reflect.Struct || reflect.PointerTo(typ).Implements(unmarshalerType) {
		return nil
	}
	md := base.schema.Metadata
	if f, ok := fieldNamed(typ, md.Member); !ok || f.Type != md.Type || f.Anonymous {
		return nil
	}
	s := *base.schema
	s.Types = []reflect.Type{typ}
	s.Direct = slices.Clone(s.Direct)
	for _, st := range structsOf(typ, func(t reflect.Type) bool { return ownDecoder(base, t) }) {
		if !plainStruct(st) {
			return nil
		}
		if !keepsUnknown(st, s.Unknown) && !slices.Contains(s.Direct, st) {
			s.Direct = append(s.Direct, st)
		}
	}
	return newRegistry(&s) // registryFor gives it the table's parts, as to the schema's own
}

// ownDecoder reports whether values of t decode without a projection's help: the
// schema's own types and text types, and types with their own UnmarshalJSON.
func ownDecoder(r *registry, t reflect.Type) bool {
	_, table := r.tables[t]
	_, text := r.text[t]
	return table || text || t == r.schema.Unknown || reflect.PointerTo(t).Implements(unmarshalerType)
}

// plainStruct reports whether the tables find st's members as encoding/json does: no
// embedded pointer or unexported struct, and no two fields claiming one member.
func plainStruct(st reflect.Type) bool {
	names := map[string]bool{}
	for i := range st.NumField() {
		f := st.Field(i)
		if f.Anonymous && (f.Type.Kind() == reflect.Pointer || !f.IsExported()) {
			return false
		}
		name := jsonName(f)
		if name == "" {
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				return false // flattened members: leave their precedence to encoding/json
			}
			continue
		}
		if names[strings.ToLower(name)] {
			return false
		}
		names[strings.ToLower(name)] = true
	}
	return true
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

// Lossless reports whether writing a value of typ back drops nothing it was decoded
// from: the schema's own types keep every member, and so may a type with JSON methods of
// its own (its author's to say). Any other type of an embedder's (a projection) holds
// only what its fields name.
func Lossless(typ reflect.Type) bool {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.Struct || Registered(typ) {
		return true
	}
	p := reflect.PointerTo(typ)
	return p.Implements(unmarshalerType) && p.Implements(reflect.TypeFor[json.Marshaler]())
}

// structsOf returns typ and the structs its fields reach (through pointers, slices,
// arrays and map values), each once, but not those stop says to leave, nor what they
// reach.
func structsOf(typ reflect.Type, stop func(reflect.Type) bool) []reflect.Type {
	var out []reflect.Type
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || stop(t) || slices.Contains(out, t) {
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
