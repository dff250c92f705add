package kubeproto

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/internal/protowire"
)

func TestAppendEnvelopeBytes(t *testing.T) {
	cases := []struct {
		name string
		e    Envelope
		want string
	}{
		{
			// The apiserver's layout: typeMeta, raw, then both content strings, empty.
			name: "object",
			e:    Envelope{APIVersion: "v1", Kind: "Pod", Raw: []byte{0x0a, 0x00}},
			want: "k8s\x00" + "\x0a\x09\x0a\x02v1\x12\x03Pod" + "\x12\x02\x0a\x00" + "\x1a\x00" + "\x22\x00",
		},
		{
			name: "empty raw is written",
			e:    Envelope{APIVersion: "v1", Kind: "Status", Raw: []byte{}},
			want: "k8s\x00" + "\x0a\x0c\x0a\x02v1\x12\x06Status" + "\x12\x00" + "\x1a\x00" + "\x22\x00",
		},
		{
			name: "nil raw is not",
			e:    Envelope{},
			want: "k8s\x00" + "\x0a\x04\x0a\x00\x12\x00" + "\x1a\x00" + "\x22\x00",
		},
		{
			name: "content strings",
			e:    Envelope{Kind: "X", Raw: []byte("{}"), ContentEncoding: "gzip", ContentType: "application/json"},
			want: "k8s\x00" + "\x0a\x05\x0a\x00\x12\x01X" + "\x12\x02{}" + "\x1a\x04gzip" + "\x22\x10application/json",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := AppendEnvelope([]byte("prefix"), c.e)
			if diff := cmp.Diff("prefix"+c.want, string(got)); diff != "" {
				t.Errorf("AppendEnvelope (-want +got):\n%s", diff)
			}
			back, err := ParseEnvelope(got[len("prefix"):])
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.e, back); diff != "" {
				t.Errorf("ParseEnvelope(AppendEnvelope(e)) (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseEnvelopeAliasesRaw(t *testing.T) {
	b := AppendEnvelope(nil, Envelope{APIVersion: "v1", Kind: "Pod", Raw: []byte("abc")})
	e, err := ParseEnvelope(b)
	if err != nil {
		t.Fatal(err)
	}
	if &e.Raw[0] != &b[len(b)-len("abc")-4] {
		t.Error("Raw is a copy, want a part of the input")
	}
	// Appending to Raw must not overwrite the fields after it in the input.
	_ = append(e.Raw, 'X')
	if again, err := ParseEnvelope(b); err != nil || again.ContentEncoding != "" {
		t.Errorf("input changed by an append to Raw: %+v, %v", again, err)
	}
}

func TestParseEnvelopeLenient(t *testing.T) {
	var b []byte
	b = append(b, Magic[:]...)
	b = appendVarintField(b, 9, 7)              // unknown varint
	b = appendStringField(b, 10, "skip me")     // unknown bytes
	b = append(b, 0x5d, 1, 2, 3, 4)             // unknown fixed32 (field 11)
	b = append(b, 0x61, 1, 2, 3, 4, 5, 6, 7, 8) // unknown fixed64 (field 12)
	b = appendMessageHeader(b, 1, 4)
	b = appendStringField(b, 1, "v1")
	b = appendBytesField(b, 2, []byte("raw"))
	// A second typeMeta merges into the first: it sets kind and leaves apiVersion.
	b = appendMessageHeader(b, 1, 5)
	b = appendStringField(b, 2, "Pod")
	got, err := ParseEnvelope(b)
	if err != nil {
		t.Fatal(err)
	}
	want := Envelope{APIVersion: "v1", Kind: "Pod", Raw: []byte("raw")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseEnvelopeMalformed(t *testing.T) {
	m := string(Magic[:])
	cases := []struct {
		name      string
		in        string
		want      string
		truncated bool
	}{
		{"empty", "", `protobuf: missing k8s\x00 magic (body starts "")`, false},
		{"json", `{"kind":"PodList"}`, `protobuf: missing k8s\x00 magic (body starts "{\"ki")`, false},
		{"short magic", "k8s", `protobuf: missing k8s\x00 magic (body starts "k8s")`, false},
		{"truncated tag", m + "\x80", "protobuf envelope: truncated field tag at byte 0", true},
		{"field zero", m + "\x02\x00", "protobuf envelope: bad field tag at byte 0: protobuf: invalid field number", false},
		{"group", m + "\x0a\x00\x13", "protobuf envelope: field 2: protobuf: unknown wire type", false},
		{"truncated raw", m + "\x12\x05abc", "protobuf envelope: truncated field 2 (a 5-byte value, 3 bytes left)", true},
		{"truncated raw length", m + "\x12\x85", "protobuf envelope: truncated field 2", true},
		{"huge length", m + "\x12\xff\xff\xff\xff\xff\xff\xff\xff\x7f", "protobuf envelope: truncated field 2 (a 9223372036854775807-byte value, 0 bytes left)", true},
		{"overflowing length", m + "\x12\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", "protobuf envelope: field 2: protobuf: varint overflows 64 bits", false},
		{"raw as varint", m + "\x10\x01", "protobuf envelope: field 2 (raw) has wire type varint, want bytes", false},
		{"typeMeta as fixed32", m + "\x0d\x00\x00\x00\x00", "protobuf envelope: field 1 (typeMeta) has wire type fixed32, want bytes", false},
		{"kind as varint", m + "\x0a\x02\x10\x01", "protobuf envelope typeMeta: field 2 (kind) has wire type varint, want bytes", false},
		{"typeMeta past its end", m + "\x0a\x02\x0a\x05v1", "protobuf envelope typeMeta: truncated field 1 (a 5-byte value, 0 bytes left)", true},
		{"truncated contentType", m + "\x22\x01", "protobuf envelope: truncated field 4 (a 1-byte value, 0 bytes left)", true},
		{"unknown field truncated", m + "\x28\x80", "protobuf envelope: truncated field 5", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := ParseEnvelope([]byte(c.in))
			if err == nil {
				t.Fatalf("no error; got %+v", e)
			}
			if diff := cmp.Diff(c.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if got := errors.Is(err, protowire.ErrTruncated); got != c.truncated {
				t.Errorf("errors.Is(err, ErrTruncated) = %v, want %v", got, c.truncated)
			}
			if diff := cmp.Diff(Envelope{}, e); diff != "" {
				t.Errorf("envelope returned with the error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseEnvelopeTypeStrings: a built-in apiVersion and kind cost no allocation (every
// watch event carries them); any other is read too, as a copy of the body's bytes.
func TestParseEnvelopeTypeStrings(t *testing.T) {
	for _, tm := range [][2]string{{"v1", "Pod"}, {"apps/v1", "ReplicaSet"}, {"example.com/v1", "Widget"}} {
		body := AppendEnvelope(nil, Envelope{APIVersion: tm[0], Kind: tm[1], Raw: []byte{}})
		e, err := ParseEnvelope(body)
		if err != nil || e.APIVersion != tm[0] || e.Kind != tm[1] {
			t.Fatalf("ParseEnvelope of %v = %+v, %v", tm, e, err)
		}
		clear(body)
		if e.APIVersion != tm[0] || e.Kind != tm[1] {
			t.Errorf("%v: the strings changed with the body's bytes: %q %q", tm, e.APIVersion, e.Kind)
		}
	}
	body := AppendEnvelope(nil, Envelope{APIVersion: "v1", Kind: "Pod", Raw: []byte{}})
	if n := testing.AllocsPerRun(100, func() { _, _ = ParseEnvelope(body) }); n != 0 {
		t.Errorf("ParseEnvelope of a v1 Pod allocates %v times, want 0", n)
	}
}
