package listwatch

import (
	"strings"
	"testing"
)

// pending says "a whole item is buffered" only when next would return it without
// reading: past the comma between items, not at it.
func TestItemSourcePending(t *testing.T) {
	cases := []struct {
		name     string
		buffered string // what the reader holds after the first item
		want     bool
	}{
		{"the next item whole", `,{"a":1}`, true},
		{"the next item cut", `,{"a":`, false},
		{"only the comma", `,`, false},
		{"the comma and white space", ", \n", false},
		{"the closing bracket", ` ]`, true},
		{"nothing", ``, false},
		{"garbage: next fails at once", `,x`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &itemSource{fr: newFrameReader(strings.NewReader(`{"first":0}`+tc.buffered), 0)}
			if _, _, _, err := s.next(nil); err != nil {
				t.Fatal(err)
			}
			if got := s.pending(); got != tc.want {
				t.Errorf("pending with %q buffered = %v, want %v", tc.buffered, got, tc.want)
			}
		})
	}
}
