package codec

import (
	"testing"
)

// The allocations of a decode are counted, not timed: each is garbage a watch makes per
// event. A slice is one allocation (its array), and a map of strings seen before is the
// map alone.
func TestDecodeAllocations(t *testing.T) {
	for _, tc := range []struct {
		name string
		data string
		want float64
	}{
		// Before: 2, the array and the header reflect.MakeSlice returned it in.
		{"a slice of three structs", `{"conditions":[{"type":"Ready"},{"type":"Initialized"},{"type":"PodScheduled"}]}`, 1},
		// The map is two: its header and its one group of slots. Before: 8, a key or value
		// more each, the result mapString declared for json.Unmarshal.
		{"a map of interned strings", `{"labels":{"app":"web","tier":"frontend","team":"platform"}}`, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.data)
			var status testStatus
			var meta testMeta
			decode := func() {
				var err error
				if tc.data[2] == 'c' {
					status = testStatus{}
					err = unmarshal(testRegistry, data, &status)
				} else {
					meta = testMeta{}
					err = unmarshal(testRegistry, data, &meta)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			decode() // interns the strings
			got := testing.AllocsPerRun(100, decode)
			want := tc.want
			if raceDetector {
				want++ // a scratch slice the race detector's sync.Pool dropped, now and then
			}
			if got > want {
				t.Errorf("%v allocations, want at most %v", got, tc.want)
			}
		})
	}
}
