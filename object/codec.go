package object

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/kinformer/kinformer/internal/jsonscan"
)

// Unknown holds the JSON members of an object that this package does not model, keyed by
// member name, with their values kept byte for byte. Every struct that mirrors a part of a
// Kubernetes object carries one, so that decoding and encoding again loses nothing: fields
// added in later API versions, managedFields, a pod spec's volumes and probes.
type Unknown map[string]json.RawMessage

// fieldTable describes how a struct maps to JSON members: built once per type when the
// package loads, read-only afterwards.
type fieldTable struct {
	byName map[string]*fieldInfo
	fields []*fieldInfo // in declaration order
}

type fieldInfo struct {
	name  string
	index []int // path through untagged embedded structs
	omit  bool  // omitempty or omitzero
}

// keeper is implemented by this package's types that keep unknown members: a nested
// value of such a type is decoded directly, without encoding/json validating and
// skipping over its bytes once more.
type keeper interface{ decodeKeep(data []byte) error }

func tableOf[T any]() *fieldTable {
	t := &fieldTable{byName: map[string]*fieldInfo{}}
	t.add(reflect.TypeFor[T](), nil)
	return t
}

func (t *fieldTable) add(typ reflect.Type, prefix []int) {
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		name, omit, skip := jsonTag(f)
		if skip {
			continue
		}
		index := append(slices.Clone(prefix), i)
		if name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct {
			t.add(f.Type, index) // untagged embedded struct (TypeMeta): flattened
			continue
		}
		if name == "" {
			name = f.Name
		}
		fi := &fieldInfo{name: name, index: index, omit: omit}
		t.byName[name] = fi
		t.fields = append(t.fields, fi)
	}
}

// decodeKeeping decodes the JSON object data into the struct v points to and puts every
// member no field claims into *unknown (each value copied, so nothing retains data).
//
// data must be valid JSON: encoding/json validates a document before it calls any
// UnmarshalJSON, and nested values reach here as parts of that document.
func decodeKeeping(data []byte, v any, unknown *Unknown, table *fieldTable) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil // like encoding/json: null leaves the value as it is
	}
	rv := reflect.ValueOf(v).Elem()
	var extra Unknown
	err := eachMember(data, func(key string, value []byte) error {
		fi, ok := table.byName[key]
		if !ok {
			if extra == nil {
				extra = Unknown{}
			}
			extra[key] = bytes.Clone(value)
			return nil
		}
		target := rv.FieldByIndex(fi.index).Addr().Interface()
		if k, ok := target.(keeper); ok {
			return k.decodeKeep(value)
		}
		if decodeLeaf(value, target) {
			return nil
		}
		if err := json.Unmarshal(value, target); err != nil {
			return fmt.Errorf("decoding %q: %w", key, err)
		}
		return nil
	})
	*unknown = extra
	return err
}

// decodeLeaf decodes the common leaf shapes (plain strings, integers, booleans, string
// maps) without encoding/json's reflection, and reports whether it did. Anything unusual
// (escapes, null, floats) is left to encoding/json.
func decodeLeaf(value []byte, target any) bool {
	switch t := target.(type) {
	case *string:
		s, ok := plainString(value)
		if ok {
			*t = s
		}
		return ok
	case *int64:
		n, ok := plainInt(value)
		if ok {
			*t = n
		}
		return ok
	case *int32:
		n, ok := plainInt(value)
		if ok && n == int64(int32(n)) {
			*t = int32(n)
			return true
		}
		return false
	case *bool:
		switch string(value) {
		case "true":
			*t = true
			return true
		case "false":
			*t = false
			return true
		}
	case *map[string]string:
		m := make(map[string]string)
		err := eachMember(value, func(k string, v []byte) error {
			s, ok := plainString(v)
			if !ok {
				return errNotPlain
			}
			m[k] = s
			return nil
		})
		if err == nil {
			*t = m
			return true
		}
	}
	return false
}

var errNotPlain = fmt.Errorf("not a plain value")

// plainString unquotes a JSON string without escapes.
func plainString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' || bytes.IndexByte(v, '\\') >= 0 {
		return "", false
	}
	return string(v[1 : len(v)-1]), true
}

// plainInt parses a JSON integer that fits an int64.
func plainInt(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	neg := v[0] == '-'
	if neg {
		v = v[1:]
	}
	if len(v) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// eachMember calls fn for every member of the JSON object data, with the member's value
// as a sub-slice of data. It assumes valid JSON and checks only the shape it relies on.
func eachMember(data []byte, fn func(key string, value []byte) error) error {
	i := jsonscan.SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return fmt.Errorf("expected a JSON object")
	}
	i = jsonscan.SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return nil
	}
	for i < len(data) {
		end := jsonscan.StringEnd(data, i)
		if end < 0 {
			return fmt.Errorf("malformed JSON object key")
		}
		key, err := memberName(data[i:end])
		if err != nil {
			return err
		}
		i = jsonscan.SkipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return fmt.Errorf("expected ':' after key %q", key)
		}
		i = jsonscan.SkipSpace(data, i+1)
		vend := jsonscan.ValueEnd(data, i)
		if vend < 0 {
			return fmt.Errorf("malformed value of %q", key)
		}
		if err := fn(key, data[i:vend]); err != nil {
			return err
		}
		i = jsonscan.SkipSpace(data, vend)
		if i < len(data) && data[i] == ',' {
			i = jsonscan.SkipSpace(data, i+1)
			continue
		}
		if i < len(data) && data[i] == '}' {
			return nil
		}
		return fmt.Errorf("expected ',' or '}' after %q", key)
	}
	return fmt.Errorf("unterminated JSON object")
}

// memberName unquotes a key; keys without escapes (all of Kubernetes') need no decoder.
func memberName(quoted []byte) (string, error) {
	if bytes.IndexByte(quoted, '\\') < 0 {
		return string(quoted[1 : len(quoted)-1]), nil
	}
	var s string
	err := json.Unmarshal(quoted, &s)
	return s, err
}

// encodeKeeping is the inverse of decodeKeeping: the struct's fields, then the unknown
// members it carried. Object keys come out sorted, which JSON does not give meaning to.
func encodeKeeping(v any, unknown Unknown, table *fieldTable) ([]byte, error) {
	rv := reflect.ValueOf(v).Elem()
	members := make(map[string]json.RawMessage, len(unknown)+len(table.fields))
	for k, val := range unknown {
		members[k] = val
	}
	for _, fi := range table.fields {
		fv := rv.FieldByIndex(fi.index)
		if fi.omit && isEmpty(fv) {
			delete(members, fi.name)
			continue
		}
		b, err := json.Marshal(fv.Addr().Interface())
		if err != nil {
			return nil, fmt.Errorf("encoding %q: %w", fi.name, err)
		}
		members[fi.name] = b
	}
	return marshalMembers(members), nil
}

// marshalMembers writes members as one JSON object, sorted by key, without re-indenting
// or re-escaping the raw values.
func marshalMembers(members map[string]json.RawMessage) []byte {
	keys := make([]string, 0, len(members))
	size := 2
	for k, v := range members {
		keys = append(keys, k)
		size += len(k) + len(v) + 4
	}
	slices.Sort(keys)
	var buf bytes.Buffer
	buf.Grow(size)
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(members[k])
	}
	buf.WriteByte('}')
	return buf.Bytes()
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

type zeroer interface{ IsZero() bool }

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
