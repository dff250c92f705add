package object

import (
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzDecodeRoundTrip: whatever valid JSON decodes into a Pod (or Raw) must encode, and
// decoding that encoding must give the same value: the hand-written member scanner and
// leaf fast paths agree with encoding/json and lose nothing.
func FuzzDecodeRoundTrip(f *testing.F) {
	f.Add([]byte(deploymentJSON))
	f.Add([]byte(`{"metadata":{"name":"p","labels":{"a":"b\u00e9","c":""},"generation":-3},"spec":{"nodeName":"n\"1"},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-02T03:04:05.123Z"}]}}`))
	f.Add([]byte(`{"metadata":null,"spec":{},"status":{"conditions":null}}`))
	f.Add([]byte(`{"kind":"X","metadata":{"creationTimestamp":null,"annotations":{"k":"v"}},"data":[1,2.5e3,true,null,{"x":[]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) || !utf8.Valid(data) { // JSON text is UTF-8 (RFC 8259)
			return
		}
		check[Pod](t, data)
		check[Raw](t, data)
		check[Deployment](t, data)
	})
}

func check[T any](t *testing.T, data []byte) {
	var first T
	if err := json.Unmarshal(data, &first); err != nil {
		return
	}
	out, err := json.Marshal(&first)
	if err != nil {
		t.Fatalf("%T decoded but does not encode: %v", first, err)
	}
	var second T
	if err := json.Unmarshal(out, &second); err != nil {
		t.Fatalf("%T: its own encoding %s does not decode: %v", first, out, err)
	}
	// An empty map or list is omitted on encode (omitempty), which the API reads as absent.
	notRaw := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().Type() != reflect.TypeFor[json.RawMessage]() }, cmpopts.EquateEmpty())
	if d := cmp.Diff(first, second, semanticRaw, notRaw); d != "" {
		t.Fatalf("%T changed across a round trip (-first +second):\n%s", first, d)
	}
}

// semanticRaw compares raw JSON by meaning: encoding compacts a RawMessage's spacing.
var semanticRaw = cmp.Comparer(func(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	return cmp.Equal(x, y)
})
