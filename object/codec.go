package object

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"unsafe"

	"github.com/kinformer/kinformer/internal/jsonscan"
)

// The decoder: one pass over an object's bytes, without encoding/json. Each struct that
// keeps unknown members (and OwnerReference) has a fieldTable, built by reflection when
// the package loads; every field in it has a decodeFunc that writes the field in place
// through its offset. A member no field claims is scanned once, and packed as it goes
// (pack.go), into the struct's Unknown. Only unusual values (escaped strings, floats
// where an integer is wanted, types this file does not know) go to encoding/json, whose
// results and errors this decoder matches.
//
// Everything an object keeps is a copy of what it needs (or an interned string shared
// with other objects): no part of the input is retained.

// fieldTable describes how a struct maps to JSON members: built once per type when the
// package loads, read-only afterwards.
type fieldTable struct {
	byName map[string]*fieldInfo
	fields []*fieldInfo // in declaration order
	// unknown is the offset of the struct's Unknown field, or -1 when it has none: then
	// members no field claims are dropped, after a case-insensitive match (as
	// encoding/json does).
	unknown int
	// skip names a member dropped unread: managedFields, in the ObjectMeta table of a
	// variant for DropManagedFields.
	skip string
	// object says the table is an object's (a "metadata" member decoded as ObjectMeta):
	// DecodeOptions apply to it. dropped is then its copy that skips managedFields.
	object  bool
	dropped *fieldTable
}

type fieldInfo struct {
	name   string
	index  []int   // path through untagged embedded structs
	offset uintptr // of the field in the outermost struct
	omit   bool    // omitempty or omitzero
	decode decodeFunc
}

// decodeFunc decodes the JSON value at data[i] (its first byte, not white space) into the
// value p points to, and returns the index just past the value.
type decodeFunc func(data []byte, i int, p unsafe.Pointer) (int, error)

// keeper is implemented by this package's types that keep unknown members: a nested
// value of such a type is decoded directly, without encoding/json validating and
// skipping over its bytes once more.
type keeper interface{ decodeKeep(data []byte) error }

var (
	// tables holds every type's table, built during package initialization only.
	tables = map[reflect.Type]*fieldTable{}

	unknownType     = reflect.TypeFor[Unknown]()
	objectMetaType  = reflect.TypeFor[ObjectMeta]()
	timeType        = reflect.TypeFor[Time]()
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	stringMapType   = reflect.TypeFor[map[string]string]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

	// tabledWithoutUnknown are decoded by a table although they keep no unknown members:
	// structs of plain fields on the hot path.
	tabledWithoutUnknown = map[reflect.Type]bool{reflect.TypeFor[OwnerReference](): true}

	// notInterned are string fields unique to each object: looking them up in the intern
	// table would only push out strings that are shared.
	notInterned = map[reflect.Type][]string{
		reflect.TypeFor[ObjectMeta](): {"name", "uid", "resourceVersion"},
	}
)

func tableOf[T any]() *fieldTable { return tableFor(reflect.TypeFor[T]()) }

func tableFor(typ reflect.Type) *fieldTable {
	if t, ok := tables[typ]; ok {
		return t
	}
	t := &fieldTable{byName: map[string]*fieldInfo{}, unknown: -1}
	tables[typ] = t // first: a field's type may lead back to this one
	t.add(typ, typ, nil, 0)
	t.buildVariants(typ)
	return t
}

// buildVariants marks an object's table as such and makes its copy for
// DropManagedFields; tables of anything else are left alone. (Copies that share maps
// are made per MapTable, on first use: see MapTable.variant.)
func (t *fieldTable) buildVariants(typ reflect.Type) {
	meta := t.byName["metadata"]
	if meta == nil || len(meta.index) != 1 || typ.Field(meta.index[0]).Type != objectMetaType {
		return
	}
	t.object = true
	t.dropped = t.withMeta(metaTable(true, nil))
}

// metaTable returns a copy of ObjectMeta's table that skips managedFields (drop) and
// decodes labels and annotations with maps (when not nil).
func metaTable(drop bool, maps decodeFunc) *fieldTable {
	m := *tables[objectMetaType]
	m.object, m.dropped = false, nil
	m.byName = cloneMap(m.byName)
	if drop {
		m.skip = "managedFields"
	}
	if maps != nil {
		for _, name := range []string{"labels", "annotations"} {
			f := *m.byName[name]
			f.decode = maps
			m.byName[name] = &f
		}
	}
	return &m
}

// withMeta returns a copy of t, an object's table, whose metadata member is decoded by
// meta; the copy shares everything else with t.
func (t *fieldTable) withMeta(meta *fieldTable) *fieldTable {
	v := *t
	v.object, v.dropped = false, nil
	v.byName = cloneMap(t.byName)
	f := *t.byName["metadata"]
	f.decode = meta.decode
	v.byName["metadata"] = &f
	return &v
}

func cloneMap(m map[string]*fieldInfo) map[string]*fieldInfo { return maps.Clone(m) }

// hasTable reports whether values of typ are decoded by a fieldTable.
func hasTable(typ reflect.Type) bool {
	if typ.Kind() != reflect.Struct {
		return false
	}
	if tabledWithoutUnknown[typ] {
		return true
	}
	f, ok := typ.FieldByName("Unknown")
	return ok && f.Type == unknownType && len(f.Index) == 1
}

func (t *fieldTable) add(outer, typ reflect.Type, prefix []int, base uintptr) {
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if prefix == nil && f.Name == "Unknown" && f.Type == unknownType {
			t.unknown = int(f.Offset)
			continue
		}
		name, omit, skip := jsonTag(f)
		if skip {
			continue
		}
		index := append(slices.Clone(prefix), i)
		if name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct {
			t.add(outer, f.Type, index, base+f.Offset) // untagged embedded struct (TypeMeta): flattened
			continue
		}
		if name == "" {
			name = f.Name
		}
		intern := !slices.Contains(notInterned[outer], name)
		fi := &fieldInfo{name: name, index: index, offset: base + f.Offset, omit: omit}
		t.byName[name] = fi
		t.fields = append(t.fields, fi)
		fi.decode = decoderFor(f.Type, intern)
	}
}

// decoderFor returns the decodeFunc for values of typ. intern says whether short strings
// are interned.
func decoderFor(typ reflect.Type, intern bool) decodeFunc {
	switch {
	case typ == timeType:
		return decodeTime
	case typ == rawMessageType:
		return decodeRawMessage
	case typ == stringMapType:
		return decodeStringMap
	case hasTable(typ):
		return tableFor(typ).decode
	case reflect.PointerTo(typ).Implements(unmarshalerType):
		return decodeUnmarshaler(typ)
	}
	switch typ.Kind() {
	case reflect.String:
		return decodeString(typ, intern)
	case reflect.Int64, reflect.Int32:
		return decodeInt(typ)
	case reflect.Bool:
		return decodeBool(typ)
	case reflect.Pointer:
		return decodePointer(typ, decoderFor(typ.Elem(), intern))
	case reflect.Slice:
		return decodeSlice(typ, decoderFor(typ.Elem(), intern))
	}
	return decodeFallback(typ)
}

// decodeKeeping decodes the JSON object data into the struct v points to, whose table is
// table, and keeps every member no field claims in its Unknown.
//
// data must be valid JSON: encoding/json validates a document before it calls any
// UnmarshalJSON, and DecodeValid's callers have validated theirs. Invalid input gives an
// error or a wrong value, never a panic.
func decodeKeeping(data []byte, v any, table *fieldTable) error {
	i := skipSpace(data, 0)
	if i >= len(data) {
		return errNotObject
	}
	_, err := table.decode(data, i, reflect.ValueOf(v).UnsafePointer())
	return err
}

var errNotObject = errors.New("expected a JSON object")

// decode is the decodeFunc of a struct with a table.
func (t *fieldTable) decode(data []byte, i int, p unsafe.Pointer) (int, error) {
	if data[i] != '{' {
		if isNull(data, i) {
			return i + 4, nil // like encoding/json: null leaves the value as it is
		}
		return -1, errNotObject
	}
	var unknown unknownBuilder
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return t.done(p, &unknown, i+1), nil
	}
	for i < len(data) {
		end, plain := stringEnd(data, i)
		if end < 0 {
			return -1, errors.New("malformed JSON object key")
		}
		key := data[i+1 : end-1]
		if !plain {
			var s string
			if err := json.Unmarshal(data[i:end], &s); err != nil {
				return -1, err
			}
			key = []byte(s)
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return -1, fmt.Errorf("expected ':' after key %q", key)
		}
		if i = skipSpace(data, i+1); i >= len(data) {
			return -1, fmt.Errorf("missing value of %q", key)
		}
		fi := t.byName[string(key)]
		if fi == nil && t.unknown < 0 {
			fi = t.fold(key)
		}
		switch {
		case t.skip != "" && string(key) == t.skip:
			if i = skipValue(data, i); i < 0 {
				return -1, fmt.Errorf("malformed value of %q", key)
			}
		case fi != nil:
			end, err := fi.decode(data, i, unsafe.Add(p, fi.offset))
			if err != nil {
				return -1, fmt.Errorf("decoding %q: %w", key, err)
			}
			i = end
		default:
			var end int
			if t.unknown >= 0 {
				end = unknown.addValue(key, data, i)
			} else {
				end = skipValue(data, i)
			}
			if end < 0 {
				return -1, fmt.Errorf("malformed value of %q", key)
			}
			i = end
		}
		i = skipSpace(data, i)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
			continue
		}
		if i < len(data) && data[i] == '}' {
			return t.done(p, &unknown, i+1), nil
		}
		return -1, fmt.Errorf("expected ',' or '}' after %q", key)
	}
	return -1, errors.New("unterminated JSON object")
}

// done stores the unknown members (copied) and returns end.
func (t *fieldTable) done(p unsafe.Pointer, unknown *unknownBuilder, end int) int {
	if t.unknown >= 0 {
		(*Unknown)(unsafe.Add(p, t.unknown)).b = unknown.build()
	}
	return end
}

// fold finds the field whose name equals key but for case, as encoding/json would.
func (t *fieldTable) fold(key []byte) *fieldInfo {
	for _, fi := range t.fields {
		if bytes.EqualFold([]byte(fi.name), key) {
			return fi
		}
	}
	return nil
}

func decodeString(typ reflect.Type, intern bool) decodeFunc {
	fallback := decodeFallback(typ)
	return func(data []byte, i int, p unsafe.Pointer) (int, error) {
		if data[i] == '"' {
			if end, plain := stringEnd(data, i); plain {
				if intern {
					*(*string)(p) = internString(data[i+1 : end-1])
				} else {
					*(*string)(p) = string(data[i+1 : end-1])
				}
				return end, nil
			}
		}
		return fallback(data, i, p)
	}
}

func decodeInt(typ reflect.Type) decodeFunc {
	fallback := decodeFallback(typ)
	bits := typ.Bits()
	return func(data []byte, i int, p unsafe.Pointer) (int, error) {
		j := i
		if j < len(data) && data[j] == '-' {
			j++
		}
		digits := j
		var n int64
		for j < len(data) && data[j] >= '0' && data[j] <= '9' {
			n = n*10 + int64(data[j]-'0')
			j++
		}
		if j == digits || j-digits > 18 || (j < len(data) && !endsScalar(data[j])) {
			return fallback(data, i, p) // not a plain integer (or too long to add up safely)
		}
		if data[i] == '-' {
			n = -n
		}
		if bits == 32 {
			if n != int64(int32(n)) {
				return fallback(data, i, p)
			}
			*(*int32)(p) = int32(n)
		} else {
			*(*int64)(p) = n
		}
		return j, nil
	}
}

func decodeBool(typ reflect.Type) decodeFunc {
	fallback := decodeFallback(typ)
	return func(data []byte, i int, p unsafe.Pointer) (int, error) {
		switch {
		case literalAt(data, i, "true"):
			*(*bool)(p) = true
			return i + 4, nil
		case literalAt(data, i, "false"):
			*(*bool)(p) = false
			return i + 5, nil
		}
		return fallback(data, i, p)
	}
}

// decodePointer allocates a new value for a pointer field; null makes it nil.
func decodePointer(typ reflect.Type, elem decodeFunc) decodeFunc {
	elemType := typ.Elem()
	return func(data []byte, i int, p unsafe.Pointer) (int, error) {
		if isNull(data, i) {
			*(*unsafe.Pointer)(p) = nil
			return i + 4, nil
		}
		v := reflect.New(elemType).UnsafePointer()
		end, err := elem(data, i, v)
		if err != nil {
			return -1, err
		}
		*(*unsafe.Pointer)(p) = v
		return end, nil
	}
}

// decodeSlice counts the elements first, so that the slice is allocated at its size.
func decodeSlice(typ reflect.Type, elem decodeFunc) decodeFunc {
	fallback := decodeFallback(typ)
	size := typ.Elem().Size()
	return func(data []byte, i int, p unsafe.Pointer) (int, error) {
		if data[i] != '[' {
			if isNull(data, i) {
				reflect.NewAt(typ, p).Elem().SetZero()
				return i + 4, nil
			}
			return fallback(data, i, p)
		}
		n := 0
		for j := skipSpace(data, i+1); j < len(data) && data[j] != ']'; n++ {
			end := skipValue(data, j)
			if end <= j {
				return -1, errors.New("malformed JSON array")
			}
			j = end
			if j = skipSpace(data, j); j < len(data) && data[j] == ',' {
				j = skipSpace(data, j+1)
			}
		}
		s := reflect.MakeSlice(typ, n, n)
		reflect.NewAt(typ, p).Elem().Set(s)
		base := s.UnsafePointer()
		j := skipSpace(data, i+1)
		for k := range n {
			if j >= len(data) {
				return -1, errors.New("malformed JSON array")
			}
			end, err := elem(data, j, unsafe.Add(base, uintptr(k)*size))
			if err != nil {
				return -1, err
			}
			if j = skipSpace(data, end); j < len(data) && data[j] == ',' {
				j = skipSpace(data, j+1)
			}
		}
		if j >= len(data) || data[j] != ']' {
			return -1, errors.New("malformed JSON array")
		}
		return j + 1, nil
	}
}

// decodeStringMap decodes labels and annotations: the map is made at its size, its keys
// and short values interned. A value that is not a string goes to encoding/json.
func decodeStringMap(data []byte, i int, p unsafe.Pointer) (int, error) {
	m := (*map[string]string)(p)
	if data[i] != '{' {
		if isNull(data, i) {
			*m = nil
			return i + 4, nil
		}
		return decodeStringMapFallback(data, i, p)
	}
	var pairs [16][2]string
	kvs := pairs[:0]
	j := skipSpace(data, i+1)
	for j < len(data) && data[j] != '}' {
		key, end, ok := mapString(data, j)
		if !ok {
			return decodeStringMapFallback(data, i, p)
		}
		if j = skipSpace(data, end); j >= len(data) || data[j] != ':' {
			return -1, errors.New("malformed JSON object")
		}
		value, end, ok := mapString(data, skipSpace(data, j+1))
		if !ok {
			return decodeStringMapFallback(data, i, p)
		}
		kvs = append(kvs, [2]string{key, value})
		if j = skipSpace(data, end); j < len(data) && data[j] == ',' {
			j = skipSpace(data, j+1)
		}
	}
	if j >= len(data) {
		return -1, errors.New("unterminated JSON object")
	}
	*m = make(map[string]string, len(kvs))
	for _, kv := range kvs {
		(*m)[kv[0]] = kv[1]
	}
	return j + 1, nil
}

// mapString decodes the string at data[j], interned unless it has escapes, and returns
// the index past it; ok is false if there is no string there.
func mapString(data []byte, j int) (s string, end int, ok bool) {
	end, plain := stringEnd(data, j)
	switch {
	case end < 0:
		return "", -1, false
	case plain:
		return internString(data[j+1 : end-1]), end, true
	}
	err := json.Unmarshal(data[j:end], &s)
	return s, end, err == nil
}

func decodeStringMapFallback(data []byte, i int, p unsafe.Pointer) (int, error) {
	*(*map[string]string)(p) = nil // a new map, as the fast path makes
	return decodeFallback(stringMapType)(data, i, p)
}

func decodeTime(data []byte, i int, p unsafe.Pointer) (int, error) {
	t := (*Time)(p)
	if data[i] == '"' {
		if end, plain := stringEnd(data, i); plain {
			return end, t.parse(data[i+1 : end-1])
		}
	}
	end := skipValue(data, i)
	if end < 0 {
		return -1, errors.New("malformed JSON value")
	}
	return end, t.UnmarshalJSON(data[i:end])
}

// decodeRawMessage keeps a copy of the value (null included, as encoding/json does).
func decodeRawMessage(data []byte, i int, p unsafe.Pointer) (int, error) {
	end := skipValue(data, i)
	if end < 0 {
		return -1, errors.New("malformed JSON value")
	}
	*(*json.RawMessage)(p) = bytes.Clone(data[i:end])
	return end, nil
}

// decodeUnmarshaler hands the value to the type's own UnmarshalJSON.
func decodeUnmarshaler(typ reflect.Type) decodeFunc {
	return func(data []byte, i int, p unsafe.Pointer) (int, error) {
		end := skipValue(data, i)
		if end < 0 {
			return -1, errors.New("malformed JSON value")
		}
		return end, reflect.NewAt(typ, p).Interface().(json.Unmarshaler).UnmarshalJSON(data[i:end])
	}
}

// decodeFallback decodes the value with encoding/json: for what the fast paths do not
// take, so that results and errors are encoding/json's.
func decodeFallback(typ reflect.Type) decodeFunc {
	return func(data []byte, i int, p unsafe.Pointer) (int, error) {
		end := skipValue(data, i)
		if end < 0 {
			return -1, errors.New("malformed JSON value")
		}
		return end, json.Unmarshal(data[i:end], reflect.NewAt(typ, p).Interface())
	}
}

func skipSpace(data []byte, i int) int { return jsonscan.SkipSpace(data, i) }

// stringEnd returns the index just past the string starting at data[i], or -1, and
// whether the string has no escapes (its bytes are its value).
func stringEnd(data []byte, i int) (int, bool) {
	if i >= len(data) || data[i] != '"' {
		return -1, false
	}
	return scanString(data, i)
}

func isNull(data []byte, i int) bool { return literalAt(data, i, "null") }

// literalAt reports whether the literal lit (true, false, null) is at data[i].
func literalAt(data []byte, i int, lit string) bool {
	end := i + len(lit)
	return end <= len(data) && string(data[i:end]) == lit && (end == len(data) || endsScalar(data[end]))
}

func endsScalar(c byte) bool { return c == ',' || c == '}' || c == ']' || jsonscan.IsSpace(c) }

// encodeKeeping is the inverse of decodeKeeping: the struct's fields, then the unknown
// members it carried. Object keys come out sorted, which JSON does not give meaning to.
func encodeKeeping(v any, table *fieldTable) ([]byte, error) {
	rv := reflect.ValueOf(v).Elem()
	type entry struct {
		name    string
		value   []byte // a field's encoding
		unknown member // or an unknown member, written unpacked
	}
	var unknown Unknown
	if table.unknown >= 0 {
		unknown = *(*Unknown)(unsafe.Add(rv.Addr().UnsafePointer(), table.unknown))
	}
	entries := make([]entry, 0, len(table.fields)+8)
	size := 2
	for m := range unknown.members() {
		name := m.nameString()
		if table.byName[name] != nil {
			continue // a field of that name wins, or is omitted
		}
		entries = append(entries, entry{name: name, unknown: m})
		size += len(name) + 2*len(m.value) + 4
	}
	for _, fi := range table.fields {
		fv := rv.FieldByIndex(fi.index)
		if fi.omit && isEmpty(fv) {
			continue
		}
		b, err := json.Marshal(fv.Addr().Interface())
		if err != nil {
			return nil, fmt.Errorf("encoding %q: %w", fi.name, err)
		}
		entries = append(entries, entry{name: fi.name, value: b})
		size += len(fi.name) + len(b) + 4
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	var buf bytes.Buffer
	buf.Grow(size)
	buf.WriteByte('{')
	for i, e := range entries {
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
