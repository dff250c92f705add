package object

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kinformer/kinformer/internal/codec"
	"github.com/kinformer/kinformer/internal/jsonscan"
)

// FuzzDecodeRoundTrip: whatever valid JSON decodes into a Pod (or Raw) must encode, and
// decoding that encoding must give the same value: the hand-written member scanner and
// leaf fast paths agree with encoding/json and lose nothing.
func FuzzDecodeRoundTrip(f *testing.F) {
	f.Add([]byte(deploymentJSON))
	f.Add([]byte(`{"metadata":{"name":"p","labels":{"a":"b\u00e9","c":""},"generation":-3},"spec":{"nodeName":"n\"1"},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-02T03:04:05.123Z"}]}}`))
	f.Add([]byte(`{"metadata":null,"spec":{},"status":{"conditions":null}}`))
	f.Add([]byte(`{"kind":"X","metadata":{"creationTimestamp":null,"annotations":{"k":"v"}},"data":[1,2.5e3,true,null,{"x":[]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) || !utf8.Valid(data) { // JSON text is UTF-8 (RFC 8259)
			return
		}
		check[Pod](t, data)
		check[Raw](t, data)
		check[Deployment](t, data)
		withOptions[*Pod](t, data)
		withOptions[*Raw](t, data)
	})
}

// withOptions checks that decoding with each DecodeOptions, twice (the second may find
// the first's shared maps), gives what a plain decode gives, less managedFields when
// they are dropped.
func withOptions[T interface {
	Object
	comparable
}](t *testing.T, data []byte) {
	want, err := codec.DecodeUnvalidated[T](data, DecodeOptions{})
	if err != nil || reflect.ValueOf(want).IsNil() {
		return
	}
	tab := NewMapTable()
	for _, opts := range []DecodeOptions{{DropManagedFields: true}, {Maps: tab}, {DropManagedFields: true, Maps: tab}} {
		plain, _ := codec.DecodeUnvalidated[T](data, DecodeOptions{})
		if opts.DropManagedFields {
			plain.Meta().Unknown.Delete("managedFields")
		}
		wantJSON, err := json.Marshal(plain)
		if err != nil {
			return
		}
		for range 2 {
			got, err := codec.DecodeUnvalidated[T](data, opts)
			if err != nil {
				t.Fatalf("%+v: %v where decoding without options succeeds", opts, err)
			}
			gotJSON, err := json.Marshal(got)
			if err != nil || string(gotJSON) != string(wantJSON) {
				t.Fatalf("%+v: %s (%v), want %s", opts, gotJSON, err, wantJSON)
			}
		}
	}
}

func check[T any](t *testing.T, data []byte) {
	var first T
	if err := json.Unmarshal(data, &first); err != nil {
		return
	}
	out, err := json.Marshal(&first)
	if err != nil {
		t.Fatalf("%T decoded but does not encode: %v", first, err)
	}
	var second T
	if err := json.Unmarshal(out, &second); err != nil {
		t.Fatalf("%T: its own encoding %s does not decode: %v", first, out, err)
	}
	// An empty map or list is omitted on encode (omitempty), which the API reads as absent.
	notRaw := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().Type() != reflect.TypeFor[json.RawMessage]() }, cmpopts.EquateEmpty())
	if d := cmp.Diff(first, second, semanticRaw, notRaw); d != "" {
		t.Fatalf("%T changed across a round trip (-first +second):\n%s", first, d)
	}
}

// semanticRaw compares raw JSON by meaning: encoding compacts a RawMessage's spacing.
var semanticRaw = cmp.Comparer(func(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	return cmp.Equal(x, y)
})

// FuzzDecodeMatchesEncodingJSON: the codec gives every modelled field the value
// encoding/json gives it. The reference is a twin of each type built by reflection, with
// the same fields and tags and no methods, decoded by encoding/json.
func FuzzDecodeMatchesEncodingJSON(f *testing.F) {
	f.Add([]byte(deploymentJSON))
	f.Add([]byte(leaseJSON))
	f.Add(realisticPod(1))
	f.Add(partialMetadata(2))
	f.Add([]byte(`{"metadata":{"name":"p","labels":{"a":"b\u00e9","c":""},"generation":-3,"ownerReferences":[{"name":"x","Kind":"K","controller":null}],"finalizers":[]},"spec":{"nodeName":"n\"1"},"status":{"phase":null,"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-02-30T03:04:05.123Z"}],"containerStatuses":[{"restartCount":2147483647,"ready":false}]}}`))
	f.Add([]byte(`{"metadata":{"generation":1e3}}`))
	f.Add([]byte(`{"metadata":{"labels":{"a":1}}}`))
	f.Add([]byte(`{"spec":{"replicas":null,"template":{"metadata":{"annotations":null},"spec":null},"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":0}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) || !utf8.Valid(data) || foldedOrRepeatedKeys(data) {
			return
		}
		same[Pod](t, data)
		same[Raw](t, data)
		same[Deployment](t, data)
		same[ReplicaSet](t, data)
		same[Lease](t, data)
	})
}

func same[T any](t *testing.T, data []byte) {
	typ := reflect.TypeFor[T]()
	twin := reflect.New(twinOf(typ))
	wantErr := json.Unmarshal(data, twin.Interface())
	var got T
	err := json.Unmarshal(data, &got)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%T: error %v, encoding/json's %v", got, err, wantErr)
	}
	if err != nil {
		return
	}
	if d := diffTwin(reflect.ValueOf(&got).Elem(), twin.Elem(), ""); d != "" {
		t.Fatalf("%T: %s", got, d)
	}
}

// modelledField is a JSON member a struct's field models: read from the fields and their
// json tags alone, independently of the codec, whose decoding is what is checked.
type modelledField struct {
	name  string
	index []int // path through untagged embedded structs
}

// keepsUnknown reports whether typ is one of this package's structs that keep unknown
// members, which the codec decodes.
func keepsUnknown(typ reflect.Type) bool {
	if typ.Kind() != reflect.Struct {
		return false
	}
	f, ok := typ.FieldByName("Unknown")
	return ok && f.Type == reflect.TypeFor[Unknown]() && len(f.Index) == 1 || headed(typ)
}

// headed reports whether typ keeps the members that are not its own in a head, behind
// its first field (a condition, a container, a container status): the head's fields are
// modelled members of typ.
func headed(typ reflect.Type) bool {
	if typ.Kind() != reflect.Struct || typ.NumField() == 0 {
		return false
	}
	f := typ.Field(0)
	return !f.IsExported() && f.Type.Kind() == reflect.Pointer && keepsUnknown(f.Type.Elem())
}

// modelled returns the members typ's fields model, in declaration order: untagged
// embedded structs flattened, the Unknown field and fields tagged "-" left out.
func modelled(typ reflect.Type, prefix []int) []modelledField {
	var out []modelledField
	if headed(typ) {
		out = modelled(typ.Field(0).Type.Elem(), append(slices.Clone(prefix), 0))
	}
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag, tagged := f.Tag.Lookup("json")
		name, _, _ := strings.Cut(tag, ",")
		index := append(slices.Clone(prefix), i)
		switch {
		case !f.IsExported() || tag == "-":
		case !tagged && f.Anonymous && f.Type.Kind() == reflect.Struct:
			out = append(out, modelled(f.Type, index)...)
		case name == "":
			out = append(out, modelledField{f.Name, index})
		default:
			out = append(out, modelledField{name, index})
		}
	}
	return out
}

var twins = map[reflect.Type]reflect.Type{}

// twinOf returns typ with every struct that keeps unknown members replaced by a plain
// struct of its modelled fields (flattened, tagged alike, no Unknown, no methods).
func twinOf(typ reflect.Type) reflect.Type {
	if tw, ok := twins[typ]; ok {
		return tw
	}
	switch {
	case keepsUnknown(typ):
		var fields []reflect.StructField
		for i, m := range modelled(typ, nil) {
			fields = append(fields, reflect.StructField{
				Name: fmt.Sprint("F", i),
				Type: twinOf(typ.FieldByIndex(m.index).Type),
				Tag:  reflect.StructTag(`json:"` + m.name + `"`),
			})
		}
		twins[typ] = reflect.StructOf(fields)
	case typ.Kind() == reflect.Pointer && twinOf(typ.Elem()) != typ.Elem():
		twins[typ] = reflect.PointerTo(twinOf(typ.Elem()))
	case typ.Kind() == reflect.Slice && twinOf(typ.Elem()) != typ.Elem():
		twins[typ] = reflect.SliceOf(twinOf(typ.Elem()))
	default:
		twins[typ] = typ
	}
	return twins[typ]
}

// diffTwin compares a decoded value with its twin, and describes the first difference.
func diffTwin(got, want reflect.Value, path string) string {
	switch {
	case keepsUnknown(got.Type()):
		for i, m := range modelled(got.Type(), nil) {
			field, err := got.FieldByIndexErr(m.index)
			switch {
			case err != nil: // through a nil head: as if zero
				field = reflect.Zero(got.Type().FieldByIndex(m.index).Type)
			case field.CanAddr() && !field.CanInterface(): // through the unexported head pointer
				field = reflect.NewAt(field.Type(), unsafe.Pointer(field.UnsafeAddr())).Elem()
			}
			if d := diffTwin(field, want.Field(i), path+"."+m.name); d != "" {
				return d
			}
		}
		return ""
	case got.Kind() == reflect.Pointer && got.Type() != want.Type():
		if got.IsNil() != want.IsNil() {
			return fmt.Sprintf("%s: nil %v, want %v", path, got.IsNil(), want.IsNil())
		}
		if got.IsNil() {
			return ""
		}
		return diffTwin(got.Elem(), want.Elem(), path)
	case got.Kind() == reflect.Slice && got.Type() != want.Type():
		if got.IsNil() != want.IsNil() || got.Len() != want.Len() {
			return fmt.Sprintf("%s: %d elements (nil %v), want %d (nil %v)", path, got.Len(), got.IsNil(), want.Len(), want.IsNil())
		}
		for i := range got.Len() {
			if d := diffTwin(got.Index(i), want.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(got.Interface(), want.Interface()) {
		return fmt.Sprintf("%s = %#v, want %#v", path, got.Interface(), want.Interface())
	}
	return ""
}

// modelledNames are the names of the members modelled by the structs the codec decodes,
// those that keep unknown members and owner references, reached from the fuzzed types.
var modelledNames = func() map[string]bool {
	names := map[string]bool{}
	seen := map[reflect.Type]bool{}
	var walk func(typ reflect.Type)
	walk = func(typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
		if seen[typ] || !(keepsUnknown(typ) || typ == reflect.TypeFor[OwnerReference]()) {
			return
		}
		seen[typ] = true
		for _, m := range modelled(typ, nil) {
			names[m.name] = true
			walk(typ.FieldByIndex(m.index).Type)
		}
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[Pod](), reflect.TypeFor[Raw](), reflect.TypeFor[Deployment](), reflect.TypeFor[ReplicaSet](), reflect.TypeFor[Lease]()} {
		walk(typ)
	}
	return names
}()

// foldedOrRepeatedKeys reports whether data has a member name twice in one object, or one
// that matches a modelled field's name only when case is ignored: encoding/json matches
// those case-insensitively and merges repeated maps, the codec neither.
func foldedOrRepeatedKeys(data []byte) bool {
	folded := map[string]bool{}
	for name := range modelledNames {
		folded[strings.ToLower(name)] = true
	}
	var walk func(i int) (int, bool)
	walk = func(i int) (int, bool) {
		i = jsonscan.SkipSpace(data, i)
		if i >= len(data) || (data[i] != '{' && data[i] != '[') {
			return jsonscan.ValueEnd(data, i), false
		}
		seen := map[string]bool{}
		object := data[i] == '{'
		for i = jsonscan.SkipSpace(data, i+1); i < len(data) && data[i] != '}' && data[i] != ']'; {
			if object {
				end, _ := jsonscan.String(data, i)
				var key string
				if json.Unmarshal(data[i:end], &key) != nil {
					return -1, true
				}
				if seen[key] || (folded[strings.ToLower(key)] && !modelledNames[key]) {
					return -1, true
				}
				seen[key] = true
				i = jsonscan.SkipSpace(data, end) + 1 // past the colon
			}
			end, bad := walk(i)
			if bad || end < 0 {
				return -1, true
			}
			if i = jsonscan.SkipSpace(data, end); i < len(data) && data[i] == ',' {
				i = jsonscan.SkipSpace(data, i+1)
			}
		}
		return i + 1, false
	}
	_, bad := walk(0)
	return bad
}
