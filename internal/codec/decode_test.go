package codec

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

// Decoding keeps no part of its input: every kept byte is a copy.
func TestDecodeRetainsNoInput(t *testing.T) {
	data := realisticPod(t)
	p := decodeTest(t, data, Options{})
	base := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	inside := func(p unsafe.Pointer) bool {
		return uintptr(p) >= base && uintptr(p) < base+uintptr(cap(data))
	}
	for _, u := range []unknown{p.Metadata.Unknown, p.Spec.Unknown, p.Status.Unknown, p.Status.Conditions[0].Unknown} {
		if len(u.m.run()) == 0 {
			t.Errorf("an Unknown without members: the test decodes the wrong document")
		}
		if inside(unsafe.Pointer(u.m.p)) {
			t.Errorf("an Unknown refers into the input")
		}
	}
	for _, s := range []string{p.Metadata.Name, p.Metadata.Namespace, p.Metadata.UID, p.Spec.NodeName, p.Metadata.OwnerReferences[0].Name, p.Metadata.Labels["app"], p.Status.Conditions[0].Type} {
		if s == "" || inside(unsafe.Pointer(unsafe.StringData(s))) {
			t.Errorf("string %q is empty or refers into the input", s)
		}
	}
}

// Short strings are interned, except the members Metadata.NotInterned names.
func TestDecodeInterns(t *testing.T) {
	data := []byte(`{"metadata":{"name":"web-1","namespace":"team-1","uid":"u-1"},"spec":{"nodeName":"node-1"}}`)
	if internSlot([]byte("team-1")) == internSlot([]byte("node-1")) {
		t.Skip("the two interned strings share a slot under this process's seed")
	}
	a, b := decodeTest(t, data, Options{}), decodeTest(t, data, Options{})
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	for _, tt := range []struct {
		what   string
		x, y   string
		shared bool
	}{
		{"namespace", a.Metadata.Namespace, b.Metadata.Namespace, true},
		{"node name", a.Spec.NodeName, b.Spec.NodeName, true},
		{"name", a.Metadata.Name, b.Metadata.Name, false},
		{"uid", a.Metadata.UID, b.Metadata.UID, false},
	} {
		if same(tt.x, tt.y) != tt.shared {
			t.Errorf("%s %q: shared %v, want %v", tt.what, tt.x, !tt.shared, tt.shared)
		}
	}
}

// Options change the top-level metadata only: a pod template's managedFields stay.
func TestDecodeOptions(t *testing.T) {
	data := []byte(`{"metadata":{"name":"p","labels":{"a":"b"},"managedFields":[1]},
	  "spec":{"template":{"metadata":{"managedFields":[2]}}}}`)
	tab := NewMapTable()
	for _, tt := range []struct {
		opts    Options
		managed string
	}{
		{Options{}, "[1]"},
		{Options{DropManagedFields: true}, ""},
		{Options{Maps: tab}, "[1]"},
		{Options{DropManagedFields: true, Maps: tab}, ""},
	} {
		p := decodeTest(t, data, tt.opts)
		if got := string(p.Metadata.Unknown.m.Get("managedFields")); got != tt.managed {
			t.Errorf("%+v: managedFields %q, want %q", tt.opts, got, tt.managed)
		}
		if got := string(p.Spec.Unknown.m.Get("template")); got != `{"metadata":{"managedFields":[2]}}` {
			t.Errorf("%+v: the template changed: %s", tt.opts, got)
		}
		if d := cmp.Diff(map[string]string{"a": "b"}, p.Metadata.Labels); d != "" {
			t.Errorf("%+v: labels (-want +got):\n%s", tt.opts, d)
		}
	}
}

// A Text type's function takes its plain strings; null and escapes go to its
// UnmarshalJSON.
func TestDecodeText(t *testing.T) {
	for _, tt := range []struct {
		value string
		want  string
	}{
		{`"2026-01-02T03:04:05Z"`, "2026-01-02T03:04:05Z"},
		{`"2026-01-02T03:04:05\u005a"`, "2026-01-02T03:04:05Z"},
		{`null`, "0001-01-01T00:00:00Z"},
	} {
		p := decodeTest(t, []byte(`{"status":{"conditions":[{"type":"Ready","lastTransitionTime":`+tt.value+`}]}}`), Options{})
		if got := p.Status.Conditions[0].LastTransitionTime.UTC().Format("2006-01-02T15:04:05Z07:00"); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.value, got, tt.want)
		}
	}
}

// DecodeUnvalidatedAt decodes a value inside a larger text as DecodeUnvalidated decodes
// it alone, and says where it ends: for a schema type from its own pass, for any other
// type from a scan.
func TestDecodeUnvalidatedAt(t *testing.T) {
	pod := realisticPod(t)
	text := append(append([]byte(`{"type":"ADDED","object":`), pod...), `,"after":[1,"}"]}`...)
	at := len(`{"type":"ADDED","object":`)
	wantEnd := at + len(pod)
	for _, opts := range []Options{{}, {DropManagedFields: true, Maps: NewMapTable()}} {
		got, end, err := decodeUnvalidatedAt[*testPod](testRegistry, text, at, opts)
		if err != nil || end != wantEnd {
			t.Fatalf("%+v: end %d, err %v; want end %d", opts, end, err, wantEnd)
		}
		want := decodeTest(t, pod, opts)
		if d := cmp.Diff(want, got, cmp.AllowUnexported(testPod{}), cmp.Comparer(func(a, b unknown) bool { return a.m.Equal(b.m) })); d != "" {
			t.Errorf("%+v: decoded in place (-alone +in place):\n%s", opts, d)
		}
	}
	m, end, err := decodeUnvalidatedAt[map[string]any](testRegistry, text, at, Options{})
	if err != nil || end != wantEnd || m["kind"] != "Pod" {
		t.Errorf("a type outside the schema: end %d, err %v, kind %v; want end %d, Pod", end, err, m["kind"], wantEnd)
	}
	if _, end, err := decodeUnvalidatedAt[*testPod](testRegistry, []byte(`{"a":`), 0, Options{}); err == nil && end >= 0 {
		t.Errorf("a truncated object decoded, end %d", end)
	}
}

// Arrays of every length the scratch slice meets (its first size, grown, too long to
// keep), one after another and after a failure: each slice holds its own elements
// only, at its length, and nothing of the decode before it.
func TestDecodeSliceLengths(t *testing.T) {
	conditions := func(n int, timed bool) string {
		var b strings.Builder
		b.WriteString(`{"conditions":[`)
		for k := range n {
			if k > 0 {
				b.WriteString(",")
			}
			if timed {
				fmt.Fprintf(&b, `{"type":"c%d","lastTransitionTime":"2025-03-27T12:55:09Z","x":%d}`, k, k)
			} else {
				fmt.Fprintf(&b, `{"type":"c%d","x":%d}`, k, k)
			}
		}
		b.WriteString(`]}`)
		return b.String()
	}
	for _, n := range []int{3, 0, 1, 8, 9, 70, 2, 72, 73, 1} {
		var got testStatus
		if err := unmarshal(testRegistry, []byte(conditions(n, false)), &got); err != nil {
			t.Fatalf("%d conditions: %v", n, err)
		}
		if len(got.Conditions) != n || cap(got.Conditions) != n {
			t.Fatalf("%d conditions: len %d, cap %d", n, len(got.Conditions), cap(got.Conditions))
		}
		for k, c := range got.Conditions {
			if want := fmt.Sprintf("c%d", k); c.Type != want || string(c.Unknown.m.Get("x")) != strconv.Itoa(k) || !c.LastTransitionTime.IsZero() {
				t.Errorf("%d conditions: [%d] is %q %v %s, want %q, no time, x=%d", n, k, c.Type, c.LastTransitionTime, c.Unknown.m, want, k)
			}
		}
		// A failure half way through an array leaves nothing behind for the next one.
		bad := strings.Replace(conditions(n+2, true), `"type":"c1"`, `"type":17`, 1)
		if err := unmarshal(testRegistry, []byte(bad), &testStatus{}); err == nil {
			t.Fatalf("%s: no error", bad)
		}
	}
}
