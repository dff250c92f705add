package object

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Unknown holds the JSON members of an object that this package does not model, keyed by
// member name, with their values kept byte for byte. Every struct that mirrors a part of a
// Kubernetes object carries one, so that decoding and encoding again loses nothing: fields
// added in later API versions, managedFields, a pod spec's volumes and probes.
type Unknown map[string]json.RawMessage

// decodeKeeping decodes the JSON object data into the fields of the struct pointed to by
// known (using their json tags) and puts every member no field claims into *unknown.
//
// It decodes field by field instead of calling json.Unmarshal on the whole struct so that
// it works on types whose own UnmarshalJSON calls it (no recursion) and sees which members
// were claimed.
func decodeKeeping(data []byte, known any, unknown *Unknown) error {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		return err
	}
	if members == nil { // JSON null: leave the value as it is, like encoding/json.
		return nil
	}
	if err := decodeFields(reflect.ValueOf(known).Elem(), members); err != nil {
		return err
	}
	if len(members) == 0 {
		members = nil
	}
	*unknown = members
	return nil
}

func decodeFields(v reflect.Value, members map[string]json.RawMessage) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, skip := jsonTag(f)
		if skip {
			continue
		}
		if name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct {
			// An untagged embedded struct (TypeMeta) is flattened, as encoding/json does.
			if err := decodeFields(v.Field(i), members); err != nil {
				return err
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		raw, ok := members[name]
		if !ok {
			continue
		}
		if err := json.Unmarshal(raw, v.Field(i).Addr().Interface()); err != nil {
			return fmt.Errorf("decoding %q: %w", name, err)
		}
		delete(members, name)
	}
	return nil
}

// encodeKeeping is the inverse of decodeKeeping: the struct's fields, then the unknown
// members it carried. Object keys come out sorted, which JSON does not give meaning to.
func encodeKeeping(known any, unknown Unknown) ([]byte, error) {
	members := make(map[string]json.RawMessage, len(unknown)+8)
	for k, v := range unknown {
		members[k] = v
	}
	if err := encodeFields(reflect.ValueOf(known).Elem(), members); err != nil {
		return nil, err
	}
	return marshalMembers(members)
}

func encodeFields(v reflect.Value, members map[string]json.RawMessage) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, omit, skip := jsonTag(f)
		if skip {
			continue
		}
		fv := v.Field(i)
		if name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct {
			if err := encodeFields(fv, members); err != nil {
				return err
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		if omit && isEmpty(fv) {
			delete(members, name)
			continue
		}
		b, err := json.Marshal(fv.Addr().Interface())
		if err != nil {
			return fmt.Errorf("encoding %q: %w", name, err)
		}
		members[name] = b
	}
	return nil
}

// marshalMembers writes members as one JSON object without re-indenting or re-escaping the
// raw values (json.Marshal of a map of RawMessage would compact each one again).
func marshalMembers(members map[string]json.RawMessage) ([]byte, error) {
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
	return buf.Bytes(), nil
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
