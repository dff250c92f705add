package object

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/internal/codec"
)

// podImages is an embedder's projection of a pod: its metadata and its containers'
// names and images, nothing else.
type podImages struct {
	Metadata ObjectMeta `json:"metadata"`
	Spec     struct {
		Containers []struct {
			Name  string `json:"name"`
			Image string `json:"image"`
		} `json:"containers"`
	} `json:"spec"`
}

func (p *podImages) Meta() *ObjectMeta { return &p.Metadata }

// A projection decodes through the cache's table as encoding/json decodes it, and its
// decoder skips what it does not hold.
func TestProjectionDecodesAsEncodingJSON(t *testing.T) {
	pod, err := os.ReadFile("testdata/pod.json")
	if err != nil {
		t.Skip("no testdata/pod.json")
	}
	var want podImages
	if err := json.Unmarshal(pod, &want); err != nil {
		t.Fatal(err)
	}
	want.Metadata.Unknown.Delete("managedFields")
	tab := NewMapTable()
	for range 2 { // the second decode finds the projection's registry built
		got, err := codec.DecodeUnvalidated[*podImages](pod, DecodeOptions{DropManagedFields: true, Maps: tab})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(&want, got, cmp.Comparer(func(a, b Unknown) bool { return a.Equal(b) })); d != "" {
			t.Errorf("the projection (-encoding/json +codec):\n%s", d)
		}
		if len(got.Spec.Containers) == 0 || got.Spec.Containers[0].Image == "" {
			t.Errorf("no container image decoded: %+v", got.Spec)
		}
	}
	if codec.Lossless(reflect.TypeFor[podImages]()) {
		t.Error("a projection that leaves members out is called lossless")
	}
	if !codec.Lossless(reflect.TypeFor[Pod]()) || !codec.Lossless(reflect.TypeFor[*Raw]()) {
		t.Error("the model's own types are lossless")
	}
}

// A projection that embeds ObjectMeta is refused with the reason; the model's types,
// which embed it with JSON methods of their own, and a projection that holds it in a
// field pass.
func TestCheckProjection(t *testing.T) {
	for name, tc := range map[string]struct {
		err  error
		want string
	}{
		"embeds ObjectMeta":   {CheckProjection[*embedsMeta](), "embeds object.ObjectMeta"},
		"embeds *ObjectMeta":  {CheckProjection[*embedsMetaPointer](), "embeds object.ObjectMeta"},
		"ObjectMeta itself":   {CheckProjection[*ObjectMeta](), "not an object"},
		"metadata one deeper": {CheckProjection[*metaDeeper](), "has no field Metadata"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", name, tc.err, tc.want)
		}
	}
	for name, err := range map[string]error{"Pod": CheckProjection[*Pod](), "Raw": CheckProjection[*Raw](), "podImages": CheckProjection[*podImages]()} {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

type embedsMetaPointer struct {
	*ObjectMeta `json:"metadata"`
}

type metaDeeper struct {
	Outer struct {
		ObjectMeta `json:"metadata"`
	} `json:"outer"`
}

func (m *metaDeeper) Meta() *ObjectMeta { return &m.Outer.ObjectMeta }

type embedsMeta struct {
	ObjectMeta `json:"metadata"`
}

// deploymentShape projects a Deployment onto the model's own parts (DeploymentSpec, with
// its IntOrString) and a Lease's spec (MicroTimes): each keeps its own decoder.
type deploymentShape struct {
	Metadata ObjectMeta     `json:"metadata"`
	Spec     DeploymentSpec `json:"spec"`
	Lease    *LeaseSpec     `json:"lease,omitempty"`
}

func (d *deploymentShape) Meta() *ObjectMeta { return &d.Metadata }

func TestProjectionKeepsTheModelsDecoders(t *testing.T) {
	data := []byte(`{"metadata":{"name":"d"},"spec":{"replicas":3,"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":1}}},` +
		`"lease":{"holderIdentity":"me","renewTime":"2026-11-27T10:00:00.123456Z"}}`)
	var want deploymentShape
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	got, err := codec.DecodeUnvalidated[*deploymentShape](data, DecodeOptions{Maps: NewMapTable()})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(&want, got, cmp.Comparer(func(a, b Unknown) bool { return a.Equal(b) })); d != "" {
		t.Errorf("(-encoding/json +codec):\n%s", d)
	}
	if got.Spec.Strategy.RollingUpdate == nil || got.Spec.Strategy.RollingUpdate.MaxSurge.String() != "25%" || got.Lease == nil || got.Lease.RenewTime == nil {
		t.Errorf("decoded %+v", got)
	}
}
