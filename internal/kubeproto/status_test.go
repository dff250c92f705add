package kubeproto

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/object"
)

func TestAppendStatusBytes(t *testing.T) {
	s := object.Status{Status: "Failure", Message: "gone", Reason: object.ReasonExpired, Code: 410}
	got := AppendStatus(nil, s)
	// An empty ListMeta (its three strings), every string, no details, the code.
	want := "\x0a\x06\x0a\x00\x12\x00\x1a\x00" + "\x12\x07Failure" + "\x1a\x04gone" + "\x22\x07Expired" + "\x30\x9a\x03"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("AppendStatus (-want +got):\n%s", diff)
	}
}

func TestAppendStatusNegativeInt32(t *testing.T) {
	got := AppendStatus(nil, object.Status{Code: -1})
	// The sign-extended 64-bit varint, ten bytes, as the generated code writes an int32.
	want := "\x30\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"
	if diff := cmp.Diff(want, string(got[len(got)-len(want):])); diff != "" {
		t.Errorf("code field (-want +got):\n%s", diff)
	}
}

func TestStatusRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		s    object.Status
	}{
		{"empty", object.Status{}},
		{"expired", object.NewExpired("too old resource version: 1 (5)").Status},
		{"not found", object.NewNotFound("pods", "web-1").Status},
		{"details", object.Status{
			Status: "Failure", Reason: object.ReasonInvalid, Code: 422, Message: "invalid",
			Details: &object.StatusDetails{
				Name: "web", Group: "apps", Kind: "deployments", UID: "0d4c",
				RetryAfterSeconds: 7,
				Causes: []object.StatusCause{
					{Type: "FieldValueRequired", Message: "Required value", Field: "spec.replicas"},
					{},
					{Field: "metadata.name"},
				},
			},
		}},
		{"negative numbers", object.Status{Code: -5, Details: &object.StatusDetails{RetryAfterSeconds: -2147483648}}},
		{"empty details", object.Status{Code: 500, Details: &object.StatusDetails{}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.s.TypeMeta = object.TypeMeta{} // not part of the message
			got, err := DecodeStatus(AppendStatus(nil, c.s))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.s, got); diff != "" {
				t.Errorf("DecodeStatus(AppendStatus(s)) (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeStatusLenient(t *testing.T) {
	var d1, d2, msg []byte
	d1 = appendStringField(d1, detailsName, "a")
	d1 = appendBytesField(d1, detailsCauses, appendStringField(nil, causeReason, "r1"))
	d2 = appendStringField(d2, detailsKind, "pods")
	d2 = appendBytesField(d2, detailsCauses, appendStringField(appendVarintField(nil, 9, 1), causeField, "f2"))
	msg = appendBytesField(msg, statusMetadata, appendStringField(nil, listMetaResourceVersion, "5")) // ignored
	msg = appendVarintField(msg, statusCode, 404)
	msg = appendBytesField(msg, statusDetails, d1)
	msg = appendStringField(msg, 12, "unknown")
	msg = appendBytesField(msg, statusDetails, d2) // merges; causes accumulate
	got, err := DecodeStatus(msg)
	if err != nil {
		t.Fatal(err)
	}
	want := object.Status{Code: 404, Details: &object.StatusDetails{
		Name: "a", Kind: "pods", Causes: []object.StatusCause{{Type: "r1"}, {Field: "f2"}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDecodeStatusMalformed(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want string
	}{
		{"code as bytes", "\x32\x00", "protobuf Status: field 6 (code) has wire type bytes, want varint"},
		{"truncated code", "\x30\xff", "protobuf Status: truncated field 6"},
		{"metadata as varint", "\x08\x00", "protobuf Status: field 1 (metadata) has wire type varint, want bytes"},
		{"message past the end", "\x1a\x09gone", "protobuf Status: truncated field 3 (a 9-byte value, 4 bytes left)"},
		{"reason as fixed32", "\x25\x00\x00\x00\x00", "protobuf Status: field 4 (reason) has wire type fixed32, want bytes"},
		{"details as varint", "\x28\x01", "protobuf Status: field 5 (details) has wire type varint, want bytes"},
		{"retryAfterSeconds as bytes", "\x2a\x02\x2a\x00", "protobuf Status details: field 5 (retryAfterSeconds) has wire type bytes, want varint"},
		{"uid past details", "\x2a\x02\x32\x03", "protobuf Status details: truncated field 6 (a 3-byte value, 0 bytes left)"},
		{"cause as varint", "\x2a\x02\x20\x01", "protobuf Status details: field 4 (causes) has wire type varint, want bytes"},
		{"cause field as varint", "\x2a\x04\x22\x02\x18\x01", "protobuf Status details.causes: field 3 (field) has wire type varint, want bytes"},
		{"metadata past the end", "\x0a\x01", "protobuf Status: truncated field 1 (a 1-byte value, 0 bytes left)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := DecodeStatus([]byte(c.in))
			if err == nil {
				t.Fatalf("no error; got %+v", s)
			}
			if diff := cmp.Diff(c.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}
