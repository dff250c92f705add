package object

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/internal/codec"
	"github.com/kinformer/kinformer/internal/testrig/memtest"
)

// decodedWithout decodes in into a T with DropManagedFields, and into a T without it from
// which managedFields is then deleted: both documents, encoded again, must be the same.
func decodedWithout[T interface {
	comparable
	Object
}](t *testing.T, in string) (dropped, deleted map[string]any) {
	t.Helper()
	a, err := codec.DecodeUnvalidated[T]([]byte(in), DecodeOptions{DropManagedFields: true})
	if err != nil {
		t.Fatalf("decoding with DropManagedFields: %v", err)
	}
	b, err := codec.DecodeUnvalidated[T]([]byte(in), DecodeOptions{})
	if err != nil {
		t.Fatalf("decoding: %v", err)
	}
	if b.Meta().Unknown.Get("managedFields") == nil {
		t.Fatalf("decoding lost managedFields")
	}
	b.Meta().Unknown.Delete("managedFields")
	return generic(t, a), generic(t, b)
}

func generic(t *testing.T, v any) map[string]any {
	t.Helper()
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestDecodeDropManagedFields(t *testing.T) {
	const pod = `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"n",
	  "managedFields":[{"manager":"kubelet","fieldsV1":{"f:status":{}}}],"selfLink":"/x","futureMeta":[1]},
	  "spec":{"nodeName":"a","volumes":[]},"status":{"phase":"Running"}}`
	const raw = `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"managedFields":[],"name":"c"},"data":{"k":"v"}}`
	// managedFields last, and a later member named like it in another struct: only the
	// top-level metadata's goes.
	const rs = `{"kind":"ReplicaSet","metadata":{"name":"r","managedFields":{"odd":"shape"}},
	  "spec":{"replicas":1,"template":{"metadata":{"labels":{"a":"b"},"managedFields":[2]}}},
	  "status":{"replicas":1}}`
	cases := []struct {
		name string
		run  func(t *testing.T) (dropped, deleted map[string]any)
	}{
		{"pod", func(t *testing.T) (map[string]any, map[string]any) { return decodedWithout[*Pod](t, pod) }},
		{"raw", func(t *testing.T) (map[string]any, map[string]any) { return decodedWithout[*Raw](t, raw) }},
		{"deployment", func(t *testing.T) (map[string]any, map[string]any) {
			return decodedWithout[*Deployment](t, deploymentJSON)
		}},
		{"replicaset", func(t *testing.T) (map[string]any, map[string]any) { return decodedWithout[*ReplicaSet](t, rs) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dropped, deleted := c.run(t)
			if d := cmp.Diff(deleted, dropped); d != "" {
				t.Errorf("dropping while decoding differs from deleting after (-deleted +dropped):\n%s", d)
			}
			if _, ok := dropped["metadata"].(map[string]any)["managedFields"]; ok {
				t.Errorf("managedFields kept: %v", dropped["metadata"])
			}
		})
	}
}

// A type without a table of its own goes through encoding/json; the option still holds.
func TestDecodeDropManagedFieldsFallback(t *testing.T) {
	got, err := codec.DecodeUnvalidated[*wrapped]([]byte(`{"metadata":{"name":"w","managedFields":[1],"x":2},"data":{"a":"b"}}`),
		DecodeOptions{DropManagedFields: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Metadata.Unknown.Get("managedFields") != nil || string(got.Metadata.Unknown.Get("x")) != "2" || got.Data["a"] != "b" {
		t.Errorf("got %+v", got)
	}
}

// wrapped is an object type of another package's kind: no table, its metadata a field.
type wrapped struct {
	Metadata ObjectMeta        `json:"metadata"`
	Data     map[string]string `json:"data"`
}

func (w *wrapped) Meta() *ObjectMeta { return &w.Metadata }

func TestDecodeShareMaps(t *testing.T) {
	pod := func(name, labels string) []byte {
		return []byte(`{"kind":"Pod","metadata":{"name":"` + name + `","labels":` + labels + `,"annotations":{"a":"1"}},"spec":{},"status":{}}`)
	}
	share := DecodeOptions{Maps: NewMapTable()}
	decode := func(data []byte, opts DecodeOptions) *Pod {
		t.Helper()
		p, err := codec.DecodeUnvalidated[*Pod](data, opts)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	const web = `{"app":"web","pod-template-hash":"5d9c"}`
	a, b := decode(pod("a", web), share), decode(pod("b", web), share)
	if !memtest.SameMap(a.Labels, b.Labels) || !memtest.SameMap(a.Annotations, b.Annotations) {
		t.Error("equal label texts decoded with ShareMaps are not one map")
	}
	if plain := decode(pod("c", web), DecodeOptions{}); memtest.SameMap(plain.Labels, a.Labels) {
		t.Error("a decode without a map table got a shared map")
	}
	if other := decode(pod("d", web), DecodeOptions{Maps: NewMapTable()}); memtest.SameMap(other.Labels, a.Labels) {
		t.Error("a decode with another map table got this table's map: tables must not share")
	}
	// Share finds what the decoder stored, and the other way round: one table, one hash.
	if got := share.Maps.Share(map[string]string{"pod-template-hash": "5d9c", "app": "web"}); !memtest.SameMap(got, a.Labels) {
		t.Error("Share did not find the map a decode stored for the same pairs")
	}
	built := share.Maps.Share(map[string]string{"app": "cache", "tier": "back"})
	if got := decode(pod("e", `{"tier":"back","app":"cache"}`), share).Labels; !memtest.SameMap(got, built) {
		t.Error("a decode did not find the map Share stored for the same pairs, in another order")
	}
	// shared: the text says the same pairs as web (escapes are decoded), so it gets the
	// shared map; any other text must not.
	cases := []struct {
		name, labels string
		want         map[string]string
		shared       bool
	}{
		{"other values", `{"app":"db","pod-template-hash":"5d9c"}`, map[string]string{"app": "db", "pod-template-hash": "5d9c"}, false},
		{"a subset", `{"app":"web"}`, map[string]string{"app": "web"}, false},
		{"escapes", `{"app":"w\u0065b","pod-template-hash":"5d9c"}`, map[string]string{"app": "web", "pod-template-hash": "5d9c"}, true},
		{"escapes that differ", `{"app":"w\u0066b","pod-template-hash":"5d9c"}`, map[string]string{"app": "wfb", "pod-template-hash": "5d9c"}, false},
		{"a repeated key", `{"app":"web","app":"web","pod-template-hash":"5d9c"}`, map[string]string{"app": "web", "pod-template-hash": "5d9c"}, false},
		{"empty", `{}`, map[string]string{}, false},
		{"null", `null`, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := decode(pod("x", c.labels), share).Labels
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("labels (-want +got):\n%s", d)
			}
			if same := len(c.want) > 0 && memtest.SameMap(got, a.Labels); same != c.shared {
				t.Errorf("shares the map of %s: %v, want %v", web, same, c.shared)
			}
			again := decode(pod("y", c.labels), share).Labels
			if d := cmp.Diff(c.want, again); d != "" {
				t.Errorf("labels decoded again (-want +got):\n%s", d)
			}
		})
	}
}

// A pod condition's reason and message stay raw, and read back through its methods.
func TestPodConditionReasonAndMessage(t *testing.T) {
	var p Pod
	text := `{"status":{"conditions":[{"type":"Ready","status":"False","reason":"ContainersNotReady","message":"containers with unready status: [web]"},{"type":"PodScheduled","status":"True"}]}}`
	if err := json.Unmarshal([]byte(text), &p); err != nil {
		t.Fatal(err)
	}
	type row struct{ Type, Reason, Message string }
	var got []row
	for _, c := range p.Status.Conditions {
		got = append(got, row{c.Type(), c.Reason(), c.Message()})
	}
	want := []row{{"Ready", "ContainersNotReady", "containers with unready status: [web]"}, {"PodScheduled", "", ""}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("conditions (-want +got):\n%s", d)
	}
}

// The owner references of the pods of one ReplicaSet are one slice in a cache; another
// owner's are not, and a decode without the cache's table gets a slice of its own.
func TestDecodeSharesOwnerReferences(t *testing.T) {
	pod := func(name, owner string) []byte {
		return []byte(`{"metadata":{"name":"` + name + `","ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"` +
			owner + `","uid":"u-` + owner + `","controller":true,"blockOwnerDeletion":true}]}}`)
	}
	share := DecodeOptions{Maps: NewMapTable()}
	decode := func(data []byte, opts DecodeOptions) []OwnerReference {
		t.Helper()
		p, err := codec.DecodeUnvalidated[*Pod](data, opts)
		if err != nil {
			t.Fatal(err)
		}
		return p.OwnerReferences
	}
	same := func(a, b []OwnerReference) bool { return len(a) > 0 && &a[0] == &b[0] }
	a, b := decode(pod("a", "web"), share), decode(pod("b", "web"), share)
	if !same(a, b) {
		t.Error("the same owner references decoded with one table are two slices")
	}
	if other := decode(pod("c", "db"), share); same(other, a) || other[0].Name != "db" {
		t.Errorf("another owner got the shared slice: %+v", other)
	}
	if plain := decode(pod("d", "web"), DecodeOptions{}); same(plain, a) {
		t.Error("a decode without a table got the table's slice")
	}
	want := []OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "u-web", Controller: ptr(true), BlockOwnerDeletion: ptr(true)}}
	if d := cmp.Diff(want, b); d != "" {
		t.Errorf("owner references (-want +got):\n%s", d)
	}
}

func ptr[T any](v T) *T { return &v }

// reflect.DeepEqual never calls different unknown members equal: it compares an
// Unknown by identity (two objects of one cache that share a part are equal), and
// Unknown.Equal, which go-cmp calls, compares what the members say.
func TestDeepEqualNeverHidesAChange(t *testing.T) {
	decode := func(text string, opts DecodeOptions) *Pod {
		t.Helper()
		p, err := codec.DecodeUnvalidated[*Pod]([]byte(text), opts)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	const pod = `{"metadata":{"name":"a"},"spec":{"containers":[{"name":"x","zzz":"%s","env":[{"name":"LONG_ENOUGH_TO_BE_A_SHARED_PART","value":"yes, more than 64 bytes"}]}]}}`
	a, b := decode(fmt.Sprintf(pod, "qwerty1"), DecodeOptions{}), decode(fmt.Sprintf(pod, "qwerty2"), DecodeOptions{})
	if reflect.DeepEqual(a, b) || cmp.Equal(a, b) {
		t.Error("pods whose containers differ in an unknown member compare equal")
	}
	share := DecodeOptions{Maps: NewMapTable()}
	var same []*Pod
	for range 3 { // a part is shared from its second sighting
		same = append(same, decode(fmt.Sprintf(pod, "qwerty1"), share))
	}
	if !reflect.DeepEqual(same[1].Spec.Containers, same[2].Spec.Containers) || !cmp.Equal(a, same[0]) {
		t.Error("equal containers compare different: shared ones under DeepEqual, or any under cmp")
	}
}
