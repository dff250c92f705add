package codec

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// podWithSpec is a pod whose spec's unknown members are spec: long enough to be a part.
func podWithSpec(name, spec string) []byte {
	return fmt.Appendf(nil, `{"metadata":{"name":%q},"spec":{"nodeName":"n1",%s}}`, name, spec)
}

const longSpec = `"containers":[{"name":"web","image":"registry.example.com/shop/web@sha256:` +
	`0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","ports":[{"containerPort":8080}]}]`

// Objects decoded with one table share a part they hold alike (from the second sighting
// on), never one that differs; a table of another cache shares nothing with them.
func TestPartsAreSharedWithinATable(t *testing.T) {
	tab := NewMapTable()
	decode := func(name, spec string, tab *MapTable) []byte {
		return decodeTest(t, podWithSpec(name, spec), Options{Maps: tab}).Spec.Unknown.m.run()
	}
	first, second, third := decode("a", longSpec, tab), decode("b", longSpec, tab), decode("c", longSpec, tab)
	if unsafe.SliceData(second) != unsafe.SliceData(third) {
		t.Errorf("the third object holds a part of its own: not shared")
	}
	if unsafe.SliceData(first) == unsafe.SliceData(second) {
		t.Errorf("the first sighting was entered: a part seen once should cost no entry")
	}
	other := decode("d", strings.Replace(longSpec, "8080", "8081", 1), tab)
	if string(other) == string(second) || unsafe.SliceData(other) == unsafe.SliceData(second) {
		t.Errorf("a different spec got the shared part")
	}
	elsewhere := NewMapTable()
	decode("e", longSpec, elsewhere)
	if p := decode("f", longSpec, elsewhere); unsafe.SliceData(p) == unsafe.SliceData(second) {
		t.Errorf("two caches' tables share a part")
	}
	if got := decodeTest(t, podWithSpec("g", longSpec), Options{}).Spec.Unknown.m.run(); unsafe.SliceData(got) == unsafe.SliceData(second) {
		t.Errorf("an object decoded without a table got a cache's part")
	}
}

// The table does not keep a part alive: once no object holds it, it is collected and its
// entry goes. A table that held its parts strongly fails this.
func TestPartsGoWithTheirObjects(t *testing.T) {
	tab := NewMapTable()
	var keep []*testPod
	for i := range 100 {
		spec := strings.Replace(longSpec, "8080", fmt.Sprint(9000+i%10), 1) // ten distinct parts
		keep = append(keep, decodeTest(t, podWithSpec(fmt.Sprint("p", i), spec), Options{Maps: tab}))
	}
	if n := tab.parts.len(); n != 10 {
		t.Fatalf("%d entries for 10 distinct parts", n)
	}
	runtime.KeepAlive(keep)
	keep = nil
	deadline := time.Now().Add(10 * time.Second)
	for tab.parts.len() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d entries left after their objects were collected", tab.parts.len())
		}
		runtime.GC() // cleanups run after a collection finds the parts unreachable
		runtime.Gosched()
	}
}
