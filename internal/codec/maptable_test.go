package codec

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A slot holding another map under the same hash (a collision, forced here) is checked
// against the text and not handed out.
func TestMapTableChecksTheCandidate(t *testing.T) {
	text := []byte(`{"app":"web","tier":"front"}`)
	tab := NewMapTable()
	h := tab.pairHash("app", "web") + tab.pairHash("tier", "front")
	for _, wrong := range []map[string]string{
		{"app": "web", "tier": "back"},                // a value differs
		{"app": "web", "tier": "front", "extra": "x"}, // every pair of the text, and more
		{"app": "web"},                  // fewer
		{"app": "web", "tyer": "front"}, // a key differs
	} {
		tab.slot(h).Store(&sharedMap{h: h, m: wrong})
		p := decodeTest(t, []byte(`{"metadata":{"labels":`+string(text)+`}}`), Options{Maps: tab})
		if d := cmp.Diff(map[string]string{"app": "web", "tier": "front"}, p.Metadata.Labels); d != "" {
			t.Errorf("with %v in the slot, labels (-want +got):\n%s", wrong, d)
		}
	}
}

// A text that repeats a pair has only pairs of a larger map in its slot, and as many:
// the whole hash tells them apart (found by a reviewer; the text's map was the other).
func TestMapTableTellsRepeatedPairsApart(t *testing.T) {
	tab := NewMapTable()
	h := 2 * tab.pairHash("a", "1")
	other := map[string]string{"a": "1", "b": "2"}
	tab.slot(h).Store(&sharedMap{h: tab.pairHash("a", "1") + tab.pairHash("b", "2"), m: other})
	p := decodeTest(t, []byte(`{"metadata":{"labels":{"a":"1","a":"1"}}}`), Options{Maps: tab})
	if d := cmp.Diff(map[string]string{"a": "1"}, p.Metadata.Labels); d != "" {
		t.Errorf("labels (-want +got):\n%s", d)
	}
}
