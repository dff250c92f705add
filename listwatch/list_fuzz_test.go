package listwatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/kinformer/kinformer/object"
)

// FuzzListDecoder feeds arbitrary bytes to the list decoder Resource.List uses. It must
// never panic; what it decodes from UTF-8 must survive encode → decode unchanged; and it must agree
// with json.Unmarshal into object.List, which it replaced to read pages as they stream
// in: same success, same list (except where decodeListReading documents otherwise). A second,
// tight size bound must either change nothing or fail with ErrFrameTooLarge.
func FuzzListDecoder(f *testing.F) {
	for _, seed := range []string{
		`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7","continue":"eyJ2IjoxfQ","remainingItemCount":2},` +
			`"items":[{"metadata":{"name":"a","namespace":"ns","uid":"u1","resourceVersion":"5","labels":{"app":"web"}},"spec":{"nodeName":"n1"},"status":{"phase":"Running"}},` +
			`{"metadata":{"name":"b","namespace":"ns","resourceVersion":"6"},"future":{"field":[1,2.5,null,true]}}]}`,
		`{"kind":"PodList","items":[]}`, `{}`, `null`, ` {"items":null} `, `{"items":[null]}`,
		`{"ITEMS":[{"metadata":{"name":"upper"}}]}`, `{"items":[{"metadata":{"name":"x"}}],"items":[]}`,
		`{"metadata":{"resourceVersion":"1"},"metadata":{"continue":"c"}}`, `{"kind":5}`,
		`{"items":[{"metadata":{"name":7}}]}`, `{"items":{}}`, `{} {}`, `{}x`, `[]`, `"list"`, `{"items":[1]}`,
		`{"items":[{"metadata":{"name":"` + strings.Repeat("n", 300) + `"}}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkListDecoder[*object.Raw](t, data)
		checkListDecoder[*object.Pod](t, data)
	})
}

// tightBound is small enough for the fuzzer's inputs to cross it.
const tightBound = 256

func checkListDecoder[T object.Object](t *testing.T, data []byte) {
	got, err := decodeListReading[T](iotest.HalfReader(bytes.NewReader(data)), 0, object.DecodeOptions{}, readAhead{on: true, pool: newBatchPool()}, nil)
	// The items read on one goroutine or two: the same list, or the same error.
	one, oneErr := decodeListReading[T](bytes.NewReader(data), 0, object.DecodeOptions{}, readAhead{}, nil)
	if fmt.Sprint(err) != fmt.Sprint(oneErr) || err == nil && encode(t, got) != encode(t, one) {
		t.Fatalf("%q: read on two goroutines %v, on one %v", data, err, oneErr)
	}
	var want object.List[T]
	wantErr := json.Unmarshal(data, &want)
	switch {
	case err == nil && wantErr != nil:
		t.Fatalf("decoded %q, which json.Unmarshal refuses: %v", data, wantErr)
	case err != nil && wantErr == nil && !hasNilItem(want.Items):
		t.Fatalf("refused %q, which json.Unmarshal decodes: %v", data, err)
	case err == nil && itemsMembers(data) <= 1 && encode(t, got) != encode(t, &want):
		// json.Unmarshal decodes a repeated items array into the objects of the one
		// before (which no server sends); decodeListReading makes new ones, so only lists with
		// one items member are compared.
		t.Fatalf("%q decodes to\n%s\nbut json.Unmarshal gives\n%s", data, encode(t, got), encode(t, &want))
	}
	if err != nil || !utf8.Valid(data) {
		// JSON text is UTF-8 (RFC 8259): invalid bytes in a string are kept as they came
		// by the object decoder and become U+FFFD on encode, which is not a round trip.
		return
	}

	enc := encode(t, got)
	again, err := decodeListReading[T](strings.NewReader(enc), 0, object.DecodeOptions{}, defaultReadAhead(nil), nil)
	if err != nil {
		t.Fatalf("re-encoded list %s does not decode: %v", enc, err)
	}
	if encode(t, again) != enc {
		t.Fatalf("encode → decode changed the list:\n%s\n%s", enc, encode(t, again))
	}

	bounded, err := decodeListReading[T](bytes.NewReader(data), tightBound, object.DecodeOptions{}, defaultReadAhead(nil), nil)
	switch {
	case errors.Is(err, ErrFrameTooLarge):
		if len(data) <= tightBound {
			t.Fatalf("%q (%d bytes) is over a %d-byte bound: %v", data, len(data), tightBound, err)
		}
	case err != nil:
		t.Fatalf("a tight bound made %q fail otherwise: %v", data, err)
	case encode(t, bounded) != enc:
		t.Fatalf("a tight bound changed the list:\n%s\n%s", enc, encode(t, bounded))
	}
}

func encode(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encoding %#v: %v", v, err)
	}
	return string(b)
}

func hasNilItem[T object.Object](items []T) bool {
	var null T
	for _, it := range items {
		if any(it) == any(null) {
			return true
		}
	}
	return false
}

// itemsMembers counts the members of the top-level object that encoding/json would
// decode into Items.
func itemsMembers(data []byte) int {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0
	}
	n := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return n
		}
		if key, _ := tok.(string); strings.EqualFold(key, "items") {
			n++
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return n
		}
	}
	return n
}

// An object over the bound fails the page with an error that names the limit and the
// option, and wraps ErrFrameTooLarge; objects up to the bound decode; the decoder never
// needs more than one object (plus its slack) at a time, so a page far larger than the
// bound is fine.
func TestListDecoderBoundsEachObject(t *testing.T) {
	item := func(name string, size int) string {
		return `{"metadata":{"name":"` + name + `"},"data":"` + strings.Repeat("x", size) + `"}`
	}
	const bound = 4096
	fits := item("fits", bound-len(item("fits", 0)))
	var page strings.Builder
	page.WriteString(`{"kind":"List","metadata":{"resourceVersion":"9"},"items":[`)
	for i := range 100 {
		if i > 0 {
			page.WriteString(",")
		}
		page.WriteString(fits)
	}
	page.WriteString("]}")
	list, err := decodeListReading[*object.Raw](strings.NewReader(page.String()), bound, object.DecodeOptions{}, defaultReadAhead(nil), nil)
	if err != nil || len(list.Items) != 100 || list.ResourceVersion != "9" {
		t.Fatalf("a %d-byte page of objects within the bound: %d items, rv %q, err %v", page.Len(), len(list.Items), list.ResourceVersion, err)
	}

	tooBig := `{"items":[` + fits + "," + item("big", bound) + `]}`
	_, err = decodeListReading[*object.Raw](strings.NewReader(tooBig), bound, object.DecodeOptions{}, defaultReadAhead(nil), nil)
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("error %v does not wrap ErrFrameTooLarge", err)
	}
	for _, want := range []string{"item 1", "4096-byte limit", "MaxFrameSize"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}

	// A body that never ends inside one object fails once it passes the bound, instead
	// of being read until memory runs out.
	endless := io.MultiReader(strings.NewReader(`{"items":[{"data":"`), neverEnding('x'))
	if _, err := decodeListReading[*object.Raw](endless, bound, object.DecodeOptions{}, defaultReadAhead(nil), nil); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("endless object: error %v does not wrap ErrFrameTooLarge", err)
	}
}

// neverEnding is an endless stream of one byte.
type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}
