package object_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/internal/codec"
	"github.com/kinformer/kinformer/internal/kubeproto"
	"github.com/kinformer/kinformer/internal/protowire"
	"github.com/kinformer/kinformer/internal/testrig/modelled"
	"github.com/kinformer/kinformer/internal/testrig/pbmsg"
	. "github.com/kinformer/kinformer/object"
)

// FuzzDecodeProtobufPod: whatever message decodes into a Pod must encode; decoding that
// encoding must give the same pod (its unknown fields included), and encoding it again
// the same bytes; decoding with each DecodeOptions must give the same pod (less
// managedFields when they are dropped); and the modelled fields must come out of JSON
// as they went in: the protobuf decoder and the JSON decoder agree on what they both
// accept. Decoded against an earlier state (one of the golden pods), it must be the very
// pod decoding alone makes.
func FuzzDecodeProtobufPod(f *testing.F) {
	priors := addProtobufSeeds[Pod](f, "pod-*.pb")
	f.Add(pbmsg.Cat(
		pbmsg.Msg(1,
			pbmsg.Str(1, "p"),
			pbmsg.Msg(13, pbmsg.Str(1, "ReplicaSet"), pbmsg.Str(3, "rs"), pbmsg.Var(6, 1)), pbmsg.Str(14, "f1"),
			pbmsg.Msg(13, pbmsg.Str(1, "Node"), pbmsg.Str(3, "n")), pbmsg.Str(14, "f2"),
			pbmsg.Msg(11, pbmsg.Str(2, "no key")), pbmsg.Msg(11, pbmsg.Str(1, "no value")), pbmsg.Msg(11),
			pbmsg.Msg(9), pbmsg.Msg(8, pbmsg.Var(1, 1700000000), pbmsg.Var(2, 0)), pbmsg.Msg(17, pbmsg.Str(1, "mf")),
		),
		pbmsg.Msg(3,
			pbmsg.Msg(2, pbmsg.Str(1, "Ready"), pbmsg.Str(2, "True"), pbmsg.Msg(4, pbmsg.Var(1, 1))),
			pbmsg.Msg(8, pbmsg.Str(1, "c"), pbmsg.Var(5, 1<<64-1), pbmsg.Msg(2, pbmsg.Msg(3, pbmsg.Var(1, 1<<64-1), pbmsg.Msg(5), pbmsg.Msg(6, pbmsg.Var(1, 5))))),
			pbmsg.Str(1, "Running"),
			pbmsg.Msg(2, pbmsg.Str(1, "PodScheduled"), pbmsg.Str(2, "True")),
			pbmsg.Msg(8, pbmsg.Str(1, "c2"), pbmsg.Var(4, 1)),
		),
		pbmsg.Msg(2, pbmsg.Msg(2, pbmsg.Str(1, "web"), pbmsg.Str(2, "img"), pbmsg.Msg(9, pbmsg.Str(1, "m"), pbmsg.Str(2, "/m")), pbmsg.Str(3, "x")), pbmsg.Str(10, "node")),
	))
	f.Fuzz(func(t *testing.T, msg []byte) { checkProtobuf[Pod](t, msg, priors) })
}

// FuzzDecodeProtobufLease is FuzzDecodeProtobufPod for a Lease: pointers to scalars and
// MicroTimes.
func FuzzDecodeProtobufLease(f *testing.F) {
	priors := addProtobufSeeds[Lease](f, "lease*.pb")
	f.Add(pbmsg.Cat(
		pbmsg.Msg(1, pbmsg.Str(1, "l"), pbmsg.Str(3, "kube-node-lease")),
		pbmsg.Msg(2, pbmsg.Str(1, ""), pbmsg.Var(2, 1<<64-1), pbmsg.Msg(3, pbmsg.Var(1, 1700000000), pbmsg.Var(2, 123456789)), pbmsg.Msg(4), pbmsg.Var(5, 0), pbmsg.Str(6, "x")),
	))
	f.Fuzz(func(t *testing.T, msg []byte) { checkProtobuf[Lease](t, msg, priors) })
}

// addProtobufSeeds adds the message (the envelope's raw) of each golden file matching
// pattern, and a few mutations of it: cut short, with unknown fields of every wire type
// after it, given twice (embedded messages merged, repeated fields twice as long), with
// its fields in reverse order. It returns the golden messages.
func addProtobufSeeds[T any, P interface {
	*T
	Object
}](f *testing.F, pattern string) [][]byte {
	files, err := filepath.Glob(filepath.Join("testdata/protobuf", pattern))
	if err != nil || len(files) == 0 {
		f.Fatalf("no golden files %s: %v", pattern, err)
	}
	var golden [][]byte
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		env, err := kubeproto.ParseEnvelope(b)
		if err != nil {
			f.Fatalf("%s: %v", file, err)
		}
		raw := env.Raw
		golden = append(golden, raw)
		f.Add(raw)
		f.Add(raw[:len(raw)/2])
		f.Add(pbmsg.Cat(raw, pbmsg.Var(100, 1<<63), pbmsg.Fixed64(101, 7), pbmsg.Str(102, "x"), pbmsg.Fixed32(103, 7)))
		f.Add(pbmsg.Cat(raw, raw))
		var fields [][]byte
		for rest := raw; len(rest) > 0; {
			_, _, n := protowire.ConsumeField(rest)
			if n < 0 {
				f.Fatalf("%s: malformed: %v", file, protowire.Error(n))
			}
			fields = append(fields, rest[:n])
			rest = rest[n:]
		}
		slices.Reverse(fields)
		f.Add(pbmsg.Cat(fields...))
	}
	return golden
}

func checkProtobuf[T any, P interface {
	*T
	Object
}](t *testing.T, msg []byte, priors [][]byte) {
	first, err := codec.DecodeProtobuf[P](msg, DecodeOptions{})
	if err != nil {
		return
	}
	out, err := codec.MarshalProtobufValue(first)
	if err != nil {
		t.Fatalf("%T decoded, but does not encode: %v", first, err)
	}
	second, err := codec.DecodeProtobuf[P](out, DecodeOptions{})
	if err != nil {
		t.Fatalf("%T: its own encoding %x does not decode: %v", first, out, err)
	}
	if d := cmp.Diff(first, second); d != "" {
		t.Fatalf("%T changed across an encoding and a decoding (-first +second):\n%s", first, d)
	}
	if again, err := codec.MarshalProtobufValue(second); err != nil || !bytes.Equal(again, out) {
		t.Fatalf("%T encoded twice: %v\n first %x\nsecond %x", first, err, out, again)
	}
	protobufWithOptions[T, P](t, msg, first)
	protobufAgainstLastState[P](t, msg, priors)

	// The JSON path: what the model holds, written as JSON and read back.
	want := jsonView(modelled.Of(first))
	js, err := json.Marshal(want)
	if err != nil {
		t.Fatalf("%T decoded from protobuf, its modelled fields do not encode as JSON: %v", first, err)
	}
	fromJSON := P(new(T))
	if err := json.Unmarshal(js, fromJSON); err != nil {
		t.Fatalf("%T decoded from protobuf, its JSON %s does not decode: %v", first, js, err)
	}
	if d := cmp.Diff(want, jsonView(modelled.Of(fromJSON))); d != "" {
		t.Fatalf("%T: the modelled fields decoded from protobuf differ from those of their JSON %s (-protobuf +json):\n%s", first, js, d)
	}
}

// protobufWithOptions checks that decoding msg with each DecodeOptions, twice (the
// second may find what the first left in the table), gives plain, the pod decoded
// without options; less the metadata's managedFields (field 17) when they are dropped.
func protobufWithOptions[T any, P interface {
	*T
	Object
}](t *testing.T, msg []byte, plain P) {
	tab := NewMapTable()
	for _, opts := range []DecodeOptions{{DropManagedFields: true}, {Maps: tab}, {DropManagedFields: true, Maps: tab}} {
		for range 2 {
			got, err := codec.DecodeProtobuf[P](msg, opts)
			if err != nil {
				t.Fatalf("%+v: %v where decoding without options succeeds", opts, err)
			}
			want := plain
			if opts.DropManagedFields {
				wantFields, _ := plain.Meta().Unknown.Protobuf()
				wantFields = withoutField(wantFields, 17)
				gotFields, _ := got.Meta().Unknown.Protobuf()
				if !bytes.Equal(gotFields, wantFields) {
					t.Fatalf("%+v: the metadata's unknown fields %x, want %x", opts, gotFields, wantFields)
				}
				// The rest compared with the metadata's Unknown left out of both.
				w, g := new(T), new(T)
				*w, *g = *plain, *got
				P(w).Meta().Unknown, P(g).Meta().Unknown = Unknown{}, Unknown{}
				want, got = P(w), P(g)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("%+v: decoded (-without options +with):\n%s", opts, d)
			}
		}
	}
}

// protobufAgainstLastState checks that msg, decoded as the object of a MODIFIED event
// through a table that remembers an earlier state of it (one of priors: its own metadata
// put first, so that the object is taken for that one), is the object decoding alone
// gives, to its encoding's last byte.
func protobufAgainstLastState[P Object](t *testing.T, msg []byte, priors [][]byte) {
	if len(priors) == 0 {
		return
	}
	i := len(msg) % len(priors) // one of them an input, which the fuzzer varies anyway
	for _, prior := range priors[i : i+1] {
		_, _, meta, n := protowire.Next(prior)
		if n <= 0 {
			t.Fatalf("prior %d has no first field", i)
		}
		named := pbmsg.Cat(pbmsg.Msg(1, meta), msg)
		want, err := codec.DecodeProtobuf[P](named, DecodeOptions{DropManagedFields: true, Maps: NewMapTable()})
		if err != nil {
			continue
		}
		wantBytes, err := codec.MarshalProtobufValue(want)
		if err != nil {
			t.Fatal(err)
		}
		tab := NewMapTable()
		last, err := codec.DecodeProtobufModified[P](prior, DecodeOptions{DropManagedFields: true, Maps: tab})
		if err != nil {
			t.Fatalf("prior %d: %v", i, err)
		}
		defer runtime.KeepAlive(last) // the table holds it weakly
		for range 2 {                 // against the prior, then against itself
			got, err := codec.DecodeProtobufModified[P](named, DecodeOptions{DropManagedFields: true, Maps: tab})
			if err != nil {
				t.Fatalf("against state %d: %v where decoding alone succeeds", i, err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("against state %d (-alone +against it):\n%s", i, d)
			}
			if b, err := codec.MarshalProtobufValue(got); err != nil || !bytes.Equal(b, wantBytes) {
				t.Fatalf("against state %d: encodes to %x (%v), alone to %x", i, b, err, wantBytes)
			}
		}
	}
}

// withoutField returns the protobuf fields of run other than those numbered num.
func withoutField(run []byte, num protowire.Number) []byte {
	var out []byte
	for len(run) > 0 {
		n, _, l := protowire.ConsumeField(run)
		if l < 0 {
			return append(out, run...)
		}
		if n != num {
			out = append(out, run[:l]...)
		}
		run = run[l:]
	}
	return out
}

// jsonView changes v (a modelled copy: pointers and slices its own) into what JSON can
// say of it, as encoding/json and Kubernetes' own JSON say it: a string's invalid UTF-8
// bytes each become U+FFFD (a protobuf string is any bytes; encoding/json writes what
// is not UTF-8 so), in map keys too; and a pointer to the zero Time or MicroTime is nil
// (a zero time is written null, which reads as no pointer, in metav1 as here).
func jsonView[P any](v P) P {
	normalizeForJSON(reflect.ValueOf(v).Elem())
	return v
}

var (
	timeType      = reflect.TypeFor[Time]()
	microTimeType = reflect.TypeFor[MicroTime]()
	stdTimeType   = reflect.TypeFor[time.Time]()
)

func normalizeForJSON(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); !utf8.ValidString(s) {
			v.SetString(string([]rune(s)))
		}
	case reflect.Struct:
		if t := v.Type(); t == timeType || t == microTimeType || t == stdTimeType || t == reflect.TypeFor[Unknown]() {
			return
		}
		for i := range v.NumField() {
			f := v.Field(i)
			if !f.CanSet() { // a head, which modelled has copied
				f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
			}
			normalizeForJSON(f)
		}
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		if e := v.Elem(); (e.Type() == timeType || e.Type() == microTimeType) && e.Interface().(interface{ IsZero() bool }).IsZero() {
			v.SetZero()
			return
		}
		normalizeForJSON(v.Elem())
	case reflect.Slice:
		for i := range v.Len() {
			normalizeForJSON(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() || v.Type() != reflect.TypeFor[map[string]string]() {
			return
		}
		m := v.Interface().(map[string]string)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys) // as encoding/json writes them; of keys that become one, the last wins
		c := make(map[string]string, len(m))
		for _, k := range keys {
			c[string([]rune(k))] = string([]rune(m[k]))
		}
		v.Set(reflect.ValueOf(c))
	}
}

// What the fuzz targets found, as tests of their own.

// A Time past year 9999 is moved to the last one RFC 3339 can write; decoded from
// protobuf and encoded again, it must stay what it was decoded as.
//
// FINDING: decodeTimeProto keeps what NewTime makes of a time past 9999, the last second
// plus .999999 (a fraction), but encodeTimeProto writes whole seconds: decoded again,
// the time is 9999-12-31T23:59:59Z, not 23:59:59.999999Z. The object is not what it
// was after a round trip, and MarshalProtobuf is not idempotent on it.
func TestProtobufTimePastYear9999RoundTrips(t *testing.T) {
	// metadata {creationTimestamp {seconds: 253402300800}}: 10000-01-01T00:00:00Z.
	msg := []byte{0x0a, 0x09, 0x42, 0x07, 0x08, 0x80, 0x83, 0xd1, 0xff, 0xaf, 0x07}
	first, err := codec.DecodeProtobuf[*Pod](msg, DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := codec.MarshalProtobufValue(first)
	if err != nil {
		t.Fatal(err)
	}
	second, err := codec.DecodeProtobuf[*Pod](out, DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !first.CreationTimestamp.Equal(second.CreationTimestamp) {
		t.Errorf("creationTimestamp decoded as %v, encoded and decoded again as %v", first.CreationTimestamp, second.CreationTimestamp)
	}
}

// A MicroTime decoded from protobuf must be one that its JSON can carry: written as
// JSON and read back, the same time.
//
// FINDING: decodeMicroTimeProto takes any seconds, where Time moves a time outside years
// 0 to 9999 to the nearest it can write: a Lease whose renewTime is past 9999 (or before
// year 0) decodes from protobuf, and json.Marshal then writes "10000-01-01T00:00:00.000000Z",
// which no RFC 3339 reader (this package's, or kube-apiserver's) accepts.
func TestProtobufMicroTimeOutOfRangeSurvivesJSON(t *testing.T) {
	for _, sec := range []int64{253402300800, -62167219201} { // 10000-01-01, and a second before year 0
		// spec {renewTime {seconds: sec}}
		msg := pbmsg.Msg(2, pbmsg.Msg(4, pbmsg.Var(1, uint64(sec))))
		l, err := codec.DecodeProtobuf[*Lease](msg, DecodeOptions{})
		if err != nil {
			continue // refusing it is an answer too
		}
		js, err := json.Marshal(l)
		if err != nil {
			continue // and so is refusing to write it
		}
		var back Lease
		if err := json.Unmarshal(js, &back); err != nil {
			t.Errorf("renewTime %d s (message %x): decoded from protobuf, written as %s, which does not decode: %v", sec, msg, js, err)
			continue
		}
		if back.Spec.RenewTime == nil || !back.Spec.RenewTime.Equal(l.Spec.RenewTime.Time) {
			t.Errorf("renewTime %d s: %v from protobuf, %v through JSON", sec, l.Spec.RenewTime, back.Spec.RenewTime)
		}
	}
}
