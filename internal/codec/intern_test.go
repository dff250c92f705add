package codec

import (
	"fmt"
	"sync"
	"testing"
	"unique"
	"unsafe"
)

// Interning returns equal strings, shares them, and is safe for decoders running at once
// (run with -race).
func TestIntern(t *testing.T) {
	var wg sync.WaitGroup
	got := make([][]string, 4)
	for g := range got {
		wg.Go(func() {
			for i := range 1000 {
				got[g] = append(got[g], internString([]byte(fmt.Sprint("ns-", i%50))))
			}
		})
	}
	wg.Wait()
	for g := range got {
		for i, s := range got[g] {
			if want := fmt.Sprint("ns-", i%50); s != want {
				t.Fatalf("interned %q, want %q", s, want)
			}
		}
	}
	short, long := []byte("team-1"), make([]byte, internMax+1)
	if a, b := internString(short), internString(short); unsafe.StringData(a) != unsafe.StringData(b) {
		t.Errorf("%q interned twice in a row: two copies", short)
	}
	if a, b := internString(long), internString(long); unsafe.StringData(a) == unsafe.StringData(b) || a != string(long) {
		t.Errorf("a string over internMax was shared, or changed")
	}
}

// BenchmarkIntern compares the intern table with the standard library's unique.Make, for
// strings already in the table.
func BenchmarkIntern(b *testing.B) {
	keys := make([][]byte, 1000)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "team-%d/app-%d", i%10, i)
	}
	b.Run("table", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			internString(keys[i%len(keys)])
			i++
		}
	})
	b.Run("unique.Make", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			unique.Make(string(keys[i%len(keys)])).Value()
			i++
		}
	})
}
