package codec

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/kinformer/kinformer/internal/jsonscan"
)

// Schema is what the codec must know of the types it decodes beyond their Go
// definitions, whose fields, types and json tags it reads by reflection. Package object
// builds one when it loads and hands it to Register; nothing changes it afterwards.
type Schema struct {
	// Types are the types the codec decodes and encodes itself. Tables are built for
	// them and for every struct they reach that keeps unknown members or is Direct.
	Types []reflect.Type
	// Unknown is the type of the field in which a struct keeps the members no other
	// field claims (object.Unknown): a struct whose only field is a Members. A struct
	// with a field of this type keeps unknown members.
	Unknown reflect.Type
	// Direct are structs without an Unknown field that the codec decodes all the same,
	// rather than hand them to encoding/json: small structs of plain fields on the hot
	// path (owner references).
	Direct []reflect.Type
	// Headed are structs that keep what many objects hold alike behind a pointer to a
	// head of their own (heads.go): the first field, an unexported pointer to a struct
	// with a table. A pod's conditions.
	Headed []reflect.Type
	// Text are the types written as JSON strings that a function of their own decodes
	// (timestamps).
	Text []TextType
	// Messages are the types written as protobuf messages that functions of their own
	// decode and encode (timestamps, int-or-strings).
	Messages []MessageType
	// Metadata says where an object's metadata is, and what Options change in it.
	Metadata Metadata
	// ApplyOptions does to a value of a type without a table (a type of another package,
	// which encoding/json decoded) what decoding with opts does to the types that have
	// one: DecodeUnvalidated calls it.
	ApplyOptions func(v any, opts Options)
}

// Metadata describes an object's metadata (object.ObjectMeta) to the codec. An object is
// a struct whose member Member is of type Type; Options apply to that member only, not to
// metadata further down (a pod template's).
type Metadata struct {
	Type   reflect.Type
	Member string
	// Droppable is the member that Options.DropManagedFields leaves out, and
	// DroppableNumber its protobuf field number.
	Droppable       string
	DroppableNumber int32
	// SharedMaps are the members, of type map[string]string, that Options.Maps shares.
	SharedMaps []string
	// SharedLists are the members, of any type, that Options.Maps shares when their JSON
	// text is the same (owner references).
	SharedLists []string
	// NotInterned are the string members unique to each object: looking them up in the
	// intern table would only push out the strings that objects do share.
	NotInterned []string
}

// TextType is a type written as a JSON string, which the codec decodes with a function
// of the type's own package. Text makes one.
type TextType struct {
	typ    reflect.Type
	decode decodeFunc
}

// Text describes T, a type written as a JSON string: parse decodes the string's bytes
// when it has no escapes (the API's timestamps never have any). Any other value (null,
// escapes) goes to T's UnmarshalJSON, or to encoding/json if T has none.
func Text[T any](parse func(v *T, s []byte) error) TextType {
	typ := reflect.TypeFor[T]()
	slow := decodeFallback(typ)
	if reflect.PointerTo(typ).Implements(unmarshalerType) {
		slow = decodeUnmarshaler(typ)
	}
	return TextType{typ, func(data []byte, i int, p unsafe.Pointer) (int, error) {
		if end, plain := jsonscan.String(data, i); plain {
			return end, parse((*T)(p), data[i+1:end-1])
		}
		return slow(data, i, p)
	}}
}

// registered holds the schema given to Register and the tables built from it. It is set
// once, while package object initializes, and only read afterwards: Marshal, Unmarshal
// and DecodeUnvalidated find a type's table in it.
var registered *registry

// Register builds the tables of s's types, for Marshal, Unmarshal and DecodeUnvalidated.
// Package object calls it once, while it initializes; a second call panics.
func Register(s *Schema) {
	if registered != nil {
		panic("codec: Register called twice")
	}
	registered = newRegistry(s)
}

// registry is a schema and the tables built from it.
type registry struct {
	schema *Schema
	tables map[reflect.Type]*table
	direct map[reflect.Type]bool
	text   map[reflect.Type]decodeFunc
	headed map[reflect.Type]bool
	// ptables are the protobuf tables (proto.go), built with the JSON ones.
	ptables  map[reflect.Type]*ptable
	messages map[reflect.Type]MessageType
	// parts, when set, is the table of shared parts every table of this registry
	// decodes into: the registry is a MapTable's copy of the one Register built.
	parts *parts
}

var membersType = reflect.TypeFor[Members]()

func newRegistry(s *Schema) *registry { return newRegistryWith(s, nil) }

// newRegistryWith builds the tables of s whose decoders share parts through p (nil: not
// at all).
func newRegistryWith(s *Schema, p *parts) *registry {
	if u := s.Unknown; u == nil || u.Kind() != reflect.Struct || u.NumField() != 1 || u.Field(0).Type != membersType {
		panic(fmt.Sprintf("codec: Schema.Unknown is %v, not a struct holding only a Members", s.Unknown))
	}
	r := &registry{schema: s, tables: map[reflect.Type]*table{}, direct: map[reflect.Type]bool{}, text: map[reflect.Type]decodeFunc{}, headed: map[reflect.Type]bool{}, parts: p,
		ptables: map[reflect.Type]*ptable{}, messages: map[reflect.Type]MessageType{}}
	for _, m := range s.Messages {
		r.messages[m.typ] = m
	}
	for _, typ := range s.Headed {
		r.headed[typ] = true
	}
	for _, typ := range s.Direct {
		r.direct[typ] = true
	}
	for _, tt := range s.Text {
		r.text[tt.typ] = tt.decode
	}
	for _, typ := range s.Types {
		if !r.hasTable(typ) {
			panic(fmt.Sprintf("codec: %v keeps no unknown members and is not Direct", typ))
		}
		r.tableFor(typ)
	}
	for _, typ := range s.Types {
		r.buildPtable(typ)
	}
	return r
}

// lookup returns the table of typ, which must have one: a type whose MarshalJSON or
// UnmarshalJSON calls the codec must be reachable from Schema.Types.
func (r *registry) lookup(typ reflect.Type) *table {
	var t *table
	if r != nil {
		t = r.tables[typ]
	}
	if t == nil {
		panic(fmt.Sprintf("codec: no table for %v: is it reachable from Schema.Types?", typ))
	}
	return t
}
