package jsonscan

import (
	"testing"
)

func TestValueEnd(t *testing.T) {
	for _, tt := range []struct {
		data string
		at   int
		want int
	}{
		{`"abc" ,`, 0, 5},
		{`"a\"b"`, 0, 6},
		{`"a\\"b"`, 0, 5},
		{`"abc`, 0, -1},
		{`"ab\`, 0, -1},
		{`{"a":"}"} `, 0, 9},
		{`[1,[2,{"x":"]"}]],`, 0, 17},
		{`{"a":[1,2}`, 0, -1},
		{`{"a":"\"}`, 0, -1},
		{`x: 123,`, 3, 6},
		{`true}`, 0, 4},
		{`-1.5e3`, 0, 6},
		{`null `, 0, 4},
		{``, 0, -1},
		{`  `, 2, -1},
	} {
		if got := ValueEnd([]byte(tt.data), tt.at); got != tt.want {
			t.Errorf("ValueEnd(%q, %d) = %d, want %d", tt.data, tt.at, got, tt.want)
		}
	}
}

func TestStringEnd(t *testing.T) {
	for _, tt := range []struct {
		data string
		want int
	}{
		{`"" `, 2}, {`"\\" `, 4}, {`"\""`, 4}, {`"\"`, -1}, {`a"`, -1}, {``, -1},
	} {
		if got := StringEnd([]byte(tt.data), 0); got != tt.want {
			t.Errorf("StringEnd(%q) = %d, want %d", tt.data, got, tt.want)
		}
	}
}

func TestSkipSpace(t *testing.T) {
	if got := SkipSpace([]byte(" \t\r\n{ "), 0); got != 4 {
		t.Errorf("SkipSpace = %d, want 4", got)
	}
	if got := SkipSpace([]byte("  "), 1); got != 2 {
		t.Errorf("SkipSpace at the end = %d, want 2", got)
	}
}

// TestScannerPieces checks that a value cut into pieces anywhere, including between a
// backslash and the byte it escapes and into empty pieces, ends where it does whole.
func TestScannerPieces(t *testing.T) {
	for _, data := range []string{
		`{"a":"x\"}y","b":[1,{"c":"\\"}],"d":"\\\""} tail`,
		`[{"k":"]}\\"},"\"[",[]]]`,
		`{"unterminated":"\"}`,
	} {
		whole := ValueEnd([]byte(data), 0)
		for cut1 := 0; cut1 <= len(data); cut1++ {
			for cut2 := cut1; cut2 <= len(data); cut2++ {
				if got := endInPieces(data, cut1, cut2); got != whole {
					t.Fatalf("%q cut at %d and %d: end %d, whole %d", data, cut1, cut2, got, whole)
				}
			}
		}
	}
}

func endInPieces(data string, cuts ...int) int {
	var s Scanner
	from := 0
	for _, to := range append(cuts, len(data)) {
		if n := s.End([]byte(data[from:to])); n >= 0 {
			return from + n
		}
		from = to
	}
	return -1
}

// FuzzScanner checks, for any input, that scanning in two pieces agrees with ValueEnd.
func FuzzScanner(f *testing.F) {
	f.Add([]byte(`{"a":"\"}"}`), uint8(6))
	f.Add([]byte(`[["\\"]]`), uint8(4))
	f.Fuzz(func(t *testing.T, data []byte, cut uint8) {
		if len(data) == 0 || (data[0] != '{' && data[0] != '[') {
			return
		}
		c := int(cut) % (len(data) + 1)
		if got, want := endInPieces(string(data), c), ValueEnd(data, 0); got != want {
			t.Fatalf("%q cut at %d: end %d, whole %d", data, c, got, want)
		}
	})
}
