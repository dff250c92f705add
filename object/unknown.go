package object

import (
	"encoding/json"
	"iter"

	"github.com/kinformer/kinformer/internal/codec"
)

// Unknown holds the JSON members of an object that this package does not model: their
// names and their values byte for byte, in the order they came. Every struct that mirrors
// a part of a Kubernetes object carries one, so that decoding and encoding again loses
// nothing: fields added in later API versions, managedFields, a pod spec's volumes and
// probes.
//
// All the members of one Unknown live in a single compact buffer (the names and strings
// of the Kubernetes API kept in two bytes each; internal/codec says how), which is never
// changed once built: Set and Delete build a new one. So an Unknown is a value: copying
// it (with the struct it is in) is cheap, the copies are independent, and one may be
// shared by objects and goroutines. The zero value holds no members.
type Unknown struct{ members codec.Members }

// Len returns the number of members.
func (u Unknown) Len() int { return u.members.Len() }

// Get returns the value of the member name (its JSON text), or nil if there is none. A
// value is never empty (a member set to nothing reads null). It may be shared with u: do
// not change it.
func (u Unknown) Get(name string) json.RawMessage { return u.members.Get(name) }

// All yields every member's name and value, in order.
func (u Unknown) All() iter.Seq2[string, json.RawMessage] { return u.members.All() }

// Set adds the member name with a copy of value, or replaces its value where it is
// already there (keeping its place). An empty value is stored as null, which is what
// encoding a nil json.RawMessage gives.
// It panics on the members of an object read in protobuf: they are protobuf fields,
// which a JSON member cannot join (object.ErrProtobufMembers says why).
func (u *Unknown) Set(name string, value json.RawMessage) { u.members.Set(name, value) }

// Delete removes the member name, if there is one (none, in the protobuf fields of an
// object read in protobuf: see DeleteProtobufField).
func (u *Unknown) Delete(name string) { u.members.Delete(name) }

// Protobuf returns the fields u holds when the object was decoded from protobuf: the
// fields no Go field models, tag and value as the server wrote them, in the order it
// wrote them (they have numbers, not names, so Get and All find none of them), and true.
// For JSON members it returns nil and false. The bytes may be shared: do not change them.
func (u Unknown) Protobuf() ([]byte, bool) { return u.members.Protobuf() }

// ProtobufField returns the value of the protobuf field number num that u holds, when the
// object was decoded from protobuf: a string's or a message's bytes, a number's varint
// (the last occurrence of a field given twice); ok is false when there is none, or when u
// holds JSON members. Field numbers are k8s.io/api's (its generated.proto): a pod
// status's podIP is 6, its startTime 7 (a Time message: Time.UnmarshalProtobuf).
func (u Unknown) ProtobufField(num int) (value []byte, ok bool) {
	return u.members.ProtobufField(int32(num))
}

// DeleteProtobufField removes the protobuf field number num, when the object was decoded
// from protobuf (Delete finds fields by name, which protobuf's do not have).
func (u *Unknown) DeleteProtobufField(num int) { u.members.DeleteProtobufField(int32(num)) }

// Equal reports whether u and v hold the same members with the same values, as JSON
// (go-cmp's Equal and Diff call it). reflect.DeepEqual does not look at the members: it
// says two Unknowns are equal only when they share their buffer, as the objects of one
// cache do, and otherwise that they differ. Compare objects with go-cmp, or by their
// JSON, where "the same" must mean the same content:
// member order, and the spacing and escaping of a value, make no difference (encoding an
// object compacts its unknown members' values).
func (u Unknown) Equal(v Unknown) bool { return u.members.Equal(v.members) }

// String shows the members as a JSON object, for %v and test failures.
func (u Unknown) String() string { return u.members.String() }

// stringMember returns the member name's value if it is a JSON string, else "".
func (u Unknown) stringMember(name string) string {
	var s string
	if v := u.Get(name); v != nil && json.Unmarshal(v, &s) == nil {
		return s
	}
	return ""
}
