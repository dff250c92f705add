package kubeproto

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/object"
)

func ptr[T any](v T) *T { return &v }

// parseItems returns the list's metadata and its items.
func parseItems(msg []byte) (object.ListMeta, [][]byte, error) {
	var items [][]byte
	meta, err := ParseList(msg, func(obj []byte) error {
		items = append(items, obj)
		return nil
	})
	return meta, items, err
}

func TestAppendListBytes(t *testing.T) {
	meta := object.ListMeta{ResourceVersion: "12", Continue: "c", RemainingItemCount: ptr[int64](3)}
	got := AppendList(nil, meta, [][]byte{[]byte("a"), {}})
	// selfLink, resourceVersion and continue are always written, as the generated code
	// writes them; remainingItemCount only when set.
	want := "\x0a\x0b" + "\x0a\x00" + "\x12\x0212" + "\x1a\x01c" + "\x20\x03" +
		"\x12\x01a" + "\x12\x00"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("AppendList (-want +got):\n%s", diff)
	}
}

func TestListRoundTrip(t *testing.T) {
	cases := []struct {
		name  string
		meta  object.ListMeta
		items [][]byte
	}{
		{"empty", object.ListMeta{}, nil},
		{"page", object.ListMeta{ResourceVersion: "12345", Continue: "eyJ2Ijo", RemainingItemCount: ptr[int64](42)},
			[][]byte{[]byte("one"), []byte("two"), make([]byte, 300)}},
		{"zero remaining count is kept", object.ListMeta{RemainingItemCount: ptr[int64](0)}, [][]byte{{}}},
		{"negative remaining count", object.ListMeta{RemainingItemCount: ptr[int64](-1)}, nil},
		{"sharded", object.ListMeta{ResourceVersion: "7", ShardInfo: &object.ShardInfo{Selector: "shardRange(object.metadata.uid, '0x0', '0x8')"}}, nil},
		{"sharded, empty selector", object.ListMeta{ShardInfo: &object.ShardInfo{}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := AppendList(nil, c.meta, c.items)
			meta, items, err := parseItems(msg)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.meta, meta); diff != "" {
				t.Errorf("meta (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.items, items); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseListLenient(t *testing.T) {
	var meta1, meta2, msg []byte
	meta1 = appendStringField(meta1, listMetaResourceVersion, "10")
	meta2 = appendStringField(meta2, 9, "x") // unknown in ListMeta
	meta2 = appendVarintField(meta2, listMetaRemainingItemCount, 5)
	meta2 = appendStringField(meta2, listMetaSelfLink, "/api/v1/pods") // dropped

	msg = appendBytesField(msg, listItems, []byte("first")) // an item before metadata
	msg = appendBytesField(msg, listMetadata, meta1)
	msg = appendVarintField(msg, 15, 1)              // unknown in List
	msg = appendBytesField(msg, listMetadata, meta2) // merges into the first
	msg = appendBytesField(msg, listItems, []byte("second"))
	meta, items, err := parseItems(msg)
	if err != nil {
		t.Fatal(err)
	}
	want := object.ListMeta{ResourceVersion: "10", RemainingItemCount: ptr[int64](5)}
	if diff := cmp.Diff(want, meta); diff != "" {
		t.Errorf("meta (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]byte{[]byte("first"), []byte("second")}, items); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
}

func TestParseListItemError(t *testing.T) {
	msg := AppendList(nil, object.ListMeta{ResourceVersion: "1"}, [][]byte{[]byte("a"), []byte("b"), []byte("c")})
	stop := errors.New("stop")
	var seen []string
	_, err := ParseList(msg, func(obj []byte) error {
		seen = append(seen, string(obj))
		if string(obj) == "b" {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Errorf("err = %v, want the callback's error itself", err)
	}
	if diff := cmp.Diff([]string{"a", "b"}, seen); diff != "" {
		t.Errorf("items seen (-want +got):\n%s", diff)
	}
}

func TestParseListNilItem(t *testing.T) {
	msg := AppendList(nil, object.ListMeta{ResourceVersion: "9"}, [][]byte{[]byte("a")})
	meta, err := ParseList(msg, nil)
	if err != nil || meta.ResourceVersion != "9" {
		t.Errorf("ParseList(msg, nil) = %+v, %v", meta, err)
	}
}

func TestParseListMalformed(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want string
	}{
		{"truncated item", "\x12\x05abc", "protobuf list: truncated field 2 (a 5-byte value, 3 bytes left)"},
		{"item as varint", "\x10\x05", "protobuf list: field 2 (items) has wire type varint, want bytes"},
		{"metadata as fixed64", "\x09\x00\x00\x00\x00\x00\x00\x00\x00", "protobuf list: field 1 (metadata) has wire type fixed64, want bytes"},
		{"metadata past the end", "\x0a\x10\x12\x01", "protobuf list: truncated field 1 (a 16-byte value, 2 bytes left)"},
		{"resourceVersion past metadata", "\x0a\x02\x12\x05", "protobuf list metadata: truncated field 2 (a 5-byte value, 0 bytes left)"},
		{"resourceVersion as varint", "\x0a\x02\x10\x01", "protobuf list metadata: field 2 (resourceVersion) has wire type varint, want bytes"},
		{"selfLink as varint", "\x0a\x02\x08\x01", "protobuf list metadata: field 1 (selfLink) has wire type varint, want bytes"},
		{"remainingItemCount as bytes", "\x0a\x02\x22\x00", "protobuf list metadata: field 4 (remainingItemCount) has wire type bytes, want varint"},
		{"truncated remainingItemCount", "\x0a\x02\x20\x80", "protobuf list metadata: truncated field 4"},
		{"shardInfo as varint", "\x0a\x02\x28\x00", "protobuf list metadata: field 5 (shardInfo) has wire type varint, want bytes"},
		{"selector as varint", "\x0a\x04\x2a\x02\x08\x00", "protobuf list metadata.shardInfo: field 1 (selector) has wire type varint, want bytes"},
		{"truncated tag", "\x0a\x00\xff", "protobuf list: truncated field tag at byte 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			meta, err := ParseList([]byte(c.in), func([]byte) error { calls++; return nil })
			if err == nil {
				t.Fatalf("no error; got %+v after %d items", meta, calls)
			}
			if diff := cmp.Diff(c.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(object.ListMeta{}, meta); diff != "" {
				t.Errorf("meta returned with the error (-want +got):\n%s", diff)
			}
		})
	}
}
