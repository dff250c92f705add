package codec

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/internal/protowire"
	"github.com/kinformer/kinformer/internal/testrig/pbmsg"
)

// The protobuf decoder's own tests: types_test.go's pod in miniature again, with pb tags,
// decoded by a registry of its own from messages built here field by field. What they
// check is protobuf's rules (the Protocol Buffers encoding spec; k8s.io/api's generated
// code follows them): malformed input is an error and never a panic or a wrong object,
// the last of a non-repeated field wins, every occurrence of a repeated field counts,
// and what no Go field claims is kept and written back.

type pbMeta struct {
	Name            string            `json:"name,omitempty" pb:"1"`
	Namespace       string            `json:"namespace,omitempty" pb:"3"`
	UID             string            `json:"uid,omitempty" pb:"5"`
	Generation      int64             `json:"generation,omitempty" pb:"7"`
	Labels          map[string]string `json:"labels,omitempty" pb:"11"`
	Annotations     map[string]string `json:"annotations,omitempty" pb:"12"`
	OwnerReferences []pbOwner         `json:"ownerReferences,omitempty" pb:"13"`
	Finalizers      []string          `json:"finalizers,omitempty" pb:"14"`
	Unknown         unknown           `json:"-"`
}

// pbOwner keeps no unknown fields (Direct, as object.OwnerReference).
type pbOwner struct {
	Kind       string `json:"kind" pb:"1"`
	Name       string `json:"name" pb:"3"`
	Controller *bool  `json:"controller,omitempty" pb:"6"`
}

type pbPod struct {
	Kind     string   `json:"kind,omitempty" pb:"-"`
	Metadata pbMeta   `json:"metadata" pb:"1"`
	Spec     pbSpec   `json:"spec" pb:"2"`
	Status   pbStatus `json:"status" pb:"3"`
	Unknown  unknown  `json:"-"`
}

type pbSpec struct {
	Replicas int32      `json:"replicas,omitempty" pb:"1"`
	Paused   bool       `json:"paused,omitempty" pb:"4"`
	Priority *int32     `json:"priority,omitempty" pb:"5"`
	Template pbTemplate `json:"template" pb:"6"`
	State    *pbState   `json:"state,omitempty" pb:"7"`
	Started  pbStamp    `json:"started" pb:"8"`
	NodeName string     `json:"nodeName,omitempty" pb:"10"`
	Unknown  unknown    `json:"-"`
}

// pbTemplate holds metadata further down, which Options leave alone.
type pbTemplate struct {
	Metadata pbMeta  `json:"metadata" pb:"1"`
	Unknown  unknown `json:"-"`
}

type pbState struct {
	Reason  string  `json:"reason,omitempty" pb:"1"`
	Message string  `json:"message,omitempty" pb:"2"`
	Unknown unknown `json:"-"`
}

type pbStatus struct {
	Phase      string        `json:"phase,omitempty" pb:"1"`
	Conditions []pbCondition `json:"conditions,omitempty" pb:"2"`
	Containers []pbContainer `json:"containers,omitempty" pb:"8"`
	Volumes    []pbVolume    `json:"volumes,omitempty" pb:"9"`
	Unknown    unknown       `json:"-"`
}

type pbCondition struct {
	Type    string  `json:"type" pb:"1"`
	Status  string  `json:"status" pb:"2"`
	At      pbStamp `json:"at" pb:"4"`
	Unknown unknown `json:"-"`
}

// pbContainer is headed: its id is its own, the rest its head's.
type pbContainer struct {
	head *pbContainerHead
	ID   string `json:"id,omitempty" pb:"8"`
}

type pbContainerHead struct {
	Name    string  `json:"name" pb:"1"`
	Ready   bool    `json:"ready" pb:"4"`
	Unknown unknown `json:"-"`
}

// pbVolume is headed too, by a head of another type whose fields may be a container
// head's, byte for byte.
type pbVolume struct {
	head *pbVolumeHead
	Path string `json:"path,omitempty" pb:"2"`
}

type pbVolumeHead struct {
	Name    string  `json:"name" pb:"1"`
	Unknown unknown `json:"-"`
}

// pbStamp is a message type (Schema.Messages), read and written by functions of its
// own as object.Time is: seconds (1) and nanos (2), varints; the zero stamp is an empty
// message.
type pbStamp struct {
	Sec   int64
	Nanos int32
}

func decodePBStamp(v *pbStamp, msg []byte) error {
	*v = pbStamp{}
	for len(msg) > 0 {
		num, wire, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return protowire.Error(n)
		}
		if wire != protowire.Varint {
			return fmt.Errorf("stamp field %d has wire type %d", num, wire)
		}
		x, m := protowire.ConsumeVarint(msg[n:])
		if m < 0 {
			return protowire.Error(m)
		}
		switch num {
		case 1:
			v.Sec = int64(x)
		case 2:
			v.Nanos = int32(int64(x))
		}
		msg = msg[n+m:]
	}
	if v.Nanos < 0 || v.Nanos > 999999999 {
		return errors.New("stamp nanos out of range")
	}
	return nil
}

func samePBStamp(v *pbStamp, msg []byte) bool {
	var x pbStamp
	return decodePBStamp(&x, msg) == nil && x == *v
}

func encodePBStamp(v *pbStamp, dst []byte) []byte {
	if *v == (pbStamp{}) {
		return dst
	}
	dst = protowire.AppendTag(dst, 1, protowire.Varint)
	dst = protowire.AppendVarint(dst, uint64(v.Sec))
	dst = protowire.AppendTag(dst, 2, protowire.Varint)
	return protowire.AppendVarint(dst, uint64(int64(v.Nanos)))
}

var pbSchema = Schema{
	Types:    []reflect.Type{reflect.TypeFor[pbPod]()},
	Unknown:  reflect.TypeFor[unknown](),
	Direct:   []reflect.Type{reflect.TypeFor[pbOwner]()},
	Headed:   []reflect.Type{reflect.TypeFor[pbContainer](), reflect.TypeFor[pbVolume]()},
	Messages: []MessageType{Message(decodePBStamp, encodePBStamp, samePBStamp)},
	Metadata: Metadata{
		Type:            reflect.TypeFor[pbMeta](),
		Member:          "metadata",
		Droppable:       "managedFields",
		DroppableNumber: 17,
		SharedMaps:      []string{"labels", "annotations"},
		SharedLists:     []string{"ownerReferences"},
		NotInterned:     []string{"name", "uid"},
	},
}

var pbRegistry = newRegistry(&pbSchema)

// pbCmp compares the test types: heads by what they point to, Members with Equal.
var pbCmp = cmp.AllowUnexported(unknown{}, pbContainer{}, pbVolume{})

func decodePB(msg []byte, opts Options) (p *pbPod, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("PANIC: %v", r)
		}
	}()
	return decodeProtobuf[*pbPod](pbRegistry, msg, opts, recallUse)
}

func mustDecodePB(t *testing.T, msg []byte, opts Options) *pbPod {
	t.Helper()
	p, err := decodePB(msg, opts)
	if err != nil {
		t.Fatalf("decoding %x with %+v: %v", msg, opts, err)
	}
	return p
}

func encodePB[T any](v *T) ([]byte, error) {
	return pbRegistry.ptableFor(reflect.TypeFor[T]()).encode(nil, unsafe.Pointer(v))
}

func mustEncodePB(t *testing.T, p *pbPod) []byte {
	t.Helper()
	b, err := encodePB(p)
	if err != nil {
		t.Fatalf("encoding: %v", err)
	}
	return b
}

// allOptions are the ways an object is decoded; each with a table of its own.
func allOptions() []Options {
	return []Options{{}, {DropManagedFields: true}, {Maps: NewMapTable()}, {DropManagedFields: true, Maps: NewMapTable()}}
}

// fieldsOfMsg splits a message into its fields, tag and value each.
func fieldsOfMsg(t *testing.T, msg []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for len(msg) > 0 {
		_, _, n := protowire.ConsumeField(msg)
		if n < 0 {
			t.Fatalf("malformed test message: %v", protowire.Error(n))
		}
		out = append(out, msg[:n])
		msg = msg[n:]
	}
	return out
}

// A pod as this engine's encoder writes it: fields in number order, every field that is
// not a pointer, a slice or a map written even when empty, unknown fields of every wire
// type among the known ones.

func canonicalMeta() []byte {
	return pbmsg.Cat(
		pbmsg.Str(1, "web-1"), pbmsg.Str(3, "shop"),
		pbmsg.Str(4, "unknown-between-known"),
		pbmsg.Str(5, "uid-1"), pbmsg.Var(7, 3),
		pbmsg.Entry(11, "app", "web"), pbmsg.Entry(11, "tier", "front"),
		pbmsg.Entry(12, "note", ""),
		pbmsg.Msg(13, pbmsg.Str(1, "ReplicaSet"), pbmsg.Str(3, "web-7d9f"), pbmsg.Var(6, 1)),
		pbmsg.Msg(13, pbmsg.Str(1, "Node"), pbmsg.Str(3, "node-3")),
		pbmsg.Str(14, "f1"), pbmsg.Str(14, "f2"),
		pbmsg.Msg(17, pbmsg.Str(1, "kubectl")), pbmsg.Msg(17, pbmsg.Str(1, "kubelet")), // managedFields
		pbmsg.Var(30, 9),
	)
}

func canonicalSpec() []byte {
	return pbmsg.Cat(
		pbmsg.Var(1, 3), pbmsg.Var(4, 1), pbmsg.Var(5, 7),
		pbmsg.Msg(6, pbmsg.Msg(1, pbmsg.Str(1, "tpl"), pbmsg.Str(3, ""), pbmsg.Str(5, ""), pbmsg.Var(7, 0), pbmsg.Msg(17, pbmsg.Str(1, "template-manager")))),
		pbmsg.Msg(7, pbmsg.Str(1, "Waiting"), pbmsg.Str(2, "")),
		pbmsg.Msg(8, pbmsg.Var(1, 1700000000), pbmsg.Var(2, 5)),
		pbmsg.Str(10, "node-3"),
		pbmsg.Fixed64(11, 0x0102030405060708),
		pbmsg.Fixed32(12, 0x0a0b0c0d),
	)
}

func canonicalStatus() []byte {
	return pbmsg.Cat(
		pbmsg.Str(1, "Running"),
		pbmsg.Msg(2, pbmsg.Str(1, "Ready"), pbmsg.Str(2, "True"), pbmsg.Str(3, "probe"), pbmsg.Msg(4, pbmsg.Var(1, 1700000001), pbmsg.Var(2, 0))),
		pbmsg.Msg(2, pbmsg.Str(1, "Scheduled"), pbmsg.Str(2, "True"), pbmsg.Msg(4)),
		pbmsg.Msg(8, pbmsg.Str(1, "web"), pbmsg.Var(4, 1), pbmsg.Str(5, "nginx:1.27"), pbmsg.Str(8, "c-1")),
		pbmsg.Msg(8, pbmsg.Str(1, "sidecar"), pbmsg.Var(4, 0), pbmsg.Str(8, "c-2")),
		pbmsg.Msg(9, pbmsg.Str(1, "data"), pbmsg.Str(2, "/data"), pbmsg.Var(3, 1)),
	)
}

func canonicalTop() [][]byte {
	return [][]byte{
		pbmsg.Msg(1, canonicalMeta()),
		pbmsg.Msg(2, canonicalSpec()),
		pbmsg.Msg(3, canonicalStatus()),
		pbmsg.Var(4, 1<<40),
		pbmsg.Fixed64(5, 0xfedcba9876543210),
		pbmsg.Fixed32(6, 0xdeadbeef),
		pbmsg.Str(7, "tail"),
	}
}

func canonicalPod() []byte { return pbmsg.Cat(canonicalTop()...) }

func TestProtobufTestSchema(t *testing.T) {
	if _, err := ptableOf[*pbPod](pbRegistry, Options{}); err != nil {
		t.Fatalf("the test pod has no protobuf table: %v", err)
	}
	// testPod (types_test.go) has no pb tags: no protobuf table, and an error that says so.
	_, err := decodeProtobuf[*testPod](testRegistry, canonicalPod(), Options{}, recallUse)
	if err == nil || !strings.Contains(err.Error(), "pb tag") {
		t.Errorf("decoding a type without pb tags: %v, want an error naming the missing pb tag", err)
	}
	if _, err := decodeProtobuf[*pbStamp](pbRegistry, nil, Options{}, recallUse); err == nil {
		t.Errorf("decoding a type that is not one of the schema's succeeded")
	}
}

// Every modelled field, read where it is; the unknown fields kept where they were.
func TestProtobufDecodesEveryField(t *testing.T) {
	for _, opts := range allOptions() {
		p := mustDecodePB(t, canonicalPod(), opts)
		m := p.Metadata
		tru := true
		want := pbMeta{
			Name: "web-1", Namespace: "shop", UID: "uid-1", Generation: 3,
			Labels:          map[string]string{"app": "web", "tier": "front"},
			Annotations:     map[string]string{"note": ""},
			OwnerReferences: []pbOwner{{Kind: "ReplicaSet", Name: "web-7d9f", Controller: &tru}, {Kind: "Node", Name: "node-3"}},
			Finalizers:      []string{"f1", "f2"},
		}
		m.Unknown = unknown{}
		if d := cmp.Diff(want, m, pbCmp); d != "" {
			t.Errorf("%+v: metadata (-want +got):\n%s", opts, d)
		}
		wantUnknown := pbmsg.Cat(pbmsg.Str(4, "unknown-between-known"), pbmsg.Msg(17, pbmsg.Str(1, "kubectl")), pbmsg.Msg(17, pbmsg.Str(1, "kubelet")), pbmsg.Var(30, 9))
		if opts.DropManagedFields {
			wantUnknown = pbmsg.Cat(pbmsg.Str(4, "unknown-between-known"), pbmsg.Var(30, 9))
		}
		if got, ok := p.Metadata.Unknown.m.Protobuf(); !ok || !bytes.Equal(got, wantUnknown) {
			t.Errorf("%+v: metadata's unknown fields %x (protobuf: %v), want %x", opts, got, ok, wantUnknown)
		}
		s := p.Spec
		if s.Replicas != 3 || !s.Paused || s.Priority == nil || *s.Priority != 7 || s.NodeName != "node-3" ||
			s.State == nil || s.State.Reason != "Waiting" || s.Started != (pbStamp{1700000000, 5}) || s.Template.Metadata.Name != "tpl" {
			t.Errorf("%+v: spec %+v", opts, s)
		}
		if got, _ := s.Template.Metadata.Unknown.m.Protobuf(); !bytes.Equal(got, pbmsg.Msg(17, pbmsg.Str(1, "template-manager"))) {
			t.Errorf("%+v: the template's metadata kept %x, want its managedFields, whatever the options", opts, got)
		}
		if got, _ := s.Unknown.m.Protobuf(); !bytes.Equal(got, pbmsg.Cat(pbmsg.Fixed64(11, 0x0102030405060708), pbmsg.Fixed32(12, 0x0a0b0c0d))) {
			t.Errorf("%+v: spec's unknown fields %x", opts, got)
		}
		st := p.Status
		if st.Phase != "Running" || len(st.Conditions) != 2 || st.Conditions[0].Type != "Ready" || st.Conditions[0].At.Sec != 1700000001 ||
			st.Conditions[1].Type != "Scheduled" || st.Conditions[1].At != (pbStamp{}) {
			t.Errorf("%+v: status %+v", opts, st)
		}
		if len(st.Containers) != 2 || st.Containers[0].ID != "c-1" || st.Containers[0].head.Name != "web" || !st.Containers[0].head.Ready ||
			st.Containers[1].ID != "c-2" || st.Containers[1].head.Name != "sidecar" || st.Containers[1].head.Ready {
			t.Errorf("%+v: containers %+v", opts, st.Containers)
		}
		if got, _ := st.Containers[0].head.Unknown.m.Protobuf(); !bytes.Equal(got, pbmsg.Str(5, "nginx:1.27")) {
			t.Errorf("%+v: the container head's unknown fields %x", opts, got)
		}
		if len(st.Volumes) != 1 || st.Volumes[0].Path != "/data" || st.Volumes[0].head.Name != "data" {
			t.Errorf("%+v: volumes %+v", opts, st.Volumes)
		}
		wantTop := pbmsg.Cat(pbmsg.Var(4, 1<<40), pbmsg.Fixed64(5, 0xfedcba9876543210), pbmsg.Fixed32(6, 0xdeadbeef), pbmsg.Str(7, "tail"))
		if got, _ := p.Unknown.m.Protobuf(); !bytes.Equal(got, wantTop) {
			t.Errorf("%+v: the pod's unknown fields %x, want %x", opts, got, wantTop)
		}
	}
}

// Decoded and encoded again, a message in canonical form is the same bytes: unknown
// fields of every wire type in their places among the known ones.
func TestProtobufRoundTripsByteForByte(t *testing.T) {
	in := canonicalPod()
	out := mustEncodePB(t, mustDecodePB(t, in, Options{}))
	if !bytes.Equal(out, in) {
		t.Errorf("encoded again:\n got %x\nwant %x", out, in)
	}
	p := mustDecodePB(t, in, Options{Maps: NewMapTable()})
	if out := mustEncodePB(t, p); !bytes.Equal(out, in) {
		t.Errorf("decoded with a table, encoded again:\n got %x\nwant %x", out, in)
	}
}

// Unknown fields out of number order come back in number order, by field, the
// occurrences of one number in the order they came.
func TestProtobufUnknownFieldsSortedStably(t *testing.T) {
	in := pbmsg.Cat(
		pbmsg.Str(20, "a"), pbmsg.Var(19, 1), pbmsg.Msg(1, pbmsg.Str(1, "n")), pbmsg.Str(20, "b"),
		pbmsg.Fixed32(18, 7), pbmsg.Str(20, "c"), pbmsg.Fixed64(19, 2),
	)
	p := mustDecodePB(t, in, Options{})
	if got, _ := p.Unknown.m.Protobuf(); !bytes.Equal(got, pbmsg.Cat(pbmsg.Str(20, "a"), pbmsg.Var(19, 1), pbmsg.Str(20, "b"), pbmsg.Fixed32(18, 7), pbmsg.Str(20, "c"), pbmsg.Fixed64(19, 2))) {
		t.Errorf("kept %x: not the fields as they came", got)
	}
	out := mustEncodePB(t, p)
	want := pbmsg.Cat(
		pbmsg.Msg(1, pbmsg.Str(1, "n"), pbmsg.Str(3, ""), pbmsg.Str(5, ""), pbmsg.Var(7, 0)),
		pbmsg.Msg(2, pbmsg.Var(1, 0), pbmsg.Var(4, 0), pbmsg.Msg(6, pbmsg.Msg(1, pbmsg.Str(1, ""), pbmsg.Str(3, ""), pbmsg.Str(5, ""), pbmsg.Var(7, 0))), pbmsg.Msg(8), pbmsg.Str(10, "")),
		pbmsg.Msg(3, pbmsg.Str(1, "")),
		pbmsg.Fixed32(18, 7), pbmsg.Var(19, 1), pbmsg.Fixed64(19, 2), pbmsg.Str(20, "a"), pbmsg.Str(20, "b"), pbmsg.Str(20, "c"),
	)
	if !bytes.Equal(out, want) {
		t.Errorf("encoded:\n got %x\nwant %x", out, want)
	}
	if again := mustEncodePB(t, mustDecodePB(t, out, Options{})); !bytes.Equal(again, out) {
		t.Errorf("not idempotent:\n got %x\nwant %x", again, out)
	}
}

// A message cut at any byte is an error, unless the cut falls between two fields: then
// it is the message of the fields before the cut, and decodes as exactly those.
func TestProtobufTruncatedAtEveryByte(t *testing.T) {
	top := canonicalTop()
	full := mustDecodePB(t, canonicalPod(), Options{})
	boundaries := map[int]int{0: 0} // byte offset: fields before it
	n := 0
	for i, f := range top {
		n += len(f)
		boundaries[n] = i + 1
	}
	in := canonicalPod()
	for cut := range len(in) {
		for _, opts := range allOptions() {
			p, err := decodePB(in[:cut], opts)
			k, atBoundary := boundaries[cut]
			if !atBoundary {
				if err == nil || strings.HasPrefix(err.Error(), "PANIC") {
					t.Errorf("cut at %d of %d (%+v): %v, want an error", cut, len(in), opts, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("cut at %d, between fields (%+v): %v", cut, opts, err)
				continue
			}
			want := &pbPod{}
			if k > 0 {
				want.Metadata = full.Metadata
				if opts.DropManagedFields {
					want.Metadata = mustDecodePB(t, in, opts).Metadata
				}
			}
			if k > 1 {
				want.Spec = full.Spec
			}
			if k > 2 {
				want.Status = full.Status
			}
			if d := cmp.Diff(want, p, pbCmp); d != "" && k < 4 {
				t.Errorf("cut at %d, after %d fields (%+v) (-want +got):\n%s", cut, k, opts, d)
			}
			if k >= 4 {
				p.Unknown = unknown{}
				if d := cmp.Diff(want, p, pbCmp); d != "" {
					t.Errorf("cut at %d, after %d fields (%+v) (-want +got):\n%s", cut, k, opts, d)
				}
			}
		}
	}
}

// The same, inside each embedded message: cut short, with its length saying so, so
// that only the embedded message is malformed.
func TestProtobufNestedTruncatedAtEveryByte(t *testing.T) {
	for num, body := range map[int][]byte{1: canonicalMeta(), 2: canonicalSpec(), 3: canonicalStatus()} {
		boundaries := map[int]bool{0: true}
		n := 0
		for _, f := range fieldsOfMsg(t, body) {
			n += len(f)
			boundaries[n] = true
		}
		for cut := range len(body) {
			msg := pbmsg.Cat(pbmsg.Msg(num, body[:cut]), pbmsg.Str(7, "after"))
			for _, opts := range allOptions() {
				_, err := decodePB(msg, opts)
				if boundaries[cut] {
					if err != nil {
						t.Errorf("field %d cut at %d, between fields (%+v): %v", num, cut, opts, err)
					}
				} else if err == nil || strings.HasPrefix(err.Error(), "PANIC") {
					t.Errorf("field %d cut at %d of %d (%+v): %v, want an error", num, cut, len(body), opts, err)
				}
			}
		}
	}
}

// Malformed input is an error that says what is wrong, never a panic, with any options.
func TestProtobufMalformed(t *testing.T) {
	overlong := []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01} // 11 bytes
	past64 := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}         // 10th byte > 1
	cases := []struct {
		name string
		msg  []byte
		want string // in the error
	}{
		{"string field sent as varint", pbmsg.Msg(1, pbmsg.Var(1, 5)), "wire type 0, want 2"},
		{"string field sent as fixed32", pbmsg.Msg(1, pbmsg.Fixed32(3, 5)), "wire type 5, want 2"},
		{"int32 field sent as bytes", pbmsg.Msg(2, pbmsg.Str(1, "3")), "wire type 2, want 0"},
		{"int64 field sent as fixed64", pbmsg.Msg(1, pbmsg.Fixed64(7, 3)), "wire type 1, want 0"},
		{"bool field sent as bytes", pbmsg.Msg(2, pbmsg.Str(4, "")), "wire type 2, want 0"},
		{"pointer field sent as bytes", pbmsg.Msg(2, pbmsg.Str(5, "x")), "wire type 2, want 0"},
		{"embedded message sent as varint", pbmsg.Var(2, 1), "wire type 0, want 2"},
		{"message type sent as varint", pbmsg.Msg(2, pbmsg.Var(8, 1)), "wire type 0, want 2"},
		{"repeated message field sent as varint", pbmsg.Msg(1, pbmsg.Var(13, 1)), "wire type 0, want 2"},
		{"repeated message field, second occurrence as varint", pbmsg.Msg(1, pbmsg.Msg(13, pbmsg.Str(3, "a")), pbmsg.Var(13, 1)), "wire type 0, want 2"},
		{"repeated message field, a later occurrence as varint", pbmsg.Msg(1, pbmsg.Msg(13, pbmsg.Str(3, "a")), pbmsg.Str(1, "n"), pbmsg.Var(13, 1)), "wire type 0, want 2"},
		{"repeated string field sent as fixed64", pbmsg.Msg(1, pbmsg.Fixed64(14, 1)), "wire type 1, want 2"},
		{"map field sent as varint", pbmsg.Msg(1, pbmsg.Var(11, 1)), "wire type 0, want 2"},
		{"map field, a later entry as varint", pbmsg.Msg(1, pbmsg.Entry(11, "a", "b"), pbmsg.Var(11, 1)), "wire type 0, want 2"},
		{"headed struct's own field sent as varint", pbmsg.Msg(3, pbmsg.Msg(8, pbmsg.Str(1, "web"), pbmsg.Var(8, 1))), "wire type 0, want 2"},
		{"head's field sent as varint", pbmsg.Msg(3, pbmsg.Msg(8, pbmsg.Var(1, 1))), "wire type 0, want 2"},
		{"head's bool field sent as bytes", pbmsg.Msg(3, pbmsg.Msg(8, pbmsg.Str(1, "web"), pbmsg.Str(4, "yes"))), "wire type 2, want 0"},
		{"a direct struct's field sent as varint", pbmsg.Msg(1, pbmsg.Msg(13, pbmsg.Var(3, 1))), "wire type 0, want 2"},
		{"length past the end", pbmsg.Cat(pbmsg.Tag(7, protowire.Bytes), []byte{5, 'a', 'b'}), "truncated"},
		{"length past the end of the embedded message", pbmsg.Msg(1, pbmsg.Tag(1, protowire.Bytes), []byte{5, 'a'}), "truncated"},
		{"huge length", pbmsg.Cat(pbmsg.Tag(7, protowire.Bytes), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}), "truncated"},
		{"field number 0", []byte{0x02, 0x00}, "invalid field number"},
		{"field number 0 in the metadata", pbmsg.Msg(1, []byte{0x00, 0x00}), "invalid field number"},
		{"field number 0 in a map entry", pbmsg.Msg(1, pbmsg.Msg(11, []byte{0x02, 0x00})), "invalid field number"},
		{"field number past the largest", pbmsg.Cat(protowire.AppendVarint(nil, uint64(protowire.MaxNumber+1)<<3), []byte{0}), "invalid field number"},
		{"group start, alone", pbmsg.Tag(30, 3), "wire type"},
		{"group start of a known field", pbmsg.Cat(pbmsg.Tag(1, 3), pbmsg.Tag(1, 4)), "wire type"},
		{"group start of an unknown field", pbmsg.Cat(pbmsg.Tag(30, 3), pbmsg.Tag(30, 4)), "wire type"},
		{"group end alone", pbmsg.Tag(30, 4), "wire type"},
		{"group in the metadata", pbmsg.Msg(1, pbmsg.Tag(30, 3), pbmsg.Tag(30, 4)), "wire type"},
		{"group in a head", pbmsg.Msg(3, pbmsg.Msg(8, pbmsg.Tag(30, 3), pbmsg.Tag(30, 4))), "wire type"},
		{"wire type 6", pbmsg.Tag(30, 6), "wire type"},
		{"wire type 7", pbmsg.Tag(30, 7), "wire type"},
		{"overlong varint", pbmsg.Cat(pbmsg.Tag(30, protowire.Varint), overlong), "overflows"},
		{"varint past 64 bits", pbmsg.Cat(pbmsg.Tag(30, protowire.Varint), past64), "overflows"},
		{"overlong int32", pbmsg.Msg(2, pbmsg.Tag(1, protowire.Varint), overlong), "overflows"},
		{"overlong tag", overlong, "overflows"},
		{"overlong length", pbmsg.Cat(pbmsg.Tag(7, protowire.Bytes), overlong), "overflows"},
		{"varint cut short", pbmsg.Cat(pbmsg.Tag(30, protowire.Varint), []byte{0x80}), "truncated"},
		{"tag cut short", []byte{0x80}, "truncated"},
		{"fixed64 cut short", pbmsg.Cat(pbmsg.Tag(30, protowire.Fixed64), []byte{1, 2, 3}), "truncated"},
		{"fixed32 cut short", pbmsg.Cat(pbmsg.Tag(30, protowire.Fixed32), []byte{1, 2, 3}), "truncated"},
		{"nested message truncated", pbmsg.Msg(1, pbmsg.Msg(13, pbmsg.Tag(3, protowire.Bytes), []byte{4, 'w', 'e'})), "truncated"},
		{"nested message truncated in a head", pbmsg.Msg(3, pbmsg.Msg(8, pbmsg.Str(1, "web"), pbmsg.Tag(5, protowire.Bytes), []byte{9})), "truncated"},
		{"map entry truncated", pbmsg.Msg(1, pbmsg.Msg(11, pbmsg.Tag(1, protowire.Bytes), []byte{3, 'a'})), "truncated"},
		{"map entry's unknown field truncated", pbmsg.Msg(1, pbmsg.Msg(11, pbmsg.Str(1, "a"), pbmsg.Tag(3, protowire.Varint), []byte{0x80})), "truncated"},
		{"annotation entry truncated", pbmsg.Msg(1, pbmsg.Entry(12, "a", "b"), pbmsg.Msg(12, pbmsg.Tag(2, protowire.Bytes), []byte{1})), "truncated"},
		{"message type's own error", pbmsg.Msg(2, pbmsg.Msg(8, pbmsg.Var(2, 1e9))), "nanos out of range"},
		{"message type truncated", pbmsg.Msg(2, pbmsg.Msg(8, pbmsg.Tag(1, protowire.Varint))), "truncated"},
	}
	for _, c := range cases {
		for _, opts := range allOptions() {
			p, err := decodePB(c.msg, opts)
			switch {
			case err == nil:
				t.Errorf("%s (%x, %+v): no error, decoded %+v", c.name, c.msg, opts, p)
			case strings.HasPrefix(err.Error(), "PANIC"):
				t.Errorf("%s (%x, %+v): %v", c.name, c.msg, opts, err)
			case !strings.Contains(err.Error(), c.want):
				t.Errorf("%s (%x, %+v): %v, want an error saying %q", c.name, c.msg, opts, err, c.want)
			}
		}
	}
}

// Varints as protobuf reads them: an int32 is the low 32 bits of a sign-extended
// varint, whatever its length; a bool is any value but 0; a varint that is longer than
// it need be is the same value.
func TestProtobufVarints(t *testing.T) {
	minusOne := protowire.AppendVarint(nil, uint64(1<<64-1)) // 10 bytes
	if len(minusOne) != 10 {
		t.Fatalf("-1 as a varint is %d bytes", len(minusOne))
	}
	spec := func(fields ...[]byte) pbSpec {
		t.Helper()
		return mustDecodePB(t, pbmsg.Msg(2, fields...), Options{}).Spec
	}
	s := spec(pbmsg.Cat(pbmsg.Tag(1, protowire.Varint), minusOne), pbmsg.Cat(pbmsg.Tag(5, protowire.Varint), minusOne))
	if s.Replicas != -1 || s.Priority == nil || *s.Priority != -1 {
		t.Errorf("int32s given -1 in 10 bytes: %d, %v", s.Replicas, s.Priority)
	}
	out := mustEncodePB(t, &pbPod{Spec: s})
	if !bytes.Contains(out, pbmsg.Cat(pbmsg.Tag(1, protowire.Varint), minusOne)) {
		t.Errorf("-1 is not written back sign-extended, in 10 bytes: %x", out)
	}
	if g := mustDecodePB(t, pbmsg.Msg(1, pbmsg.Cat(pbmsg.Tag(7, protowire.Varint), minusOne)), Options{}).Metadata.Generation; g != -1 {
		t.Errorf("int64 -1: %d", g)
	}
	// An int32 written as the 5-byte varint of its 32 bits (as some writers do) is the
	// same int32; a larger value keeps its low 32 bits.
	if s := spec(pbmsg.Var(1, 0xffffffff)); s.Replicas != -1 {
		t.Errorf("int32 from 0xffffffff: %d", s.Replicas)
	}
	if s := spec(pbmsg.Var(1, 1<<32|5)); s.Replicas != 5 {
		t.Errorf("int32 from 1<<32|5: %d", s.Replicas)
	}
	if s := spec(pbmsg.Var(4, 2)); !s.Paused {
		t.Errorf("bool from 2: false")
	}
	if s := spec(pbmsg.Var(4, 1<<63)); !s.Paused {
		t.Errorf("bool from 1<<63: false")
	}
	// Padded varints (a redundant continuation byte): the same values.
	padded := pbmsg.Cat(pbmsg.Tag(1, protowire.Varint), []byte{0x83, 0x80, 0x00})
	if s := spec(padded); s.Replicas != 3 {
		t.Errorf("int32 from a padded varint: %d", s.Replicas)
	}
	// A padded tag and a padded length.
	name := pbmsg.Cat([]byte{0x0a | 0x80, 0x00}, []byte{0x81, 0x00}, []byte("x"))
	if m := mustDecodePB(t, pbmsg.Msg(1, name), Options{}).Metadata; m.Name != "x" {
		t.Errorf("a padded tag and length: name %q", m.Name)
	}
}

// Map entries as protobuf reads them: a missing key is "", a missing value is "", the
// last of two entries of one key wins, and an entry's fields it does not know (or of
// another wire type) are skipped.
func TestProtobufMapEntries(t *testing.T) {
	cases := []struct {
		name    string
		entries [][]byte
		want    map[string]string
	}{
		{"missing value", [][]byte{pbmsg.Msg(11, pbmsg.Str(1, "k"))}, map[string]string{"k": ""}},
		{"missing key", [][]byte{pbmsg.Msg(11, pbmsg.Str(2, "v"))}, map[string]string{"": "v"}},
		{"empty entry", [][]byte{pbmsg.Msg(11)}, map[string]string{"": ""}},
		{"value before key", [][]byte{pbmsg.Msg(11, pbmsg.Str(2, "v"), pbmsg.Str(1, "k"))}, map[string]string{"k": "v"}},
		{"key given twice", [][]byte{pbmsg.Msg(11, pbmsg.Str(1, "a"), pbmsg.Str(1, "k"), pbmsg.Str(2, "v"))}, map[string]string{"k": "v"}},
		{"two entries of one key", [][]byte{pbmsg.Entry(11, "k", "1"), pbmsg.Entry(11, "j", "x"), pbmsg.Entry(11, "k", "2")}, map[string]string{"k": "2", "j": "x"}},
		{"unknown field in an entry", [][]byte{pbmsg.Msg(11, pbmsg.Str(1, "k"), pbmsg.Var(3, 7), pbmsg.Fixed32(4, 1), pbmsg.Str(5, "z"), pbmsg.Str(2, "v"))}, map[string]string{"k": "v"}},
		{"key of another wire type", [][]byte{pbmsg.Msg(11, pbmsg.Var(1, 7), pbmsg.Str(2, "v"))}, map[string]string{"": "v"}},
		{"unsorted entries", [][]byte{pbmsg.Entry(11, "b", "2"), pbmsg.Entry(11, "a", "1")}, map[string]string{"a": "1", "b": "2"}},
	}
	for _, c := range cases {
		msg := pbmsg.Msg(1, c.entries...)
		tab := NewMapTable()
		for _, opts := range []Options{{}, {Maps: tab}, {Maps: tab}} { // twice: the second may find the first's map
			p, err := decodePB(msg, opts)
			if err != nil {
				t.Errorf("%s (%+v): %v", c.name, opts, err)
				continue
			}
			if d := cmp.Diff(c.want, p.Metadata.Labels); d != "" {
				t.Errorf("%s (%+v): labels (-want +got):\n%s", c.name, opts, d)
			}
		}
	}
	// More pairs than a table shares: built as usual, all of them.
	var many [][]byte
	want := map[string]string{}
	for i := range 2 * sharedPairsMax {
		k := fmt.Sprintf("k%02d", i)
		many = append(many, pbmsg.Entry(12, k, "v"))
		want[k] = "v"
	}
	for _, opts := range allOptions() {
		if d := cmp.Diff(want, mustDecodePB(t, pbmsg.Msg(1, many...), opts).Metadata.Annotations); d != "" {
			t.Errorf("%d annotations (%+v) (-want +got):\n%s", len(many), opts, d)
		}
	}
}

// A repeated field's occurrences need not be adjacent: every one counts, in order, with
// other fields between them.
func TestProtobufRepeatedFieldsInterleaved(t *testing.T) {
	ref := func(name string) []byte { return pbmsg.Msg(13, pbmsg.Str(1, "ReplicaSet"), pbmsg.Str(3, name)) }
	meta := pbmsg.Msg(1,
		ref("a"), pbmsg.Str(14, "f1"), pbmsg.Entry(11, "x", "1"), ref("b"), pbmsg.Str(1, "n"),
		pbmsg.Str(14, "f2"), pbmsg.Entry(11, "y", "2"), pbmsg.Var(30, 1), ref("c"), pbmsg.Str(14, "f3"),
	)
	status := pbmsg.Msg(3,
		pbmsg.Msg(2, pbmsg.Str(1, "A")), pbmsg.Msg(8, pbmsg.Str(1, "c1")), pbmsg.Str(1, "Running"), pbmsg.Msg(9, pbmsg.Str(1, "v1")),
		pbmsg.Msg(2, pbmsg.Str(1, "B")), pbmsg.Msg(8, pbmsg.Str(1, "c2")), pbmsg.Msg(9, pbmsg.Str(1, "v2")), pbmsg.Msg(2, pbmsg.Str(1, "C")),
	)
	for _, opts := range allOptions() {
		for range 2 { // with a table, the second decode may find what the first kept
			p := mustDecodePB(t, pbmsg.Cat(meta, status), opts)
			m := p.Metadata
			var names []string
			for _, r := range m.OwnerReferences {
				names = append(names, r.Name)
			}
			if !slices.Equal(names, []string{"a", "b", "c"}) || !slices.Equal(m.Finalizers, []string{"f1", "f2", "f3"}) || m.Name != "n" ||
				len(m.Labels) != 2 || m.Labels["y"] != "2" {
				t.Errorf("%+v: owners %v, finalizers %v, name %q, labels %v", opts, names, m.Finalizers, m.Name, m.Labels)
			}
			st := p.Status
			if len(st.Conditions) != 3 || st.Conditions[0].Type != "A" || st.Conditions[1].Type != "B" || st.Conditions[2].Type != "C" ||
				len(st.Containers) != 2 || st.Containers[0].head.Name != "c1" || st.Containers[1].head.Name != "c2" ||
				len(st.Volumes) != 2 || st.Volumes[1].head.Name != "v2" || st.Phase != "Running" {
				t.Errorf("%+v: status %+v", opts, st)
			}
		}
	}
}

// Decoding a repeated field whose occurrences are interleaved with another field takes
// time and memory in proportion to the message, as it does when they are adjacent: a
// message four times as long costs about four times as much, not sixteen.
//
// (Found by this test: each occurrence after the first run was once added to a copy of
// the whole slice or map, n²/2 element copies for n occurrences; 8000 interleaved labels,
// 118 KB, took 1.9 s.)
func TestProtobufInterleavedRepeatedFieldsLinear(t *testing.T) {
	field := map[string]func(i int) []byte{
		"labels":          func(i int) []byte { return pbmsg.Entry(11, fmt.Sprint("k", i), "v") },
		"finalizers":      func(i int) []byte { return pbmsg.Str(14, fmt.Sprint("f", i)) },
		"ownerReferences": func(i int) []byte { return pbmsg.Msg(13, pbmsg.Str(3, fmt.Sprint("o", i))) },
	}
	for name, occurrence := range field {
		cost := func(n int) uint64 {
			var fs [][]byte
			for i := range n {
				fs = append(fs, occurrence(i), pbmsg.Str(1, "n")) // another field between each two
			}
			msg := pbmsg.Msg(1, fs...)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			mustDecodePB(t, msg, Options{})
			runtime.ReadMemStats(&after)
			return after.TotalAlloc - before.TotalAlloc
		}
		small, large := cost(500), cost(2000)
		if large > 8*small {
			t.Errorf("%s interleaved: %d occurrences allocate %d bytes, 2000 allocate %d (%.1f times as much for 4 times as many)",
				name, 500, small, large, float64(large)/float64(small))
		}
	}
}

// The table shares owner references by the bytes of their run of adjacent occurrences.
// A pod whose run is followed, further on, by more occurrences must still get all of
// them, even when the table holds the run from a pod that had only those.
//
// (Found by this test: pbyBytes once looked the run up before it knew whether more
// occurrences followed, and on a hit dropped them, unchecked.)
func TestProtobufSharedOwnerReferencesKeepLaterOccurrences(t *testing.T) {
	a := pbmsg.Msg(13, pbmsg.Str(1, "ReplicaSet"), pbmsg.Str(3, "a"))
	b := pbmsg.Msg(13, pbmsg.Str(1, "ReplicaSet"), pbmsg.Str(3, "b"))
	tab := NewMapTable()
	first := mustDecodePB(t, pbmsg.Msg(1, pbmsg.Str(1, "p1"), a), Options{Maps: tab})
	if len(first.Metadata.OwnerReferences) != 1 {
		t.Fatalf("owners %+v", first.Metadata.OwnerReferences)
	}
	msg := pbmsg.Msg(1, a, pbmsg.Str(14, "f"), b)
	for _, opts := range []Options{{}, {Maps: NewMapTable()}, {Maps: tab}} {
		p := mustDecodePB(t, msg, opts)
		if got := p.Metadata.OwnerReferences; len(got) != 2 || got[0].Name != "a" || got[1].Name != "b" {
			t.Errorf("owner references a, finalizer, b (table: %v, holding a: %v): decoded %+v", opts.Maps != nil, opts.Maps == tab, got)
		}
	}
	if got := first.Metadata.OwnerReferences; len(got) != 1 || got[0].Name != "a" {
		t.Errorf("the first pod's shared list changed: %+v", got)
	}
	bad := pbmsg.Msg(1, a, pbmsg.Str(14, "f"), pbmsg.Msg(13, pbmsg.Var(3, 1)))
	for _, opts := range []Options{{}, {Maps: tab}} {
		if _, err := decodePB(bad, opts); err == nil {
			t.Errorf("a malformed owner reference after the run (table holding the run: %v) decoded without an error", opts.Maps == tab)
		}
	}
}

// A non-repeated field given twice: the last one wins (scalars, strings, pointers to
// scalars), as protobuf says.
func TestProtobufLastScalarWins(t *testing.T) {
	p := mustDecodePB(t, pbmsg.Cat(
		pbmsg.Msg(1, pbmsg.Str(1, "first"), pbmsg.Var(7, 1), pbmsg.Str(1, "second"), pbmsg.Var(7, 2)),
		pbmsg.Msg(2, pbmsg.Var(1, 1), pbmsg.Var(5, 10), pbmsg.Var(4, 1), pbmsg.Var(1, 2), pbmsg.Var(5, 20), pbmsg.Var(4, 0), pbmsg.Str(10, "a"), pbmsg.Str(10, "")),
		pbmsg.Msg(3, pbmsg.Msg(8, pbmsg.Str(1, "x"), pbmsg.Var(4, 1), pbmsg.Str(8, "id-1"), pbmsg.Str(1, "y"), pbmsg.Str(8, "id-2"))),
	), Options{})
	if p.Metadata.Name != "second" || p.Metadata.Generation != 2 {
		t.Errorf("metadata %+v", p.Metadata)
	}
	if s := p.Spec; s.Replicas != 2 || s.Priority == nil || *s.Priority != 20 || s.Paused || s.NodeName != "" {
		t.Errorf("spec %+v", s)
	}
	if c := p.Status.Containers[0]; c.ID != "id-2" || c.head.Name != "y" || !c.head.Ready {
		t.Errorf("container %+v, head %+v", c, *c.head)
	}
}

// An embedded message given twice is merged, as protobuf says: the second's fields
// replace the first's scalars, and the fields it lacks keep the first's values.
func TestProtobufEmbeddedMessageMerges(t *testing.T) {
	p := mustDecodePB(t, pbmsg.Cat(
		pbmsg.Msg(1, pbmsg.Str(1, "n"), pbmsg.Var(7, 4)),
		pbmsg.Msg(2, pbmsg.Str(10, "node")),
		pbmsg.Msg(1, pbmsg.Str(3, "ns")),
		pbmsg.Msg(2, pbmsg.Var(1, 3)),
	), Options{})
	if m := p.Metadata; m.Name != "n" || m.Namespace != "ns" || m.Generation != 4 {
		t.Errorf("metadata given twice: %+v", m)
	}
	if s := p.Spec; s.NodeName != "node" || s.Replicas != 3 {
		t.Errorf("spec given twice: %+v", s)
	}

	t.Run("unknown, repeated, map and pointer fields", func(t *testing.T) {
		// Protobuf merges a message given twice: its unknown fields, repeated fields and
		// maps add up, and a pointer to a message merges too (kube-apiserver writes each
		// field once; client-go's decoder merges).
		tru := true
		p := mustDecodePB(t, pbmsg.Cat(
			pbmsg.Msg(1, pbmsg.Entry(11, "a", "1"), pbmsg.Msg(13, pbmsg.Str(3, "o1")), pbmsg.Str(14, "f1"), pbmsg.Var(30, 1)),
			pbmsg.Msg(2, pbmsg.Msg(7, pbmsg.Str(1, "why"))),
			pbmsg.Msg(1, pbmsg.Entry(11, "b", "2"), pbmsg.Msg(13, pbmsg.Str(3, "o2"), pbmsg.Var(6, 1)), pbmsg.Str(14, "f2"), pbmsg.Var(31, 2)),
			pbmsg.Msg(2, pbmsg.Msg(7, pbmsg.Str(2, "what"))),
		), Options{})
		want := pbMeta{
			Labels:          map[string]string{"a": "1", "b": "2"},
			OwnerReferences: []pbOwner{{Name: "o1"}, {Name: "o2", Controller: &tru}},
			Finalizers:      []string{"f1", "f2"},
		}
		got := p.Metadata
		unknownFields, _ := got.Unknown.m.Protobuf()
		got.Unknown = unknown{}
		if d := cmp.Diff(want, got, pbCmp); d != "" {
			t.Errorf("metadata given twice (-protobuf's merge +decoded):\n%s", d)
		}
		if !bytes.Equal(unknownFields, pbmsg.Cat(pbmsg.Var(30, 1), pbmsg.Var(31, 2))) {
			t.Errorf("metadata given twice kept the unknown fields %x, want both occurrences' %x", unknownFields, pbmsg.Cat(pbmsg.Var(30, 1), pbmsg.Var(31, 2)))
		}
		if s := p.Spec.State; s == nil || s.Reason != "why" || s.Message != "what" {
			t.Errorf("a pointer to a message given twice: %+v, want {why what}", s)
		}
	})
}

// Protobuf members: what Members says of them, and that JSON is not written with them,
// nor protobuf with JSON members.
func TestProtobufMembers(t *testing.T) {
	p := mustDecodePB(t, canonicalPod(), Options{})
	u := p.Unknown.m
	run, ok := u.Protobuf()
	want := pbmsg.Cat(pbmsg.Var(4, 1<<40), pbmsg.Fixed64(5, 0xfedcba9876543210), pbmsg.Fixed32(6, 0xdeadbeef), pbmsg.Str(7, "tail"))
	if !u.IsProtobuf() || !ok || !bytes.Equal(run, want) || cap(run) != len(run) {
		t.Errorf("Protobuf() = %x, %v (cap %d); IsProtobuf %v; want %x", run, ok, cap(run), u.IsProtobuf(), want)
	}
	if n := u.Len(); n != 4 {
		t.Errorf("Len = %d, want 4", n)
	}
	if s := u.String(); s != "protobuf{#4,#5,#6,#7:4B}" {
		t.Errorf("String = %s", s)
	}
	if u.Get("tail") != nil || u.Get("7") != nil {
		t.Errorf("Get found a protobuf field by name")
	}
	for name := range u.All() {
		t.Errorf("All yielded %q", name)
	}
	u.Delete("7") // nothing to delete: no panic, no change
	if !u.Equal(p.Unknown.m) {
		t.Errorf("Delete changed protobuf members")
	}
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), ErrProtobufMembers.Error()) {
				t.Errorf("Set on protobuf members: recovered %v, want a panic citing ErrProtobufMembers", r)
			}
		}()
		c := u
		c.Set("x", []byte(`1`))
	}()

	// Equal: the same fields, byte for byte, from another decode; not other fields, never
	// JSON members. (The order of fields: TestProtobufMembersEqualFieldOrder.)
	other := mustDecodePB(t, canonicalPod(), Options{Maps: NewMapTable()}).Unknown.m
	if !u.Equal(other) || !cmp.Equal(u, other) {
		t.Errorf("the same protobuf fields, decoded twice, are not Equal")
	}
	diff := mustDecodePB(t, pbmsg.Cat(pbmsg.Var(4, 1<<40), pbmsg.Fixed64(5, 0xfedcba9876543210), pbmsg.Fixed32(6, 0xdeadbeef), pbmsg.Str(7, "tail!")), Options{}).Unknown.m
	var js Members
	js.Set("x", []byte(`1`))
	var empty Members
	for _, c := range []struct {
		name string
		v    Members
	}{{"other fields", diff}, {"JSON members", js}, {"no members", empty}} {
		if u.Equal(c.v) || c.v.Equal(u) {
			t.Errorf("protobuf members Equal %s (%s)", c.name, c.v)
		}
	}
	if empty.IsProtobuf() {
		t.Errorf("no members are protobuf members")
	}
	// A pod without unknown fields holds no members at all, which are no protobuf.
	bare := mustDecodePB(t, pbmsg.Msg(1, pbmsg.Str(1, "n")), Options{})
	if bare.Unknown.m.IsProtobuf() || bare.Unknown.m.Len() != 0 || bare.Metadata.Unknown.m.p != nil {
		t.Errorf("no unknown fields: members %s", bare.Unknown.m)
	}
}

// Equal on protobuf members means the same message content, as protobuf (proto.Equal
// compares unknown fields number by number) and object.Unknown's documentation ("member
// order ... make[s] no difference") have it: fields of different numbers in another
// order are the same fields; the occurrences of one number in another order are not.
// So an object is Equal to itself decoded from its own encoding, which writes the
// unknown fields in number order.
//
// (Found by this test and FuzzDecodeProtobufPod: Equal once compared protobuf members
// byte for byte, and a pod decoded from unknown fields out of number order was not
// Equal to itself decoded from its MarshalProtobuf output.)
func TestProtobufMembersEqualFieldOrder(t *testing.T) {
	inOrder := mustDecodePB(t, pbmsg.Cat(pbmsg.Var(4, 1), pbmsg.Str(5, "b")), Options{}).Unknown.m
	outOfOrder := mustDecodePB(t, pbmsg.Cat(pbmsg.Str(5, "b"), pbmsg.Var(4, 1)), Options{}) // 2a 01 62 20 01
	if !inOrder.Equal(outOfOrder.Unknown.m) || !outOfOrder.Unknown.m.Equal(inOrder) {
		t.Errorf("%s and %s: the same fields in another order are not Equal", inOrder, outOfOrder.Unknown.m)
	}
	again := mustDecodePB(t, mustEncodePB(t, outOfOrder), Options{})
	if d := cmp.Diff(outOfOrder, again, pbCmp); d != "" {
		t.Errorf("decoded from its own encoding, the pod differs (-first +second):\n%s", d)
	}
	a := mustDecodePB(t, pbmsg.Cat(pbmsg.Str(20, "a"), pbmsg.Str(20, "b")), Options{}).Unknown.m
	b := mustDecodePB(t, pbmsg.Cat(pbmsg.Str(20, "b"), pbmsg.Str(20, "a")), Options{}).Unknown.m
	if a.Equal(b) {
		t.Errorf("%x and %x: the occurrences of one number in another order are Equal", a.run(), b.run())
	}
}

// Members.String shows each protobuf field's number and, for a length-delimited one,
// its length, however its tag was written (a tag may be padded, as any varint).
//
// (Found by this test: protoFieldsString once read the length at SizeVarint(num<<3),
// where a minimal tag ends, and showed a padded tag's 3 bytes as 0B.)
func TestProtobufMembersStringPaddedTag(t *testing.T) {
	padded := pbmsg.Cat([]byte{0xa2, 0x81, 0x00}, []byte{3}, []byte("abc")) // field 20, Bytes, tag in 3 bytes
	u := mustDecodePB(t, padded, Options{}).Unknown.m
	if got, _ := u.Protobuf(); !bytes.Equal(got, padded) {
		t.Fatalf("kept %x, want %x", got, padded)
	}
	if s := u.String(); s != "protobuf{#20:3B}" {
		t.Errorf("String = %s, want protobuf{#20:3B}", s)
	}
}

func TestProtobufMembersAreNotWrittenAsJSON(t *testing.T) {
	p := mustDecodePB(t, canonicalPod(), Options{})
	if _, err := marshal(pbRegistry, p); !errors.Is(err, ErrProtobufMembers) {
		t.Errorf("JSON of a pod with protobuf members: %v, want ErrProtobufMembers", err)
	}
	// Unknown fields in a head: the headed struct is not written either. (The test types
	// have no MarshalJSON, so a struct inside another is written by encoding/json, not
	// by the codec: each is marshalled here itself, as package object's MarshalJSON
	// methods do.)
	deep := mustDecodePB(t, pbmsg.Msg(3, pbmsg.Msg(8, pbmsg.Str(1, "web"), pbmsg.Str(5, "img"))), Options{})
	if _, err := marshal(pbRegistry, &deep.Status.Containers[0]); !errors.Is(err, ErrProtobufMembers) {
		t.Errorf("JSON of a container with protobuf members in its head: %v, want ErrProtobufMembers", err)
	}
	if _, err := marshal(pbRegistry, &p.Spec); !errors.Is(err, ErrProtobufMembers) {
		t.Errorf("JSON of a spec with protobuf members: %v, want ErrProtobufMembers", err)
	}
	// Without unknown fields, a pod decoded from protobuf is written as JSON.
	bare := mustDecodePB(t, pbmsg.Msg(1, pbmsg.Str(1, "n"), pbmsg.Entry(11, "a", "b")), Options{})
	if out, err := marshal(pbRegistry, bare); err != nil || !strings.Contains(string(out), `"labels":{"a":"b"}`) {
		t.Errorf("JSON of a pod without unknown fields: %s, %v", out, err)
	}
}

func TestJSONMembersAreNotWrittenAsProtobuf(t *testing.T) {
	for _, in := range []string{
		`{"metadata":{"name":"n","extra":1}}`,
		`{"status":{"containers":[{"name":"web","image":"x"}]}}`, // only in a head
		`{"spec":{"template":{"metadata":{"managedFields":[]}}}}`,
		`{"spec":{"state":{"x":1}}}`, // behind a pointer
	} {
		p, err := decodeUnvalidated[*pbPod](pbRegistry, []byte(in), Options{})
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if _, err := encodePB(p); !errors.Is(err, ErrJSONMembers) {
			t.Errorf("protobuf of %s: %v, want ErrJSONMembers", in, err)
		}
	}
	// Without JSON members, a pod decoded from JSON is written as protobuf.
	p, err := decodeUnvalidated[*pbPod](pbRegistry, []byte(`{"metadata":{"name":"n"}}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := encodePB(p)
	if err != nil || mustDecodePB(t, out, Options{}).Metadata.Name != "n" {
		t.Errorf("protobuf of a pod without JSON members: %x, %v", out, err)
	}
}

// Heads: the pods of one table hold one head for containers alike; decoded without a
// table, or with another, each its own.
func TestProtobufHeadsShared(t *testing.T) {
	pod := func(name, id string) []byte {
		return pbmsg.Cat(pbmsg.Msg(1, pbmsg.Str(1, name)), pbmsg.Msg(3, pbmsg.Msg(8, pbmsg.Str(1, "web"), pbmsg.Var(4, 1), pbmsg.Str(5, "nginx"), pbmsg.Str(8, id))))
	}
	tab := NewMapTable()
	a := mustDecodePB(t, pod("a", "id-a"), Options{Maps: tab}).Status.Containers[0]
	b := mustDecodePB(t, pod("b", "id-b"), Options{Maps: tab}).Status.Containers[0]
	if a.ID != "id-a" || b.ID != "id-b" || a.head.Name != "web" || !a.head.Ready {
		t.Fatalf("decoded %+v %+v", a, *a.head)
	}
	if a.head != b.head {
		t.Errorf("two containers alike but for their ids, decoded with one table, hold two heads")
	}
	if c := mustDecodePB(t, pod("c", "id-c"), Options{DropManagedFields: true, Maps: tab}).Status.Containers[0]; c.head != a.head {
		t.Errorf("decoded with one table and DropManagedFields, a third container holds another head")
	}
	notReady := pbmsg.Cat(pbmsg.Msg(3, pbmsg.Msg(8, pbmsg.Str(1, "web"), pbmsg.Var(4, 0), pbmsg.Str(5, "nginx"))))
	if d := mustDecodePB(t, notReady, Options{Maps: tab}).Status.Containers[0]; d.head == a.head || d.head.Ready {
		t.Errorf("a container not ready got the ready one's head")
	}
	for _, opts := range []Options{{}, {DropManagedFields: true}, {Maps: NewMapTable()}} {
		x := mustDecodePB(t, pod("x", "id-x"), opts).Status.Containers[0]
		y := mustDecodePB(t, pod("y", "id-y"), opts).Status.Containers[0]
		if x.head == a.head || (opts.Maps == nil && x.head == y.head) {
			t.Errorf("with %+v, a container shares a head it should not", opts)
		}
	}
	// The same container from JSON and from protobuf, with one table: equal heads (their
	// texts differ, so not one head), and each format's head still shared.
	fromJSON, err := decodeUnvalidated[*pbPod](pbRegistry, []byte(`{"status":{"containers":[{"name":"web","ready":true}]}}`), Options{Maps: tab})
	if err != nil {
		t.Fatal(err)
	}
	fromPB := mustDecodePB(t, pbmsg.Msg(3, pbmsg.Msg(8, pbmsg.Str(1, "web"), pbmsg.Var(4, 1))), Options{Maps: tab})
	jh, ph := fromJSON.Status.Containers[0].head, fromPB.Status.Containers[0].head
	if jh.Name != ph.Name || jh.Ready != ph.Ready || jh.Unknown.m.Len() != 0 || ph.Unknown.m.Len() != 0 {
		t.Errorf("the same container from JSON %+v and protobuf %+v", *jh, *ph)
	}
}

// A container's head and a volume's head of the same bytes ({name: x}) are two heads of
// two types, each encoded as its own type.
func TestProtobufHeadsOfTwoTypesAreKeptApart(t *testing.T) {
	tab := NewMapTable()
	msg := pbmsg.Msg(3, pbmsg.Msg(8, pbmsg.Str(1, "x")), pbmsg.Msg(9, pbmsg.Str(1, "x")))
	for range 2 {
		st := mustDecodePB(t, msg, Options{Maps: tab}).Status
		if unsafe.Pointer(st.Containers[0].head) == unsafe.Pointer(st.Volumes[0].head) {
			t.Fatalf("a container and a volume share a head")
		}
		c, err1 := encodePB(&st.Containers[0])
		v, err2 := encodePB(&st.Volumes[0])
		if !bytes.Equal(c, pbmsg.Cat(pbmsg.Str(1, "x"), pbmsg.Var(4, 0), pbmsg.Str(8, ""))) || !bytes.Equal(v, pbmsg.Cat(pbmsg.Str(1, "x"), pbmsg.Str(2, ""))) || err1 != nil || err2 != nil {
			t.Errorf("the container encodes as %x (%v), the volume as %x (%v)", c, err1, v, err2)
		}
	}
	// A volume first, then the container: the container's slots do not hold the volume.
	tab = NewMapTable()
	v := mustDecodePB(t, pbmsg.Msg(3, pbmsg.Msg(9, pbmsg.Str(1, "x"), pbmsg.Str(5, "u"))), Options{Maps: tab}).Status.Volumes[0]
	c := mustDecodePB(t, pbmsg.Msg(3, pbmsg.Msg(8, pbmsg.Str(1, "x"), pbmsg.Str(5, "u"))), Options{Maps: tab}).Status.Containers[0]
	if c.head.Name != "x" || c.head.Ready || v.head.Name != "x" || unsafe.Pointer(c.head) == unsafe.Pointer(v.head) {
		t.Errorf("container head %+v, volume head %+v", *c.head, *v.head)
	}
}

// DropManagedFields drops field 17 of the object's own metadata, every occurrence, and
// nothing else: not the metadata's other unknown fields, not a template's managedFields.
func TestProtobufDropManagedFields(t *testing.T) {
	in := canonicalPod()
	plain := mustDecodePB(t, in, Options{})
	for _, opts := range []Options{{DropManagedFields: true}, {DropManagedFields: true, Maps: NewMapTable()}} {
		p := mustDecodePB(t, in, opts)
		fields, _ := p.Metadata.Unknown.m.Protobuf()
		for _, f := range fieldsOfMsg(t, fields) {
			if num, _, _ := protowire.ConsumeTag(f); num == 17 {
				t.Errorf("%+v: managedFields kept: %x", opts, f)
			}
		}
		if got, _ := p.Spec.Template.Metadata.Unknown.m.Protobuf(); !bytes.Equal(got, pbmsg.Msg(17, pbmsg.Str(1, "template-manager"))) {
			t.Errorf("%+v: the template's metadata lost its managedFields: %x", opts, got)
		}
		// Everything else as decoded without options.
		pm, gm := plain.Metadata, p.Metadata
		pm.Unknown, gm.Unknown = unknown{}, unknown{}
		if d := cmp.Diff(pm, gm, pbCmp); d != "" {
			t.Errorf("%+v: metadata (-plain +dropped):\n%s", opts, d)
		}
		if d := cmp.Diff(plain.Spec, p.Spec, pbCmp); d != "" {
			t.Errorf("%+v: spec (-plain +dropped):\n%s", opts, d)
		}
		out := mustEncodePB(t, p)
		if want := mustEncodePB(t, plain); len(out) != len(want)-len(pbmsg.Msg(17, pbmsg.Str(1, "kubectl")))-len(pbmsg.Msg(17, pbmsg.Str(1, "kubelet"))) {
			t.Errorf("%+v: encoded in %d bytes, plain in %d", opts, len(out), len(want))
		}
	}
	// Only the number 17 of the metadata: of the pod itself it is any unknown field.
	top := mustDecodePB(t, pbmsg.Str(17, "mine"), Options{DropManagedFields: true})
	if got, _ := top.Unknown.m.Protobuf(); !bytes.Equal(got, pbmsg.Str(17, "mine")) {
		t.Errorf("the pod's own field 17 was dropped: %x", got)
	}
	// Whatever its wire type, field 17 of the metadata is dropped unread.
	for _, f := range [][]byte{pbmsg.Var(17, 1), pbmsg.Fixed32(17, 1), pbmsg.Fixed64(17, 1)} {
		p, err := decodePB(pbmsg.Msg(1, f, pbmsg.Str(1, "n")), Options{DropManagedFields: true})
		if err != nil || p.Metadata.Unknown.m.p != nil || p.Metadata.Name != "n" {
			t.Errorf("metadata field 17 as %x, dropped: %v, %+v", f, err, p)
		}
	}
}

// Labels and annotations from protobuf are shared through a table, by their pairs:
// two pods of equal labels hold one map, in whatever order their entries came.
func TestProtobufLabelsSharedThroughTable(t *testing.T) {
	pod := func(name string, entries ...[]byte) []byte {
		return pbmsg.Msg(1, append([][]byte{pbmsg.Str(1, name)}, entries...)...)
	}
	same := func(a, b map[string]string) bool {
		return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	}
	tab := NewMapTable()
	a := mustDecodePB(t, pod("a", pbmsg.Entry(11, "app", "web"), pbmsg.Entry(11, "tier", "front"), pbmsg.Entry(12, "note", "x")), Options{Maps: tab}).Metadata
	b := mustDecodePB(t, pod("b", pbmsg.Entry(11, "app", "web"), pbmsg.Entry(11, "tier", "front"), pbmsg.Entry(12, "note", "x")), Options{Maps: tab}).Metadata
	c := mustDecodePB(t, pod("c", pbmsg.Entry(11, "tier", "front"), pbmsg.Entry(11, "app", "web")), Options{DropManagedFields: true, Maps: tab}).Metadata
	if !same(a.Labels, b.Labels) || !same(a.Annotations, b.Annotations) {
		t.Errorf("two pods of equal labels and annotations, one table: two maps")
	}
	// Entries in another order are other bytes: shared or not, the same pairs.
	if d := cmp.Diff(a.Labels, c.Labels); d != "" {
		t.Errorf("equal labels in another order (-first +reordered):\n%s", d)
	}
	d := mustDecodePB(t, pod("d", pbmsg.Entry(11, "app", "web"), pbmsg.Entry(11, "tier", "back")), Options{Maps: tab}).Metadata
	if same(a.Labels, d.Labels) || d.Labels["tier"] != "back" {
		t.Errorf("other labels got the shared map: %v", d.Labels)
	}
	e := mustDecodePB(t, pod("e", pbmsg.Entry(11, "app", "web"), pbmsg.Entry(11, "tier", "front"), pbmsg.Entry(11, "app", "web")), Options{Maps: tab}).Metadata
	if d := cmp.Diff(map[string]string{"app": "web", "tier": "front"}, e.Labels); d != "" {
		t.Errorf("labels with a repeated entry (-want +got):\n%s", d)
	}
	for _, opts := range []Options{{}, {DropManagedFields: true}} {
		x := mustDecodePB(t, pod("x", pbmsg.Entry(11, "app", "web"), pbmsg.Entry(11, "tier", "front")), opts).Metadata
		y := mustDecodePB(t, pod("y", pbmsg.Entry(11, "app", "web"), pbmsg.Entry(11, "tier", "front")), opts).Metadata
		if same(x.Labels, y.Labels) || same(x.Labels, a.Labels) {
			t.Errorf("without a table (%+v), two pods share a map", opts)
		}
	}
	// The same labels from JSON, through the same table: the same pairs.
	j, err := decodeUnvalidated[*pbPod](pbRegistry, []byte(`{"metadata":{"labels":{"app":"web","tier":"front"}}}`), Options{Maps: tab})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(a.Labels, j.Metadata.Labels); d != "" {
		t.Errorf("the same labels from protobuf and JSON, one table (-protobuf +json):\n%s", d)
	}
	// A later entry, after another field, is added to a copy: the shared map of the
	// first run's bytes is left as it was.
	f := mustDecodePB(t, pod("f", pbmsg.Entry(11, "app", "web"), pbmsg.Entry(11, "tier", "front"), pbmsg.Str(3, "ns"), pbmsg.Entry(11, "extra", "1")), Options{Maps: tab}).Metadata
	if len(f.Labels) != 3 || f.Labels["extra"] != "1" || len(a.Labels) != 2 || len(b.Labels) != 2 {
		t.Errorf("a later entry: labels %v; the shared map now %v", f.Labels, a.Labels)
	}
	// Owner references: shared by the bytes of their run.
	ref := pbmsg.Msg(13, pbmsg.Str(1, "ReplicaSet"), pbmsg.Str(3, "web"), pbmsg.Var(6, 1))
	o1 := mustDecodePB(t, pod("o1", ref), Options{Maps: tab}).Metadata.OwnerReferences
	o2 := mustDecodePB(t, pod("o2", ref), Options{Maps: tab}).Metadata.OwnerReferences
	if len(o1) != 1 || len(o2) != 1 || &o1[0] != &o2[0] || o1[0].Name != "web" || o1[0].Controller == nil || !*o1[0].Controller {
		t.Errorf("owner references of the same bytes, one table: %+v and %+v, not one list", o1, o2)
	}
}

// A shared protobuf map is found by the digest of its bytes, not read: a label written in
// place (the read-only rule broken) reaches the next object decoded from the same bytes,
// and Forget, which the mutation detector calls when it finds the write, ends that: the
// next object gets the labels its bytes say.
func TestProtobufWrittenMapUntilForget(t *testing.T) {
	labels := pbmsg.Entry(11, "app", "web")
	tab := NewMapTable()
	a := mustDecodePB(t, pbmsg.Msg(1, pbmsg.Str(1, "a"), labels), Options{Maps: tab})
	a.Metadata.Labels["app"] = "written" // the mistake
	b := mustDecodePB(t, pbmsg.Msg(1, pbmsg.Str(1, "b"), labels), Options{Maps: tab})
	if got := b.Metadata.Labels["app"]; got != "written" {
		t.Errorf("before Forget the next object's label is %q; the shared map, written, was expected (the table reads no map it finds)", got)
	}
	tab.Forget()
	c := mustDecodePB(t, pbmsg.Msg(1, pbmsg.Str(1, "c"), labels), Options{Maps: tab})
	if got := c.Metadata.Labels["app"]; got != "web" {
		t.Errorf("after Forget the next object's label is %q, want web", got)
	}
	d := mustDecodePB(t, pbmsg.Msg(1, pbmsg.Str(1, "d"), labels), Options{Maps: tab})
	if reflect.ValueOf(d.Metadata.Labels).UnsafePointer() != reflect.ValueOf(c.Metadata.Labels).UnsafePointer() {
		t.Errorf("the map built after Forget is not shared")
	}
}
