package listwatch

import (
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
)

// The selector travels as the shardSelector parameter in the form the server echoes, on
// lists and watches alike, and a zero Selector sends no parameter at all: an empty one
// is an error on a gated server ("empty shard selector is not allowed").
func TestShardSelectorQuery(t *testing.T) {
	lower := shard.Selector{Field: shard.Namespace, Ranges: []shard.Range{{First: 0, Last: 1<<63 - 1}}}
	two := shard.Selector{Field: shard.UID, Ranges: []shard.Range{{First: 0, Last: 0xf}, {First: 1 << 63, Last: 1<<64 - 1}}}
	const lowerText = "shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')"
	const twoText = "shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000010')" +
		" || shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')"
	for _, tc := range []struct {
		name  string
		query url.Values
		want  url.Values
	}{
		{"a list without a selector", ListOptions{ResourceVersion: "0"}.query(),
			url.Values{"resourceVersion": {"0"}}},
		{"a list", ListOptions{ResourceVersion: "0", Limit: 500, Shard: lower}.query(),
			url.Values{"resourceVersion": {"0"}, "limit": {"500"}, "shardSelector": {lowerText}}},
		{"a continued list", ListOptions{Continue: "tok", Shard: two}.query(),
			url.Values{"continue": {"tok"}, "shardSelector": {twoText}}},
		{"a watch without a selector", WatchOptions{ResourceVersion: "7"}.query(),
			url.Values{"watch": {"1"}, "resourceVersion": {"7"}}},
		{"a watch", WatchOptions{ResourceVersion: "7", Shard: lower}.query(),
			url.Values{"watch": {"1"}, "resourceVersion": {"7"}, "shardSelector": {lowerText}}},
		{"a streaming list", WatchOptions{SendInitialEvents: true, AllowBookmarks: true, ResourceVersionMatch: "NotOlderThan", Shard: two}.query(),
			url.Values{"watch": {"1"}, "sendInitialEvents": {"true"}, "allowWatchBookmarks": {"true"},
				"resourceVersionMatch": {"NotOlderThan"}, "resourceVersion": {""}, "shardSelector": {twoText}}},
		{"a field without ranges is no selector", WatchOptions{Shard: shard.Selector{Field: shard.UID}}.query(),
			url.Values{"watch": {"1"}}},
	} {
		if d := cmp.Diff(tc.want, tc.query); d != "" {
			t.Errorf("%s: query (-want +got):\n%s", tc.name, d)
		}
	}
	// What the server reads back is the selector sent.
	enc := ListOptions{Shard: two}.query().Encode()
	back, err := url.ParseQuery(enc)
	if err != nil {
		t.Fatal(err)
	}
	sel, err := shard.Parse(back.Get("shardSelector"))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(two, sel); d != "" {
		t.Errorf("selector after encoding and parsing (-sent +read):\n%s", d)
	}
}

// metadata.shardInfo is decoded into ListMeta.ShardInfo, and its absence is nil: that is
// how a client tells a server that sharded from one that ignored the selector.
func TestListDecodesShardInfo(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       *object.ShardInfo
	}{
		{"sharded", `{"kind":"PodList","metadata":{"resourceVersion":"5","shardInfo":{"selector":"shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')"}},"items":[]}`,
			&object.ShardInfo{Selector: "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')"}},
		{"not sharded", `{"kind":"PodList","metadata":{"resourceVersion":"5"},"items":[]}`, nil},
		{"after the items", `{"kind":"PodList","items":[],"metadata":{"resourceVersion":"5","shardInfo":{"selector":"x"}}}`,
			&object.ShardInfo{Selector: "x"}},
	} {
		list, err := decodeListReading[*object.Pod](strings.NewReader(tc.body), 0, object.DecodeOptions{}, defaultReadAhead(nil), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if d := cmp.Diff(tc.want, list.ShardInfo); d != "" {
			t.Errorf("%s: ShardInfo (-want +got):\n%s", tc.name, d)
		}
	}
}
