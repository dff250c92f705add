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
	if _, ok := tab.projections[reflect.TypeFor[testImages]()]; !ok {
		t.Error("no projection registry in the table: decoded by encoding/json")
	}
	type noMeta struct{ Kind string }
	if r := tab.projection(testRegistry, reflect.TypeFor[noMeta]()); r != nil {
		t.Error("a type without metadata made a projection")
	}
}
