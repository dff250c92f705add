package codec

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"
)

// The codec's own tests decode these types, a pod's shape in miniature, with a registry
// of their own: package object's types and schema are tested in package object.

type unknown struct{ m Members }

type testMeta struct {
	Name            string            `json:"name,omitempty"`
	Namespace       string            `json:"namespace,omitempty"`
	UID             string            `json:"uid,omitempty"`
	Labels          map[string]string `json:"labels,omitempty"`
	Annotations     map[string]string `json:"annotations,omitempty"`
	OwnerReferences []testOwner       `json:"ownerReferences,omitempty"`
	Unknown         unknown           `json:"-"`
}

type testOwner struct {
	Name       string `json:"name"`
	Controller *bool  `json:"controller,omitempty"`
}

type testPod struct {
	Kind     string     `json:"kind,omitempty"`
	Metadata testMeta   `json:"metadata"`
	Spec     testSpec   `json:"spec"`
	Status   testStatus `json:"status"`
	Unknown  unknown    `json:"-"`
}

type testSpec struct {
	NodeName string  `json:"nodeName,omitempty"`
	Unknown  unknown `json:"-"`
}

type testStatus struct {
	Phase      string          `json:"phase,omitempty"`
	Conditions []testCondition `json:"conditions,omitempty"`
	Containers []testContainer `json:"containers,omitempty"`
	Volumes    []testVolume    `json:"volumes,omitempty"`
	Unknown    unknown         `json:"-"`
}

// testVolume is headed too, with a head of another type whose text may be a
// container's.
type testVolume struct {
	head *testVolumeHead
	Path string `json:"path,omitempty"`
}

type testVolumeHead struct {
	Name    string  `json:"name"`
	Unknown unknown `json:"-"`
}

// testContainer is headed: its id is its own, the rest is its head's.
type testContainer struct {
	head *testContainerHead
	ID   string `json:"id,omitempty"`
}

type testContainerHead struct {
	Name    string  `json:"name"`
	Ready   bool    `json:"ready"`
	Unknown unknown `json:"-"`
}

type testCondition struct {
	Type               string   `json:"type"`
	LastTransitionTime testTime `json:"lastTransitionTime"`
	Unknown            unknown  `json:"-"`
}

// testTime is a Text type: parse takes the plain strings.
type testTime struct{ time.Time }

func (t *testTime) parse(s []byte) error {
	parsed, err := time.Parse(time.RFC3339, string(s))
	t.Time = parsed
	return err
}

func (t *testTime) UnmarshalJSON(b []byte) error {
	var s *string
	if err := json.Unmarshal(b, &s); err != nil || s == nil {
		return err
	}
	return t.parse([]byte(*s))
}

var testSchema = Schema{
	Types:   []reflect.Type{reflect.TypeFor[testPod]()},
	Unknown: reflect.TypeFor[unknown](),
	Direct:  []reflect.Type{reflect.TypeFor[testOwner]()},
	Headed:  []reflect.Type{reflect.TypeFor[testContainer](), reflect.TypeFor[testVolume]()},
	Text:    []TextType{Text((*testTime).parse)},
	Metadata: Metadata{
		Type:        reflect.TypeFor[testMeta](),
		Member:      "metadata",
		Droppable:   "managedFields",
		SharedMaps:  []string{"labels", "annotations"},
		NotInterned: []string{"name", "uid"},
	},
}

var testRegistry = newRegistry(&testSchema)

func decodeTest(t *testing.T, data []byte, opts Options) *testPod {
	t.Helper()
	p, err := decodeUnvalidated[*testPod](testRegistry, data, opts)
	if err != nil {
		t.Fatalf("decoding %.80s: %v", data, err)
	}
	return p
}

// realisticPod is a pod as kube-apiserver serves it, managedFields included.
func realisticPod(t testing.TB) []byte {
	data, err := os.ReadFile("testdata/pod.json")
	if err != nil {
		t.Fatal(err)
	}
	return data
}
