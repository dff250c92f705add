package memtest

import (
	"runtime"
	"testing"
)

func TestSameMap(t *testing.T) {
	a := map[string]int{"x": 1}
	var nilA, nilB map[string]int
	for _, c := range []struct {
		name string
		a, b map[string]int
		want bool
	}{
		{"one map", a, a, true},
		{"equal copies", a, map[string]int{"x": 1}, false},
		{"both nil", nilA, nilB, true},
		{"nil and empty", nilA, map[string]int{}, false},
	} {
		if got := SameMap(c.a, c.b); got != c.want {
			t.Errorf("%s: SameMap = %v, want %v", c.name, got, c.want)
		}
	}
}

// What AfterGC reports grows by what is kept reachable and shrinks back once it is not.
func TestAfterGCWeighsWhatIsLive(t *testing.T) {
	const size = 8 << 20
	base := AfterGC().HeapAlloc
	kept := make([]byte, size)
	with := AfterGC().HeapAlloc
	runtime.KeepAlive(kept)
	without := AfterGC().HeapAlloc
	// The slack is for the test's own small objects, which come and go meanwhile.
	const slack = 64 << 10
	if with < base+size-slack {
		t.Errorf("with %d MiB kept, the live heap grew from %d to %d bytes", size>>20, base, with)
	}
	if without >= base+size-slack {
		t.Errorf("after the slice was dropped, the live heap is %d bytes, %d above where it started", without, without-base)
	}
}
