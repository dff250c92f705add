package codec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func podWithContainer(name, container string) []byte {
	return fmt.Appendf(nil, `{"metadata":{"name":%q},"status":{"containers":[%s]}}`, name, container)
}

// The objects of one cache hold one head for members they have alike, each with its own
// fields; a head of other members, of another cache, or decoded without a table is
// another.
func TestHeadsAreSharedWithinATable(t *testing.T) {
	tab := NewMapTable()
	decode := func(name, container string, opts Options) testContainer {
		t.Helper()
		return decodeTest(t, podWithContainer(name, container), opts).Status.Containers[0]
	}
	a := decode("a", `{"name":"web","id":"c-a","ready":true,"image":"web:1"}`, Options{Maps: tab})
	b := decode("b", `{"image":"web:1", "id":"c-b", "name":"web","ready":true}`, Options{Maps: tab})
	c := decode("c", `{"name":"web","ready":true,"id":"c-c","image":"web:1"}`, Options{Maps: tab})
	if a.ID != "c-a" || c.ID != "c-c" || a.head.Name != "web" || !a.head.Ready || string(a.head.Unknown.m.Get("image")) != `"web:1"` {
		t.Fatalf("decoded %+v and %+v", a, *a.head)
	}
	if a.head != c.head {
		t.Errorf("two containers with the same members, the id between them, hold two heads")
	}
	if b.head == a.head || b.head.Name != "web" {
		t.Errorf("members in another order or spacing found the same head (its text differs): %+v", *b.head)
	}
	if d := decode("d", `{"name":"web","ready":false,"id":"c-a","image":"web:1"}`, Options{Maps: tab}); d.head == a.head || d.head.Ready {
		t.Errorf("a container not ready got the ready one's head")
	}
	if e := decode("e", `{"name":"web","ready":true,"id":"c-e","image":"web:1"}`, Options{Maps: NewMapTable()}); e.head == a.head {
		t.Errorf("two caches share a head")
	}
	if f := decode("f", `{"name":"web","ready":true,"id":"c-f","image":"web:1"}`, Options{}); f.head == a.head {
		t.Errorf("a container decoded without a table got a cache's head")
	}
}

// A headed struct is encoded with its head's members, sorted among its own; decoding
// that gives it back.
func TestHeadedStructRoundTrips(t *testing.T) {
	in := `{"id":"c-1","image":"web:1","name":"web","ports":[{"containerPort":80}],"ready":true}`
	p := decodeTest(t, podWithContainer("a", in), Options{Maps: NewMapTable()})
	out, err := marshal(testRegistry, &p.Status.Containers[0])
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(in, string(out)); d != "" {
		t.Errorf("encoded (-want +got):\n%s", d)
	}
	var none testContainer
	if out, err := marshal(testRegistry, &none); err != nil || string(out) != "{}" {
		t.Errorf("the zero value encodes as %s, %v", out, err)
	}
}

// Malformed or mistyped input is an error, in the struct's own members and in its
// head's, with or without a table, and never a panic.
func TestHeadedStructErrors(t *testing.T) {
	for _, container := range []string{
		`{"name":"web","id":12}`,
		`{"name":7,"id":"c"}`,
		`{"name":"web","ready":"yes"}`,
		`{"name":"web","id":"c"`,
		`{"name":"web",}`,
		`{"name" "web"}`,
		`["web"]`,
	} {
		for _, opts := range []Options{{}, {Maps: NewMapTable()}} {
			if _, err := decodeUnvalidated[*testPod](testRegistry, podWithContainer("a", container), opts); err == nil {
				t.Errorf("%s decoded without an error (table: %v)", container, opts.Maps != nil)
			}
		}
	}
	p := decodeTest(t, podWithContainer("a", `null`), Options{})
	if p.Status.Containers[0].head != nil {
		t.Errorf("null made a head")
	}
	long := `{"name":"web","env":"` + strings.Repeat("x", 2*sharedListMax) + `"}`
	tab := NewMapTable()
	x := decodeTest(t, podWithContainer("a", long), Options{Maps: tab}).Status.Containers[0]
	y := decodeTest(t, podWithContainer("b", long), Options{Maps: tab}).Status.Containers[0]
	if x.head == y.head || x.head.Name != "web" {
		t.Errorf("a head too long for the slots was shared, or decoded wrong")
	}
}
