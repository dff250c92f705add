package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/kinformer/kinformer/internal/jsonscan"
)

// The decoder: one pass over an object's bytes, without encoding/json and without
// reflection on the way. A member a field claims is decoded by that field's decodeFunc
// (leaves.go); a member no field claims is packed, as it is scanned, into the struct's
// Unknown (builder.go). Only unusual values (escaped strings, floats where an integer is
// wanted, types the codec does not know) go to encoding/json, whose results and errors
// the decoder matches.
//
// Everything an object keeps is a copy of what it needs (or an interned string shared
// with other objects): no part of the input is retained.

// decodeFunc decodes the JSON value at data[i] (its first byte, not white space) into the
// value p points to, and returns the index just past the value.
type decodeFunc func(data []byte, i int, p unsafe.Pointer) (int, error)

// Unmarshal decodes data into v, whose type is in the schema given to Register, and
// keeps every member no field claims in v's Unknown. It is what the UnmarshalJSON of
// package object's types calls: like any UnmarshalJSON it is given a value that
// encoding/json has validated, and does not validate it again.
func Unmarshal[T any](data []byte, v *T) error { return unmarshal(registered, data, v) }

func unmarshal[T any](r *registry, data []byte, v *T) error {
	return decodeStruct(data, unsafe.Pointer(v), r.lookup(reflect.TypeFor[T]()))
}

// DecodeUnvalidated decodes data into a new T, without checking that data is JSON: its
// caller has (listwatch validates each frame with jsonscan.Valid, once, then hands the
// object's bytes here). Given bytes that are not JSON, it returns an error or a wrong
// value, never a panic. For a pointer to a type in the schema given to Register it
// skips encoding/json, whose first step would be to validate data again; anything else
// goes through json.Unmarshal.
func DecodeUnvalidated[T any](data []byte, opts Options) (T, error) {
	return decodeUnvalidated[T](registered, data, opts)
}

func decodeUnvalidated[T any](r *registry, data []byte, opts Options) (T, error) {
	if t := tableFor[T](r, opts); t != nil {
		v := reflect.New(reflect.TypeFor[T]().Elem())
		err := decodeStruct(data, v.UnsafePointer(), t)
		return v.Interface().(T), err
	}
	return unmarshalAny[T](r, data, opts)
}

// DecodeUnvalidatedAt is DecodeUnvalidated of the JSON value that starts at data[i] and
// is followed by more bytes (the object member of a watch event inside its frame): it
// also returns the index just past the value, found by the same pass that decodes it
// rather than by a scan of its own. For a type outside the schema it scans for the end,
// then decodes with json.Unmarshal.
func DecodeUnvalidatedAt[T any](data []byte, i int, opts Options) (T, int, error) {
	return decodeUnvalidatedAt[T](registered, data, i, opts)
}

func decodeUnvalidatedAt[T any](r *registry, data []byte, i int, opts Options) (T, int, error) {
	if t := tableFor[T](r, opts); t != nil {
		v := reflect.New(reflect.TypeFor[T]().Elem())
		end, err := t.decode(data, i, v.UnsafePointer())
		return v.Interface().(T), end, err
	}
	end := jsonscan.ValueEnd(data, i)
	if end < 0 {
		var zero T
		return zero, -1, errors.New("malformed JSON value")
	}
	out, err := unmarshalAny[T](r, data[i:end], opts)
	return out, end, err
}

// tableFor is the table that decodes a T without encoding/json (a pointer to a type in
// the schema), as opts ask; nil for any other T.
func tableFor[T any](r *registry, opts Options) *table {
	rt := reflect.TypeFor[T]()
	if rt.Kind() != reflect.Pointer || r == nil {
		return nil
	}
	t := r.tables[rt.Elem()]
	if t == nil && opts.Maps != nil {
		// A projection (projection.go): decoded by tables of the cache's own.
		if r = opts.Maps.projection(r, rt.Elem()); r != nil {
			t = r.tables[rt.Elem()]
		}
	}
	if t != nil && opts != (Options{}) && t.object != nil {
		t = t.variantFor(r, opts)
	}
	return t
}

// unmarshalAny decodes data into a T outside the schema with encoding/json.
func unmarshalAny[T any](r *registry, data []byte, opts Options) (T, error) {
	var out T
	err := json.Unmarshal(data, &out)
	if err == nil && opts != (Options{}) && r != nil && r.schema.ApplyOptions != nil {
		r.schema.ApplyOptions(out, opts)
	}
	return out, err
}

// variantFor is t's copy that decodes as opts say (opts is not the zero value).
func (t *table) variantFor(r *registry, opts Options) *table {
	if opts.Maps == nil {
		return t.object.dropped
	}
	return opts.Maps.variant(r, t, opts.DropManagedFields)
}

// decodeStruct decodes the JSON object data (white space around it allowed) into the
// struct at p, whose table is t.
func decodeStruct(data []byte, p unsafe.Pointer, t *table) error {
	i := jsonscan.SkipSpace(data, 0)
	if i >= len(data) {
		return errNotObject
	}
	_, err := t.decode(data, i, p)
	return err
}

var errNotObject = errors.New("expected a JSON object")

// decode is the decodeFunc of a struct with a table.
func (t *table) decode(data []byte, i int, p unsafe.Pointer) (int, error) {
	if data[i] != '{' {
		if isNull(data, i) {
			return i + 4, nil // like encoding/json: null leaves the value as it is
		}
		return -1, errNotObject
	}
	if t.head != nil {
		return t.decodeHeaded(data, i, p)
	}
	var unknown builder
	j, more := jsonscan.FirstMember(data, i)
	for more {
		name, v, err := memberName(data, j)
		if err != nil {
			return -1, err
		}
		f := t.byName[string(name)]
		if f == nil && t.unknown < 0 {
			f = t.fold(name)
		}
		var end int
		switch {
		case t.skip != "" && string(name) == t.skip:
			end = jsonscan.ValueEnd(data, v)
		case f != nil:
			if end, err = f.decode(data, v, unsafe.Add(p, f.offset)); err != nil {
				return -1, fmt.Errorf("decoding %q: %w", name, err)
			}
		case t.unknown >= 0:
			end = unknown.addValue(name, data, v)
		default:
			end = jsonscan.ValueEnd(data, v)
		}
		if end < 0 {
			return -1, fmt.Errorf("malformed value of %q", name)
		}
		if j, more = jsonscan.NextMember(data, end); j < 0 {
			return -1, fmt.Errorf("expected ',' or '}' after %q", name) // or the end of data
		}
	}
	if t.unknown >= 0 {
		*(*Members)(unsafe.Add(p, t.unknown)) = membersOf(unknown.build(t.parts))
	}
	return j, nil
}

// memberName reads the name of the member at data[j] (its opening quote) and returns it,
// unescaped, and the index of its value.
func memberName(data []byte, j int) (name []byte, v int, err error) {
	nameEnd, plain, v := jsonscan.Member(data, j)
	if v < 0 {
		return nil, -1, errors.New("malformed JSON object member")
	}
	if plain {
		return data[j+1 : nameEnd-1], v, nil
	}
	var s string
	if err := json.Unmarshal(data[j:nameEnd], &s); err != nil {
		return nil, -1, err
	}
	return []byte(s), v, nil
}

// fold finds the field whose name equals name but for case, as encoding/json would.
func (t *table) fold(name []byte) *field {
	for _, f := range t.fields {
		if bytes.EqualFold([]byte(f.name), name) {
			return f
		}
	}
	return nil
}
