package codec

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

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
	if out, err := marshal(testRegistry, &none); err != nil || string(out) != `{"name":"","ready":false}` {
		t.Errorf("the zero value encodes as %s, %v: not as a zero head", out, err)
	}
	// A member set in the head under the name of a field of the struct's own (as With
	// may) is not written twice: the field wins.
	c := p.Status.Containers[0]
	h := *c.head
	h.Unknown.m.Set("id", []byte(`"from-the-head"`))
	c.head = &h
	if out, err := marshal(testRegistry, &c); err != nil || string(out) != in {
		t.Errorf("with an id in its head too, encoded as %s, %v", out, err)
	}
}

// Heads of two types are never confused, even when their members read the same.
func TestHeadsOfTwoTypesAreKeptApart(t *testing.T) {
	tab := NewMapTable()
	for range 2 {
		p := decodeTest(t, fmt.Appendf(nil, `{"status":{"containers":[{"name":"x"}],"volumes":[{"name":"x","path":"/p"}]}}`), Options{Maps: tab})
		c, err1 := marshal(testRegistry, &p.Status.Containers[0])
		v, err2 := marshal(testRegistry, &p.Status.Volumes[0])
		if string(c) != `{"name":"x","ready":false}` || string(v) != `{"name":"x","path":"/p"}` || err1 != nil || err2 != nil {
			t.Fatalf("the container encodes as %s (%v), the volume as %s (%v)", c, err1, v, err2)
		}
		if unsafe.Pointer(p.Status.Containers[0].head) == unsafe.Pointer(p.Status.Volumes[0].head) {
			t.Fatalf("a container and a volume share a head")
		}
	}
}

// A head a caller wrote into (through the bytes Unknown.Get hands out) is not handed to
// the objects decoded after: they get the head the server's text says.
func TestAWrittenHeadIsNotHandedOutAgain(t *testing.T) {
	tab := NewMapTable()
	const container = `{"name":"web","ready":true,"tuning":12345}`
	a := decodeTest(t, podWithContainer("a", container), Options{Maps: tab}).Status.Containers[0]
	a.head.Unknown.m.Get("tuning")[0] = '9' // the mistake
	b := decodeTest(t, podWithContainer("b", container), Options{Maps: tab}).Status.Containers[0]
	if got := string(b.head.Unknown.m.Get("tuning")); got != "12345" {
		t.Errorf("a later decode got the written head: tuning %s", got)
	}
	if c := decodeTest(t, podWithContainer("c", container), Options{Maps: tab}).Status.Containers[0]; c.head != b.head {
		t.Errorf("the fresh head is not shared")
	}
}

// Forget empties the slots: the next decode builds its head from its text again.
func TestForgetEmptiesTheSlots(t *testing.T) {
	tab := NewMapTable()
	const container = `{"name":"web","ready":true}`
	a := decodeTest(t, podWithContainer("a", container), Options{Maps: tab}).Status.Containers[0]
	tab.Forget()
	b := decodeTest(t, podWithContainer("b", container), Options{Maps: tab}).Status.Containers[0]
	c := decodeTest(t, podWithContainer("c", container), Options{Maps: tab}).Status.Containers[0]
	if a.head == b.head || b.head != c.head {
		t.Errorf("after Forget, the next decode got the head of before, or the one after it another")
	}
}

// The slots do not keep a head alive: once no object holds it, it is collected.
func TestHeadsGoWithTheirObjects(t *testing.T) {
	tab := NewMapTable()
	var keep []*testPod
	for i := range 10 {
		keep = append(keep, decodeTest(t, podWithContainer(fmt.Sprint("p", i), fmt.Sprintf(`{"name":"c%d"}`, i)), Options{Maps: tab}))
	}
	live := func() int {
		n := 0
		for _, r := range tab.registries {
			h := r.lookup(testContainerType).head
			for i := range h.slots.slots {
				if e := h.slots.slots[i].Load(); e != nil && e.value.Value() != nil {
					n++
				}
			}
		}
		return n
	}
	// The slots are lossy: two of the ten heads share a slot, and the later wins, about
	// once in 25 runs (ten heads in 1,024 slots, hashed with a random seed).
	if n := live(); n < 9 {
		t.Fatalf("%d live heads in the slots, want 10 (9 when two share a slot)", n)
	}
	runtime.KeepAlive(keep)
	keep = nil
	deadline := time.Now().Add(10 * time.Second)
	for live() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d heads still live after their objects were collected", live())
		}
		runtime.GC()
		runtime.Gosched()
	}
}

var testContainerType = reflect.TypeFor[testContainer]()

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
