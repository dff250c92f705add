package jsonscan

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var validCases = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e+3`, `-12.25E-2`, `true`, `false`, `null`, ` {"a" : [1, 2, {"b": null}] } `,
	`"esc \" \\ \/ \b \f \n \r \t \u00e9 \uD83D\uDE00"`, `{"type":"MODIFIED","object":{"metadata":{"name":"a"}}}`,
	"\"caf\xc3\xa9\"", "\"\xff\"", // bytes from 0x20 up, valid UTF-8 or not, as json.Valid
	``, ` `, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[1 2]`, `{"a":1 "b":2}`, `{a:1}`, `01`, `-`, `1.`, `.5`,
	`1e`, `1e+`, `+1`, `tru`, `nul`, `truex`, `"abc`, `"\x"`, `"\u12"`, `"\u12G4"`, "\"\x1f\"", `{} {}`, `[]]`, `"\`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000), strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
}

func TestValidMatchesEncodingJSON(t *testing.T) {
	cases := validCases
	frames, _ := filepath.Glob("../../listwatch/testdata/*.json")
	for _, f := range frames {
		b, err := os.ReadFile(f)
		if err == nil {
			cases = append(cases, string(b))
		}
	}
	for _, c := range cases {
		if got, want := Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%.60q) = %v, json.Valid says %v", c, got, want)
		}
	}
}

func FuzzValid(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := Valid(data), json.Valid(data); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid says %v", data, got, want)
		}
	})
}

func BenchmarkValid(b *testing.B) {
	doc := []byte(`{"type":"MODIFIED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-7d9f8c6b5-x2x9z","namespace":"bench","labels":{"app":"web","pod-template-hash":"7d9f8c6b5"}},"spec":{"containers":[{"name":"web","image":"nginx:1.27","ports":[{"containerPort":8080}],"resources":{"requests":{"cpu":"100m"}}}]},"status":{"phase":"Running","podIP":"10.1.2.3","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-11-01T10:00:00Z"}]}}}`)
	b.Run("jsonscan", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			Valid(doc)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			json.Valid(doc)
		}
	})
}

// Every place a quote, a backslash escape or a control byte can take in the eight-byte
// words validString steps over gives json.Valid's answer.
func TestValidStringWordBoundaries(t *testing.T) {
	for n := 0; n <= 20; n++ {
		for at := 0; at < n; at++ {
			for _, special := range []string{`"`, `\n`, `\u00e9`, "\x01", "\x1f", `\x`, "\xc3\xa9", `\`} {
				b := []byte(strings.Repeat("a", at) + special + strings.Repeat("b", n-at))
				doc := append(append([]byte(`"`), b...), '"')
				if got, want := Valid(doc), json.Valid(doc); got != want {
					t.Errorf("Valid(%q) = %v, json.Valid says %v", doc, got, want)
				}
			}
		}
	}
}
