package kubeproto

import (
	"fmt"
)

// Magic starts every protobuf body the apiserver writes for an object, a list or a
// Status (but not a watch frame, whose event is bare; its object inside starts with it).
var Magic = [4]byte{'k', '8', 's', 0}

// Envelope is a runtime.Unknown: an object's bytes and the type they hold.
type Envelope struct {
	APIVersion, Kind string
	// Raw is the object's own message (a List message for a list). It aliases the
	// parsed input. It is nil when the field is absent, and empty but not nil when the
	// field is present and empty, so that AppendEnvelope writes back what was read.
	Raw []byte
	// ContentEncoding and ContentType are empty in everything the apiserver writes
	// (Raw is protobuf); they are kept to be written back.
	ContentEncoding, ContentType string
}

// The field numbers of runtime.Unknown and runtime.TypeMeta.
const (
	unknownTypeMeta        = 1
	unknownRaw             = 2
	unknownContentEncoding = 3
	unknownContentType     = 4

	typeMetaAPIVersion = 1
	typeMetaKind       = 2
)

// ParseEnvelope reads a protobuf body: the magic, then a runtime.Unknown.
func ParseEnvelope(b []byte) (Envelope, error) {
	if len(b) < len(Magic) || [4]byte(b[:4]) != Magic {
		// A JSON body where protobuf was expected (a custom resource answers JSON to
		// the same Accept header) is the usual cause; show what came instead.
		start := b[:min(len(b), len(Magic))]
		return Envelope{}, fmt.Errorf(`protobuf: missing k8s\x00 magic (body starts %q)`, start)
	}
	const what = "protobuf envelope"
	var e Envelope
	err := walk(what, b[len(Magic):], func(f field) (err error) {
		switch f.num {
		case unknownTypeMeta:
			var tm []byte
			if tm, err = f.bytes(what, "typeMeta"); err != nil {
				return err
			}
			return parseTypeMeta(tm, &e)
		case unknownRaw:
			e.Raw, err = f.bytes(what, "raw")
		case unknownContentEncoding:
			e.ContentEncoding, err = f.str(what, "contentEncoding")
		case unknownContentType:
			e.ContentType, err = f.str(what, "contentType")
		}
		return err
	})
	if err != nil {
		return Envelope{}, err
	}
	return e, nil
}

// ParseTypeMeta reads a TypeMeta message (an envelope's field 1, met on its own by a
// reader that streams the envelope): its apiVersion and kind.
func ParseTypeMeta(msg []byte) (apiVersion, kind string, err error) {
	var e Envelope
	err = parseTypeMeta(msg, &e)
	return e.APIVersion, e.Kind, err
}

// parseTypeMeta reads a TypeMeta into e. A repeated typeMeta field merges into the
// first, as protobuf merges repeated message fields.
func parseTypeMeta(msg []byte, e *Envelope) error {
	const what = "protobuf envelope typeMeta"
	return walk(what, msg, func(f field) (err error) {
		var b []byte
		switch f.num {
		case typeMetaAPIVersion:
			b, err = f.bytes(what, "apiVersion")
			e.APIVersion = typeMetaString(b)
		case typeMetaKind:
			b, err = f.bytes(what, "kind")
			e.Kind = typeMetaString(b)
		}
		return err
	})
}

// typeMetaString returns an apiVersion or a kind: one of the built-in groups' and kinds'
// that every watch event of them carries, shared, rather than a string of its own per
// event; any other, a copy.
func typeMetaString(b []byte) string {
	return shared(b, "v1", "apps/v1", "coordination.k8s.io/v1", "events.k8s.io/v1", "meta.k8s.io/v1",
		"Pod", "ReplicaSet", "Deployment", "Lease", "Node", "Event", "Secret", "ConfigMap", "Namespace",
		"Status", "PartialObjectMetadata")
}

// shared returns the string of known that b spells, or a copy of b.
func shared(b []byte, known ...string) string {
	for _, k := range known {
		if string(b) == k {
			return k
		}
	}
	return string(b)
}

// AppendEnvelope appends the magic and e as a runtime.Unknown, byte for byte as the
// apiserver writes it: typeMeta with both its strings, raw unless Raw is nil, then
// contentEncoding and contentType, even empty (the generated proto2 code writes every
// non-pointer string, empty or not).
func AppendEnvelope(dst []byte, e Envelope) []byte {
	dst = append(dst, Magic[:]...)
	dst = appendMessageHeader(dst, unknownTypeMeta, sizeBytesField(len(e.APIVersion))+sizeBytesField(len(e.Kind)))
	dst = appendStringField(dst, typeMetaAPIVersion, e.APIVersion)
	dst = appendStringField(dst, typeMetaKind, e.Kind)
	if e.Raw != nil {
		dst = appendBytesField(dst, unknownRaw, e.Raw)
	}
	dst = appendStringField(dst, unknownContentEncoding, e.ContentEncoding)
	return appendStringField(dst, unknownContentType, e.ContentType)
}
