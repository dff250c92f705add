package codec

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testImages is a projection of testPod: its metadata and its conditions' types.
type testImages struct {
	Metadata testMeta `json:"metadata"`
	Status   struct {
		Conditions []struct {
			Type string `json:"type"`
		} `json:"conditions"`
	} `json:"status"`
}

// A projection is decoded by tables the cache's MapTable builds for it once, and holds
// what its fields name; a type without the metadata member is no projection.
func TestProjectionIsDecodedByTables(t *testing.T) {
	data := []byte(`{"kind":"Pod","metadata":{"name":"a","labels":{"app":"web"},"managedFields":[{}]},` +
		`"spec":{"nodeName":"n1"},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"},{"type":"Initialized"}]}}`)
	tab := NewMapTable()
	got, err := decodeUnvalidated[*testImages](testRegistry, data, Options{Maps: tab, DropManagedFields: true})
	if err != nil {
		t.Fatal(err)
	}
	want := &testImages{Metadata: testMeta{Name: "a", Labels: map[string]string{"app": "web"}}}
	want.Status.Conditions = []struct {
		Type string `json:"type"`
	}{{"Ready"}, {"Initialized"}}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(unknown{}), cmp.Comparer(func(a, b Members) bool { return a.Equal(b) })); d != "" {
		t.Errorf("decoded (-want +got):\n%s", d)
	}
	if r, ok := tab.projections.Load(reflect.TypeFor[testImages]()); !ok || r.(*registry) == nil {
		t.Error("no projection registry in the table: decoded by encoding/json")
	}
	type noMeta struct{ Kind string }
	if r := tab.projection(testRegistry, reflect.TypeFor[noMeta]()); r != nil {
		t.Error("a type without metadata made a projection")
	}
}

// defaulted has an UnmarshalJSON of its own, which a projection's decoder must call.
type defaulted struct{ V string }

func (d *defaulted) UnmarshalJSON(b []byte) error {
	d.V = "default"
	if string(b) != `""` {
		d.V = string(b)
	}
	return nil
}

type Inner struct{ Type string }

// Types the tables would decode otherwise than encoding/json are no projection (decoded
// by encoding/json) or keep their own decoders: a field with an UnmarshalJSON of its own,
// an embedded pointer, two fields of one member.
func TestProjectionLeavesWhatTablesWouldDecodeOtherwise(t *testing.T) {
	tab := NewMapTable()
	type withOwn struct {
		Metadata testMeta  `json:"metadata"`
		Kind     defaulted `json:"kind"`
	}
	got, err := decodeUnvalidated[*withOwn](testRegistry, []byte(`{"kind":"","metadata":{"name":"a"}}`), Options{Maps: tab})
	if err != nil || got.Kind.V != "default" || got.Metadata.Name != "a" {
		t.Errorf("a field with its own UnmarshalJSON: %+v, %v", got, err)
	}
	type embedsPointer struct {
		Metadata testMeta `json:"metadata"`
		*Inner
	}
	type twoOfOne struct {
		Metadata testMeta `json:"metadata"`
		A        string   `json:"kind"`
		B        string   `json:"Kind"`
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[embedsPointer](), reflect.TypeFor[twoOfOne]()} {
		if r := tab.projection(testRegistry, typ); r != nil {
			t.Errorf("%v made a projection", typ)
		}
	}
	got2, err := decodeUnvalidated[*embedsPointer](testRegistry, []byte(`{"metadata":{"name":"b"},"Type":"x"}`), Options{Maps: tab})
	if err != nil || got2.Inner == nil || got2.Type != "x" {
		t.Errorf("an embedded pointer, decoded by encoding/json: %+v, %v", got2, err)
	}
}
