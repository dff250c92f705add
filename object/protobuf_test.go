package object_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/internal/codec"
	"github.com/kinformer/kinformer/internal/kubeproto"
	"github.com/kinformer/kinformer/internal/protowire"
	"github.com/kinformer/kinformer/internal/testrig/modelled"
	. "github.com/kinformer/kinformer/object"
)

// The golden files of testdata/protobuf are objects as kube-apiserver's own serializers
// write them (k8s.io/api, bench/clientgo/cmd/pbgolden): each NAME.pb is NAME.json in
// protobuf. Decoded from either, an object must hold the same modelled fields; decoded
// from protobuf and encoded again, it must be the bytes it came from, every field this
// engine does not model included.

func TestProtobufGoldenObjects(t *testing.T) {
	files, err := filepath.Glob("testdata/protobuf/*.pb")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	kinds := map[string]bool{}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".pb")
		if name == "watch" || name == "podlist" || strings.HasPrefix(name, "status-") {
			continue // not one object: listwatch's and kubeproto's tests read them
		}
		pb, js := readFile(t, file), readFile(t, strings.TrimSuffix(file, ".pb")+".json")
		env, err := kubeproto.ParseEnvelope(pb)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		kinds[env.Kind] = true
		t.Run(name, func(t *testing.T) {
			switch env.Kind {
			case "Pod":
				checkGolden[Pod](t, env, js)
			case "Lease":
				checkGolden[Lease](t, env, js)
			case "ReplicaSet":
				checkGolden[ReplicaSet](t, env, js)
			case "Deployment":
				checkGolden[Deployment](t, env, js)
			default: // the model has no type of its own for it: its metadata, and the rest kept
				checkGolden[Raw](t, env, js)
			}
		})
	}
	for _, k := range []string{"Pod", "Lease", "Node", "Event", "Secret", "ConfigMap"} {
		if !kinds[k] {
			t.Errorf("no golden %s", k)
		}
	}
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func checkGolden[T any, P interface {
	*T
	Object
}](t *testing.T, env kubeproto.Envelope, js []byte) {
	for _, opts := range []DecodeOptions{{}, {DropManagedFields: true}, {DropManagedFields: true, Maps: NewMapTable()}} {
		fromPB, err := codec.DecodeProtobuf[P](env.Raw, opts)
		if err != nil {
			t.Fatalf("decoding protobuf: %v", err)
		}
		codec.SetTypeMeta(fromPB, env.APIVersion, env.Kind)
		fromJSON, err := codec.DecodeUnvalidated[P](js, opts)
		if err != nil {
			t.Fatalf("decoding JSON: %v", err)
		}
		if diff := cmp.Diff(modelled.Of(fromJSON), modelled.Of(fromPB)); diff != "" {
			t.Errorf("with %+v, the modelled fields decoded from protobuf differ from JSON's (-json +protobuf):\n%s", opts, diff)
		}
		if opts.DropManagedFields {
			fields, _ := fromPB.Meta().Unknown.Protobuf()
			for len(fields) > 0 {
				num, _, n := protowire.ConsumeField(fields)
				if num == 17 {
					t.Errorf("with %+v, managedFields (field 17) are kept", opts)
				}
				fields = fields[n:]
			}
			continue
		}
		out, err := codec.MarshalProtobufValue(fromPB)
		if err != nil {
			t.Fatalf("encoding protobuf: %v", err)
		}
		if !bytes.Equal(out, env.Raw) {
			t.Errorf("encoded again, the protobuf differs from what was decoded:\n got %q\nwant %q", out, env.Raw)
		}
	}
}

// TestProtobufModelIsComplete lists which types decode from protobuf, and why the
// others do not: a change that makes one of them lossy or undecodable shows here.
func TestProtobufModelIsComplete(t *testing.T) {
	for name, err := range map[string]error{
		"Pod": codec.ProtobufError[*Pod](), "ReplicaSet": codec.ProtobufError[*ReplicaSet](),
		"Deployment": codec.ProtobufError[*Deployment](), "Lease": codec.ProtobufError[*Lease](),
		"Raw": codec.ProtobufError[*Raw](),
	} {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// An object read in protobuf is copied as one read in JSON is: DeepCopy does not go
// through JSON, which cannot carry its unknown fields.
func TestDeepCopyOfAProtobufObject(t *testing.T) {
	env, err := kubeproto.ParseEnvelope(readFile(t, "testdata/protobuf/deployment-rolling.pb"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := codec.DecodeProtobuf[*Deployment](env.Raw, DecodeOptions{Maps: NewMapTable()})
	if err != nil {
		t.Fatal(err)
	}
	cp := DeepCopy(d)
	if !cmp.Equal(cp, d) {
		t.Fatalf("the copy differs:\n%s", cmp.Diff(d, cp))
	}
	cp.Labels["app"] = "changed"
	cp.Spec.Template.Spec.Containers[0] = NewContainer("other", "other:1")
	*cp.Spec.Replicas = 99
	if d.Labels["app"] == "changed" || d.Spec.Template.Spec.Containers[0].Name() == "other" || *d.Spec.Replicas == 99 {
		t.Errorf("changing the copy changed the original")
	}
	if a, b := mustMarshalProtobuf(t, d), mustMarshalProtobuf(t, DeepCopy(d)); !bytes.Equal(a, b) {
		t.Errorf("the copy encodes to other bytes")
	}
}

func mustMarshalProtobuf(t *testing.T, v any) []byte {
	t.Helper()
	b, err := MarshalProtobuf(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// managedFields of an object read in protobuf are field 17 of its metadata, which
// DeleteProtobufField removes (Delete finds members by name, which fields have not).
func TestDeleteProtobufField(t *testing.T) {
	env, err := kubeproto.ParseEnvelope(readFile(t, "testdata/protobuf/pod-full.pb"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := codec.DecodeProtobuf[*Pod](env.Raw, DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := p.Meta().Unknown.Len()
	if _, ok := p.Meta().Unknown.ProtobufField(ManagedFieldsNumber); !ok {
		t.Fatal("the golden pod has no managedFields")
	}
	cp := DeepCopy(p)
	p.Meta().Unknown.DeleteProtobufField(ManagedFieldsNumber)
	if _, ok := p.Meta().Unknown.ProtobufField(ManagedFieldsNumber); ok || p.Meta().Unknown.Len() >= before {
		t.Errorf("managedFields kept: %v", p.Meta().Unknown)
	}
	if _, ok := cp.Meta().Unknown.ProtobufField(ManagedFieldsNumber); !ok {
		t.Errorf("deleting from one object changed its copy")
	}
	if _, ok := p.Meta().Unknown.Protobuf(); !ok {
		t.Errorf("the other fields are no longer protobuf")
	}
}

// DeepCopy copies the model's shared parts, and leaves what other packages point to
// alone: a time's location stays the same location.
func TestDeepCopyKeepsATimesLocation(t *testing.T) {
	zone := time.FixedZone("somewhere", 9*3600)
	m := MicroTime{time.Date(2026, 11, 28, 12, 0, 0, 0, zone)}
	cp := DeepCopy(&Lease{Spec: LeaseSpec{RenewTime: &m}})
	if got := cp.Spec.RenewTime.Location(); got != zone || !cp.Spec.RenewTime.Equal(m.Time) || cp.Spec.RenewTime == &m {
		t.Errorf("the copy's time is %v in %v (a new pointer: %v)", cp.Spec.RenewTime, got, cp.Spec.RenewTime != &m)
	}
}
