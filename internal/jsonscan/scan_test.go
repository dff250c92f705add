package jsonscan

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
		{`,1`, 0, -1}, // no value at all
		{`]`, 0, -1},
		{`1`, -1, -1},
	} {
		if got := ValueEnd([]byte(tt.data), tt.at); got != tt.want {
			t.Errorf("ValueEnd(%q, %d) = %d, want %d", tt.data, tt.at, got, tt.want)
		}
	}
}

func TestString(t *testing.T) {
	for _, tt := range []struct {
		data  string
		end   int
		plain bool
	}{
		{`"" `, 2, true}, {`"\\" `, 4, false}, {`"\""`, 4, false}, {`"\"`, -1, false}, {`a"`, -1, false}, {``, -1, false},
		{`"twelve bytes"`, 14, true}, {`"eight by\"tes and more"x`, 24, false}, {`"0123456789abcdef\\"`, 20, false},
	} {
		if end, plain := String([]byte(tt.data), 0); end != tt.end || plain != tt.plain {
			t.Errorf("String(%q) = %d, %v; want %d, %v", tt.data, end, plain, tt.end, tt.plain)
		}
	}
}

// stringRestBytes is stringRest one byte at a time: the reference the eight-byte scan
// must agree with.
func stringRestBytes(data []byte, i int) (end int, plain, cut bool) {
	plain = true
	for ; i < len(data); i++ {
		switch data[i] {
		case '\\':
			plain = false
			i++
		case '"':
			return i + 1, plain, false
		}
	}
	return -1, false, i > len(data)
}

// Every place a quote or backslash can take in the eight-byte words, and every place the
// data can end, give what a byte-by-byte scan gives.
func TestStringRestMatchesByteByByte(t *testing.T) {
	for n := 0; n <= 20; n++ {
		for q := 0; q < n; q++ {
			for bs := -1; bs < n; bs++ {
				b := []byte(strings.Repeat("a", n))
				if bs >= 0 {
					b[bs] = '\\'
				}
				b[q] = '"'
				for from := 0; from <= 2; from++ {
					end, plain, cut := stringRest(b, from)
					wantEnd, wantPlain, wantCut := stringRestBytes(b, from)
					if end != wantEnd || plain != wantPlain || cut != wantCut {
						t.Fatalf("stringRest(%q, %d) = %d, %v, %v; want %d, %v, %v", b, from, end, plain, cut, wantEnd, wantPlain, wantCut)
					}
				}
			}
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
		`{"long strings":"0123456789abcdef\"0123456789abcdef\\","x":["]0123456789\\\\"]}`,
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

func TestEachString(t *testing.T) {
	for _, tt := range []struct {
		data    string
		at      int
		strings []string
		end     int
	}{
		{`{"name":"a","n":[1,"x\"y",{}],"e":""} ,`, 0, []string{`"name"`, `"a"`, `"n"`, `"x\"y"`, `"e"`, `""`}, 37},
		{`x:"Always",`, 2, []string{`"Always"`}, 10},
		{`[]`, 0, nil, 2},
		{`12.5}`, 0, nil, 4},
		{`null`, 0, nil, 4},
		{`{"a":"b"`, 0, []string{`"a"`, `"b"`}, -1},
		{`{"a":"b`, 0, []string{`"a"`}, -1},
		{`"open`, 0, nil, -1},
		{``, 0, nil, -1},
	} {
		var got []string
		end := EachString([]byte(tt.data), tt.at, func(start, end int) { got = append(got, tt.data[start:end]) })
		if d := cmp.Diff(tt.strings, got); d != "" || end != tt.end {
			t.Errorf("EachString(%q): end %d, want %d; strings (-want +got):\n%s", tt.data, end, tt.end, d)
		}
	}
}

// FuzzScanner checks, for any input, that the ways of finding a value's end agree:
// scanning in two pieces, ValueEnd, and EachString, whose strings are those String finds.
func FuzzScanner(f *testing.F) {
	f.Add([]byte(`{"a":"\"}"}`), uint8(6))
	f.Add([]byte(`[["\\"]]`), uint8(4))
	f.Add([]byte(`{"name":"0123456789abcdef","x":[true,"\u00e9"]}`), uint8(13))
	f.Fuzz(func(t *testing.T, data []byte, cut uint8) {
		want := ValueEnd(data, 0)
		end := EachString(data, 0, func(start, end int) {
			if e, _ := String(data, start); e != end {
				t.Fatalf("%q: EachString's string at %d ends at %d, String says %d", data, start, end, e)
			}
		})
		if end != want {
			t.Fatalf("%q: EachString ends at %d, ValueEnd at %d", data, end, want)
		}
		if len(data) == 0 || (data[0] != '{' && data[0] != '[') {
			return
		}
		c := int(cut) % (len(data) + 1)
		if got := endInPieces(string(data), c); got != want {
			t.Fatalf("%q cut at %d: end %d, whole %d", data, c, got, want)
		}
	})
}

// BenchmarkValueEnd measures finding the end of a watch event, most of whose bytes are
// in strings.
func BenchmarkValueEnd(b *testing.B) {
	b.SetBytes(int64(len(benchEvent)))
	for b.Loop() {
		if ValueEnd(benchEvent, 0) != len(benchEvent) {
			b.Fatal("wrong end")
		}
	}
}

var benchEvent = []byte(`{"type":"MODIFIED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-7d9f8c6b5-x2x9z","namespace":"bench","labels":{"app":"web","pod-template-hash":"7d9f8c6b5"}},"spec":{"containers":[{"name":"web","image":"nginx:1.27","ports":[{"containerPort":8080}],"resources":{"requests":{"cpu":"100m"}}}]},"status":{"phase":"Running","podIP":"10.1.2.3","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-11-01T10:00:00Z"}]}}}`)
