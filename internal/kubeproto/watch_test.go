package kubeproto

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAppendWatchEventBytes(t *testing.T) {
	cases := []struct {
		name string
		ev   WatchEvent
		want string
	}{
		{"object", WatchEvent{Type: "ADDED", Object: []byte("k8s\x00...")},
			"\x0a\x05ADDED" + "\x12\x09" + "\x0a\x07k8s\x00..."},
		// RawExtension writes raw only when it is not nil; WatchEvent writes object always.
		{"no object", WatchEvent{Type: "BOOKMARK"}, "\x0a\x08BOOKMARK" + "\x12\x00"},
		{"empty object", WatchEvent{Object: []byte{}}, "\x0a\x00" + "\x12\x02\x0a\x00"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := AppendWatchEvent(nil, c.ev)
			if diff := cmp.Diff(c.want, string(got)); diff != "" {
				t.Errorf("AppendWatchEvent (-want +got):\n%s", diff)
			}
			back, err := ParseWatchEvent(got)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.ev, back); diff != "" {
				t.Errorf("ParseWatchEvent(AppendWatchEvent(ev)) (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWatchEventOfEnvelope(t *testing.T) {
	obj := AppendEnvelope(nil, Envelope{APIVersion: "v1", Kind: "Pod", Raw: make([]byte, 200)})
	msg := AppendWatchEvent(nil, WatchEvent{Type: "MODIFIED", Object: obj})
	ev, err := ParseWatchEvent(msg)
	if err != nil {
		t.Fatal(err)
	}
	if &ev.Object[0] != &msg[len(msg)-len(obj)] {
		t.Error("Object is a copy, want a part of the input")
	}
	e, err := ParseEnvelope(ev.Object)
	if err != nil {
		t.Fatal(err)
	}
	if e.Kind != "Pod" || len(e.Raw) != 200 {
		t.Errorf("envelope of the object: %+v", e)
	}
}

func TestParseWatchEventMalformed(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want string
	}{
		{"type as varint", "\x08\x01", "protobuf watch event: field 1 (type) has wire type varint, want bytes"},
		{"truncated type", "\x0a\x05ADD", "protobuf watch event: truncated field 1 (a 5-byte value, 3 bytes left)"},
		{"object as varint", "\x0a\x00\x10\x00", "protobuf watch event: field 2 (object) has wire type varint, want bytes"},
		{"raw past object", "\x12\x02\x0a\x05", "protobuf watch event object: truncated field 1 (a 5-byte value, 0 bytes left)"},
		{"raw as fixed32", "\x12\x05\x0d\x00\x00\x00\x00", "protobuf watch event object: field 1 (raw) has wire type fixed32, want bytes"},
		{"end-group tag", "\x0c", "protobuf watch event: field 1: protobuf: unknown wire type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev, err := ParseWatchEvent([]byte(c.in))
			if err == nil {
				t.Fatalf("no error; got %+v", ev)
			}
			if diff := cmp.Diff(c.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}
