package shardgroup

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/shard"
)

func TestBucketSetText(t *testing.T) {
	for _, tt := range []struct {
		text    string
		n       int
		buckets []int
	}{
		{"256:", 256, nil},
		{"256:0", 256, []int{0}},
		{"256:255", 256, []int{255}},
		{"256:0-255", 256, seq(0, 255)},
		{"256:0-31,64,100-127", 256, append(append(seq(0, 31), 64), seq(100, 127)...)},
		{"256:1,3,5", 256, []int{1, 3, 5}},
		{"1:0", 1, []int{0}},
		{"1:", 1, nil},
		{"7:0-1,6", 7, []int{0, 1, 6}},
		{"4096:63-64,4095", 4096, []int{63, 64, 4095}},
	} {
		s, err := ParseBucketSet(tt.text)
		if err != nil {
			t.Errorf("ParseBucketSet(%q): %v", tt.text, err)
			continue
		}
		if s.Total() != tt.n || !slices.Equal(s.Indexes(), tt.buckets) {
			t.Errorf("ParseBucketSet(%q) = %d buckets %v, want %d %v", tt.text, s.Total(), s.Indexes(), tt.n, tt.buckets)
		}
		if got := bucketsOf(tt.n, tt.buckets...).String(); got != tt.text {
			t.Errorf("String() = %q, want %q", got, tt.text)
		}
		if got := s.String(); got != tt.text {
			t.Errorf("round trip of %q gave %q", tt.text, got)
		}
	}
}

func TestParseBucketSetIsStrict(t *testing.T) {
	for _, tt := range []struct{ text, why string }{
		{"", "no colon"},
		{"256", "no colon"},
		{":0", "empty number"},
		{"0:", "between 1 and"},
		{"4097:", "between 1 and"},
		{"0256:", "leading zero"},
		{"+256:", "not a decimal"},
		{" 256:", "not a decimal"},
		{"256: 1", "not a decimal"},
		{"256:1 ", "not a decimal"},
		{"256:1,", "empty number"},
		{",256:1", "not a decimal"},
		{"256:,1", "empty number"},
		{"256:01", "leading zero"},
		{"256:-1", "empty number"},
		{"256:1-", "empty number"},
		{"256:256", "outside"},
		{"256:250-256", "outside"},
		{"256:5-5", "above the first"},
		{"256:5-4", "above the first"},
		{"256:1-2-3", "not a decimal"},
		{"256:3,1", "not above"},
		{"256:1,1", "not above"},
		{"256:1-5,3", "not above"},
		{"256:1,2", "touches"},
		{"256:1-4,5-6", "touches"},
		{"256:99999999999", "too large"},
		{"256:1;2", "not a decimal"},
		{"256:0x1", "leading zero"},
		{"256:1x", "not a decimal"},
		{"256:١", "not a decimal"},
	} {
		s, err := ParseBucketSet(tt.text)
		if err == nil {
			t.Errorf("ParseBucketSet(%q) = %v, want an error (%s)", tt.text, s, tt.why)
			continue
		}
		if !errors.Is(err, ErrBucketSyntax) || !strings.Contains(err.Error(), tt.why) {
			t.Errorf("ParseBucketSet(%q) = %v, want ErrBucketSyntax saying %q", tt.text, err, tt.why)
		}
	}
}

// bucketRange and bucketOf are shard.Assign's division, to the hash: Assign's ranges of
// one member, one bucket each, are exactly the buckets, and every bucket's edges map back
// to it.
func TestBucketsAreAssignsBuckets(t *testing.T) {
	for _, n := range []int{1, 3, 7, 100, 256, 1000, 4096} {
		// Among as many members as buckets, most own single buckets; all together the
		// union of everyone's ranges, cut at bucket edges, is the division.
		var members []string
		for i := range n {
			members = append(members, strings.Repeat("m", 1+i%5)+string(rune('a'+i%26))+string(rune('a'+i/26%26)))
		}
		a := shard.Assign(members, n)
		seen := make([]bool, n)
		for _, rs := range a {
			for _, r := range rs {
				first, last := BucketOf(r.First, n), BucketOf(r.Last, n)
				if bucketRange(first, n).First != r.First || bucketRange(last, n).Last != r.Last {
					t.Fatalf("n=%d: Assign's range %+v does not fall on bucket edges (%d..%d)", n, r, first, last)
				}
				for b := first; b <= last; b++ {
					seen[b] = true
				}
			}
		}
		if slices.Contains(seen, false) {
			t.Errorf("n=%d: some bucket is in no range of Assign", n)
		}
		for b := range n {
			r := bucketRange(b, n)
			if BucketOf(r.First, n) != b || BucketOf(r.Last, n) != b {
				t.Fatalf("n=%d bucket %d %+v: its edges map to %d and %d", n, b, r, BucketOf(r.First, n), BucketOf(r.Last, n))
			}
			if b > 0 && bucketRange(b-1, n).Last+1 != r.First {
				t.Fatalf("n=%d: gap before bucket %d", n, b)
			}
		}
		if bucketRange(n-1, n).Last != math.MaxUint64 || bucketRange(0, n).First != 0 {
			t.Errorf("n=%d: buckets do not span the space", n)
		}
	}
}

func TestBucketSetOperations(t *testing.T) {
	a := bucketsOf(256, seq(0, 99)...)
	b := bucketsOf(256, seq(50, 149)...)
	for _, tt := range []struct {
		name string
		got  BucketSet
		want []int
	}{
		{"union", a.Union(b), seq(0, 149)},
		{"intersect", a.Intersect(b), seq(50, 99)},
		{"minus", a.Minus(b), seq(0, 49)},
		{"minus all", a.Minus(a), nil},
		{"all", allBuckets(100), seq(0, 99)},
		{"zero union", BucketSet{}.Union(b), seq(50, 149)},
	} {
		if d := cmp.Diff(tt.want, tt.got.Indexes()); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, d)
		}
	}
	if !a.Minus(a).IsEmpty() || !a.Minus(a).Equal(newBucketSet(256)) || a.Equal(b) {
		t.Error("Equal or IsEmpty wrong")
	}
	want := []shard.Range{{First: 0, Last: 150<<56 - 1}}
	if d := cmp.Diff(want, a.Union(b).Ranges()); d != "" {
		t.Errorf("Ranges (-want +got):\n%s", d)
	}
	// Claims in another division are seen as every bucket of ours they touch.
	coarse := bucketsOf(16, 1) // = buckets 16..31 of 256, and parts of 7 buckets of 100
	if d := cmp.Diff(seq(16, 31), inDivision(coarse, 256).Indexes()); d != "" {
		t.Errorf("inDivision 16→256 (-want +got):\n%s", d)
	}
	if d := cmp.Diff(seq(6, 12), inDivision(coarse, 100).Indexes()); d != "" {
		t.Errorf("inDivision 16→100 (-want +got):\n%s", d)
	}
}

func seq(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// Whatever ParseBucketSet accepts is canonical: String gives the same bytes back. And
// every set's String is accepted, as that same set.
func FuzzParseBucketSet(f *testing.F) {
	for _, s := range []string{"256:", "256:0-31,64,100-127", "1:0", "4096:63-64,4095", "256:1,2", "0256:", "7:0-1,6"} {
		f.Add(s, []byte{0xff, 0x01})
	}
	f.Fuzz(func(t *testing.T, text string, bits []byte) {
		if s, err := ParseBucketSet(text); err == nil {
			if got := s.String(); got != text {
				t.Fatalf("ParseBucketSet(%q) accepted a text that is not canonical: String() = %q", text, got)
			}
		} else if !errors.Is(err, ErrBucketSyntax) {
			t.Fatalf("ParseBucketSet(%q): %v does not wrap ErrBucketSyntax", text, err)
		}
		n := 1 + len(text)%MaxBuckets
		var idx []int
		for i := range min(n, 8*len(bits)) {
			if bits[i/8]&(1<<(i%8)) != 0 {
				idx = append(idx, i)
			}
		}
		s := bucketsOf(n, idx...)
		back, err := ParseBucketSet(s.String())
		if err != nil || !back.Equal(s) || back.Total() != n {
			t.Fatalf("set %v of %d: String %q parsed back as %v, %v", idx, n, s.String(), back.Indexes(), err)
		}
	})
}
