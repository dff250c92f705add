package shard

import (
	"fmt"
	"hash/fnv"
	"math"
	"testing"
)

func TestHash(t *testing.T) {
	tests := []struct {
		in   string
		want uint64 // published FNV-1a 64 vectors; 0 means "only compare with hash/fnv"
	}{
		{"", 0xcbf29ce484222325}, // the offset basis: every cluster-scoped object by namespace
		{"a", 0xaf63dc4c8601ec8c},
		{"foobar", 0x85944171f73967e8},
		{"default", 0},
		{"kube-system", 0},
		{"0b5f1d3e-8c2a-4f6b-9d7e-1a2b3c4d5e6f", 0},
		{"\x00\xff\x80 non-ASCII: ü", 0},
	}
	for _, tt := range tests {
		f := fnv.New64a()
		f.Write([]byte(tt.in))
		ref := f.Sum64()
		got := Hash(tt.in)
		if got != ref {
			t.Errorf("Hash(%q) = %#016x, hash/fnv New64a says %#016x", tt.in, got, ref)
		}
		if tt.want != 0 && got != tt.want {
			t.Errorf("Hash(%q) = %#016x, want the published %#016x", tt.in, got, tt.want)
		}
	}
}

func TestHashDoesNotAllocate(t *testing.T) {
	s := "some-namespace-name"
	if n := testing.AllocsPerRun(100, func() { _ = Hash(s) }); n != 0 {
		t.Errorf("Hash allocates %v times per call, want 0", n)
	}
}

func TestRange(t *testing.T) {
	tests := []struct {
		name     string
		r        Range
		in, out  []uint64
		fraction float64
	}{
		{"whole", Whole(), []uint64{0, 1, 1 << 63, math.MaxUint64}, nil, 1},
		{"zero value is the single hash 0", Range{}, []uint64{0}, []uint64{1, math.MaxUint64}, 1.0 / (1 << 64)},
		{"lower half", Range{0, 1<<63 - 1}, []uint64{0, 1<<63 - 1}, []uint64{1 << 63, math.MaxUint64}, 0.5},
		{"upper half", Range{1 << 63, math.MaxUint64}, []uint64{1 << 63, math.MaxUint64}, []uint64{0, 1<<63 - 1}, 0.5},
		{"one of 256", Range{1 << 56, 2<<56 - 1}, []uint64{1 << 56, 2<<56 - 1}, []uint64{1<<56 - 1, 2 << 56}, 1.0 / 256},
		{"inverted holds nothing", Range{10, 5}, nil, []uint64{0, 5, 7, 10, math.MaxUint64}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, h := range tt.in {
				if !tt.r.Contains(h) {
					t.Errorf("%+v.Contains(%#x) = false, want true", tt.r, h)
				}
			}
			for _, h := range tt.out {
				if tt.r.Contains(h) {
					t.Errorf("%+v.Contains(%#x) = true, want false", tt.r, h)
				}
			}
			if got := tt.r.Fraction(); got != tt.fraction {
				t.Errorf("%+v.Fraction() = %v, want %v", tt.r, got, tt.fraction)
			}
		})
	}
}

// TestHashHighBitsIgnoreNameEndings pins what doc.go warns about: FNV-1a's top byte,
// which picks one of 256 equal buckets, hardly depends on a name's last characters.
func TestHashHighBitsIgnoreNameEndings(t *testing.T) {
	topBytes := func(names func(i int) string, n int) int {
		seen := map[uint64]bool{}
		for i := range n {
			seen[Hash(names(i))>>56] = true
		}
		return len(seen)
	}
	tests := []struct {
		name  string
		names func(i int) string
		n     int
		want  int
	}{
		{"team-a … team-z", func(i int) string { return "team-" + string(rune('a'+i)) }, 26, 1},
		{"tenant-00 … tenant-99", func(i int) string { return fmt.Sprintf("tenant-%02d", i) }, 100, 1},
		{"tenant-000 … tenant-999", func(i int) string { return fmt.Sprintf("tenant-%03d", i) }, 1000, 13},
	}
	for _, tt := range tests {
		if got := topBytes(tt.names, tt.n); got != tt.want {
			t.Errorf("%s: %d distinct top bytes, doc.go says %d", tt.name, got, tt.want)
		}
	}
}
