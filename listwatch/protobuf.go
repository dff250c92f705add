package listwatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"reflect"
	"strings"

	"github.com/kinformer/kinformer/internal/codec"
	"github.com/kinformer/kinformer/internal/kubeproto"
	"github.com/kinformer/kinformer/object"
)

// Encoding is what a client asks the apiserver to answer reads in.
type Encoding string

const (
	// EncodingAuto (the default, "") asks for protobuf for the types that can be
	// decoded from it (see codec.ProtobufError: the model's Pod and Lease), and JSON for
	// the others and for object.Raw, whose members are read by name.
	EncodingAuto Encoding = "auto"
	// EncodingJSON asks for JSON only.
	EncodingJSON Encoding = "json"
	// EncodingProtobuf asks for protobuf, and refuses a type that cannot be decoded from
	// it (the first List, Watch or Get says why) rather than fall back to JSON.
	EncodingProtobuf Encoding = "protobuf"
)

// ParseEncoding reads an --encoding flag: auto, json or protobuf.
func ParseEncoding(s string) (Encoding, error) {
	switch e := Encoding(s); e {
	case EncodingAuto, EncodingJSON, EncodingProtobuf:
		return e, nil
	case "":
		return EncodingAuto, nil
	}
	return "", fmt.Errorf("unknown encoding %q: want auto, json or protobuf", s)
}

// Media types of the protobuf encoding. Asked with JSON after it, as client-go asks: a
// resource without protobuf (a custom resource, most aggregated APIs) answers JSON to
// the same request, and the answer's Content-Type says which came.
const (
	protobufMediaType = "application/vnd.kubernetes.protobuf"
	protobufAccept    = protobufMediaType + ", application/json"
)

// isProtobuf reports whether a response's Content-Type is protobuf (a watch's says
// ";stream=watch" after it).
func isProtobuf(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == protobufMediaType
}

// protobufChoice says whether reads of T ask for protobuf under enc, or why they fail.
func protobufChoice[T any](enc Encoding) (bool, error) {
	if enc == EncodingJSON {
		return false, nil
	}
	err := codec.ProtobufError[T]()
	switch {
	case err == nil && enc != EncodingProtobuf && reflect.TypeFor[T]() == reflect.TypeFor[*object.Raw]():
		// object.Raw is read by member name (Unknown.Get), which protobuf's numbered
		// fields do not have: auto reads it as JSON, and only an explicit protobuf not.
		return false, nil
	case err == nil:
		return true, nil
	case enc == EncodingProtobuf:
		var zero T
		return false, fmt.Errorf("listwatch: encoding protobuf: %T cannot be decoded from protobuf (%w); use encoding auto or json", zero, err)
	}
	return false, nil
}

// Encoding says what the handle's reads ask for: EncodingProtobuf or EncodingJSON (the
// server may still answer JSON to the first: the answer's Content-Type decides).
func (r *Resource[T]) Encoding() Encoding {
	if r.proto {
		return EncodingProtobuf
	}
	return EncodingJSON
}

// decodeProtoList decodes a protobuf list page as it streams in, as decodeListReading
// does a JSON one: each item read, bounded by max, and decoded on its own.
func decodeProtoList[T any](body io.Reader, max int, decode object.DecodeOptions, ra readAhead, onContinue func(string)) (*object.List[T], error) {
	src, err := openProtoList(newProtoReader(body, max))
	if err != nil {
		return nil, err
	}
	if onContinue != nil && src.meta.Continue != "" {
		onContinue(src.meta.Continue)
	}
	p := ra.start(context.Background(), src, nil)
	if p != nil {
		defer p.close()
	}
	items := []T{}
	for {
		f, err := nextFrame(p, src, nil)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		obj, err := codec.DecodeProtobuf[T](f.data, decode)
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", len(items), err)
		}
		if src.typeMeta.Kind == "PartialObjectMetadataList" {
			// As its JSON items are; a typed list's items carry no type in either encoding.
			codec.SetTypeMeta(obj, "meta.k8s.io/v1", "PartialObjectMetadata")
		}
		items = append(items, obj)
	}
	return &object.List[T]{TypeMeta: src.typeMeta, ListMeta: src.meta, Items: items}, nil
}

// decodeProtoEvent decodes one WatchEvent message. live says the event is a change the
// watch saw, not one of a streaming list's initial events, which are the list.
func decodeProtoEvent[T any](frame []byte, decode object.DecodeOptions, live bool) (Event[T], error) {
	we, err := kubeproto.ParseWatchEvent(frame)
	if err != nil {
		return Event[T]{}, &FrameError{Reason: "invalid event", Err: err, Frame: head(frame)}
	}
	if len(we.Object) == 0 {
		return Event[T]{}, &FrameError{Reason: fmt.Sprintf("%s event without an object", we.Type), Frame: head(frame)}
	}
	env, err := kubeproto.ParseEnvelope(we.Object)
	if err != nil {
		return Event[T]{}, &FrameError{Reason: fmt.Sprintf("%s event's object", we.Type), Err: err, Frame: head(frame)}
	}
	switch t := EventType(we.Type); t {
	case Added, Modified, Deleted, Bookmark:
		decodeObj := codec.DecodeProtobuf[T]
		if t == Modified || t == Added && live {
			// Remembered by the cache's table, which decodes the object's next state
			// against this one: most of it will read the same (codec.DecodeProtobufModified).
			// An object that just changed, or was just made, is the one to change next;
			// the list's, a streaming list's included, may never change.
			decodeObj = codec.DecodeProtobufModified[T]
		}
		if t == Deleted {
			decodeObj = codec.DecodeProtobufDeleted[T] // the table lets go of it
		}
		obj, err := decodeObj(env.Raw, decode)
		if err != nil {
			return Event[T]{}, &FrameError{Reason: fmt.Sprintf("%s object does not decode", t), Err: err, Frame: head(frame)}
		}
		codec.SetTypeMeta(obj, env.APIVersion, env.Kind)
		return Event[T]{Type: t, Object: obj}, nil
	case Error:
		s, err := kubeproto.DecodeStatus(env.Raw)
		if err != nil {
			return Event[T]{}, &FrameError{Reason: "ERROR event without a Status", Err: err, Frame: head(frame)}
		}
		s.APIVersion, s.Kind = env.APIVersion, env.Kind
		return Event[T]{}, &object.StatusError{Status: s}
	default:
		return Event[T]{}, &UnknownEventError{Type: we.Type}
	}
}

// protobufStatus reads an error answer in protobuf; ok is false when body is not one.
func protobufStatus(body []byte) (object.Status, bool) {
	env, err := kubeproto.ParseEnvelope(body)
	if err != nil || env.Kind != "Status" {
		return object.Status{}, false
	}
	s, err := kubeproto.DecodeStatus(env.Raw)
	if err != nil {
		return object.Status{}, false
	}
	s.APIVersion, s.Kind = env.APIVersion, env.Kind
	return s, true
}

// decodeObject decodes one object answered to a Get, a write or a patch, in the
// encoding the answer says.
func decodeObject[T any](contentType string, b []byte) (T, error) {
	if !isProtobuf(contentType) {
		return decode[T](b)
	}
	env, err := kubeproto.ParseEnvelope(b)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("decoding response: %w", err)
	}
	obj, err := codec.DecodeProtobuf[T](env.Raw, object.DecodeOptions{})
	if err != nil {
		return obj, fmt.Errorf("decoding response: %w", err)
	}
	codec.SetTypeMeta(obj, env.APIVersion, env.Kind)
	return obj, nil
}

// encodeBody encodes obj for a create or an update: as JSON, unless it carries fields
// the model does not hold as protobuf (it was read in protobuf), which only protobuf
// writes back: then as protobuf, in the envelope the apiserver reads.
func encodeBody[T any](obj T, info ResourceInfo) ([]byte, string, error) {
	body, err := json.Marshal(obj)
	if !errors.Is(err, codec.ErrProtobufMembers) {
		return body, "application/json", err
	}
	msg, err := codec.MarshalProtobufValue(obj)
	if err != nil {
		return nil, "", err
	}
	apiVersion := info.Version
	if info.Group != "" {
		apiVersion = info.Group + "/" + info.Version
	}
	env := kubeproto.Envelope{APIVersion: apiVersion, Kind: info.Kind, Raw: msg}
	return kubeproto.AppendEnvelope(nil, env), protobufMediaType, nil
}

// acceptFor is the Accept header of a read of r's objects.
func (r *Resource[T]) acceptFor(list bool) string {
	switch a := r.accept(list); {
	case a != "" && r.proto: // metadata only, as client-go's metadata informer asks
		return protobufMediaType + strings.TrimPrefix(a, "application/json") + "," + a
	case a != "":
		return a
	case r.proto:
		return protobufAccept
	}
	return ""
}
