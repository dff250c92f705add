package shard

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func TestSetOfIsCanonical(t *testing.T) {
	tests := []struct {
		name string
		in   []Range
		want string
	}{
		{"empty", nil, ""},
		{"inverted left out", []Range{{5, 4}}, ""},
		{"one", []Range{{0, 15}}, "0000000000000000-000000000000000f"},
		{"touching merged", []Range{{16, 31}, {0, 15}}, "0000000000000000-000000000000001f"},
		{"overlapping merged", []Range{{0, 20}, {10, 31}}, "0000000000000000-000000000000001f"},
		{"apart kept", []Range{{0, 1}, {3, 4}}, "0000000000000000-0000000000000001,0000000000000003-0000000000000004"},
		{"whole", []Range{lowerHalf(), upperHalf()}, "0000000000000000-ffffffffffffffff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := SetOf(tt.in...)
			if got := s.String(); got != tt.want {
				t.Fatalf("SetOf(%v) = %q, want %q", tt.in, got, tt.want)
			}
			back, err := ParseSet(s.String())
			if err != nil || !back.Equal(s) {
				t.Errorf("ParseSet(%q) = %v, %v", s.String(), back, err)
			}
		})
	}
}

func TestParseSetIsStrict(t *testing.T) {
	for _, text := range []string{
		"0-f",                               // not 16 digits
		"000000000000000F-000000000000000f", // upper case
		"0000000000000010-000000000000000f", // inverted
		"0000000000000000-0000000000000001,0000000000000002-0000000000000003", // touching
		"0000000000000005-0000000000000006,0000000000000000-0000000000000001", // descending
		"0000000000000000-ffffffffffffffff,0000000000000000-0000000000000001", // after the top
		"0000000000000000",                   // no last
		"0000000000000000-0000000000000001,", // empty range
		" 0000000000000000-0000000000000001", // white space
		"000000000000000g-0000000000000001",  // not hex
	} {
		if _, err := ParseSet(text); !errors.Is(err, ErrSetSyntax) {
			t.Errorf("ParseSet(%q) = %v, want ErrSetSyntax", text, err)
		}
	}
}

// The set operations against a model: a set of small hashes as a bitmap.
func TestSetOperationsMatchAModel(t *testing.T) {
	const n = 64
	rng := rand.New(rand.NewPCG(1, 2))
	random := func() (Set, uint64) {
		var rs []Range
		var bits uint64
		for range rng.IntN(5) {
			a, b := uint64(rng.IntN(n)), uint64(rng.IntN(n))
			a, b = min(a, b), max(a, b)
			rs = append(rs, Range{a, b})
			for h := a; h <= b; h++ {
				bits |= 1 << h
			}
		}
		return SetOf(rs...), bits
	}
	model := func(s Set) uint64 {
		var bits uint64
		for h := uint64(0); h < n; h++ {
			if s.Contains(h) {
				bits |= 1 << h
			}
		}
		return bits
	}
	for range 2000 {
		s, sb := random()
		u, ub := random()
		for _, c := range []struct {
			name string
			got  Set
			want uint64
		}{
			{"union", s.Union(u), sb | ub},
			{"intersect", s.Intersect(u), sb & ub},
			{"minus", s.Minus(u), sb &^ ub},
		} {
			if model(c.got) != c.want {
				t.Fatalf("%v %s %v = %v, want bits %b", s, c.name, u, c.got, c.want)
			}
			if back, err := ParseSet(c.got.String()); err != nil || !back.Equal(c.got) {
				t.Fatalf("%s result %v is not canonical: %v", c.name, c.got, err)
			}
		}
		if s.Overlaps(u) != (sb&ub != 0) {
			t.Fatalf("%v overlaps %v: %v", s, u, s.Overlaps(u))
		}
		if s.Equal(u) != (sb == ub) {
			t.Fatalf("%v equal %v: %v", s, u, s.Equal(u))
		}
	}
	if f := SetOf(lowerHalf()).Fraction(); f != 0.5 {
		t.Errorf("lower half covers %v", f)
	}
	if !WholeSet().Contains(math.MaxUint64) || WholeSet().Minus(WholeSet()).IsEmpty() != true {
		t.Error("the whole set")
	}
}

func FuzzParseSet(f *testing.F) {
	f.Add("0000000000000000-ffffffffffffffff")
	f.Add("0000000000000000-0000000000000001,0000000000000003-0000000000000004")
	f.Add("")
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseSet(text)
		if err != nil {
			return
		}
		// What parses is canonical: it writes back the same bytes.
		if s.String() != text {
			t.Fatalf("ParseSet(%q) writes back %q", text, s.String())
		}
	})
}
