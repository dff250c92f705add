package protowire

import (
	"math"
	"testing"
)

func TestVarintRoundTrip(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 300, 1<<32 - 1, 1 << 35, math.MaxInt64, math.MaxUint64} {
		b := AppendVarint(nil, v)
		if len(b) != SizeVarint(v) {
			t.Errorf("SizeVarint(%d) = %d, appended %d bytes", v, SizeVarint(v), len(b))
		}
		got, n := ConsumeVarint(b)
		if got != v || n != len(b) {
			t.Errorf("ConsumeVarint(AppendVarint(%d)) = %d, %d; want %d, %d", v, got, n, v, len(b))
		}
		if _, n := ConsumeVarint(b[:len(b)-1]); n != errTruncated {
			t.Errorf("ConsumeVarint of %d cut short = %d, want truncated", v, n)
		}
	}
}

func TestConsumeMalformed(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"varint past 64 bits", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02}, Error(errOverflow)},
		{"field number zero", []byte{0x02, 0x00}, Error(errBadNumber)},
		{"group start", []byte{0x0b}, Error(errBadType)},
		{"length past the end", []byte{0x0a, 0x05, 'a'}, ErrTruncated},
		{"fixed64 cut", []byte{0x09, 1, 2, 3}, ErrTruncated},
		{"fixed32 cut", []byte{0x0d, 1, 2}, ErrTruncated},
		{"huge length", []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, ErrTruncated},
	}
	for _, c := range cases {
		_, _, n := ConsumeField(c.in)
		if n >= 0 || Error(n).Error() != c.want.Error() {
			t.Errorf("%s: ConsumeField = %d (%v), want %v", c.name, n, Error(n), c.want)
		}
	}
}

func TestConsumeField(t *testing.T) {
	b := AppendTag(nil, 3, Bytes)
	b = AppendString(b, "shop")
	b = AppendTag(b, 7, Varint)
	b = AppendVarint(b, 42)
	num, typ, n := ConsumeField(b)
	if num != 3 || typ != Bytes || n != 6 {
		t.Fatalf("first field: %d %d %d", num, typ, n)
	}
	num, typ, m := ConsumeField(b[n:])
	if num != 7 || typ != Varint || n+m != len(b) {
		t.Fatalf("second field: %d %d %d", num, typ, m)
	}
}

func FuzzConsumeField(f *testing.F) {
	f.Add([]byte{0x0a, 0x02, 'h', 'i'})
	f.Add([]byte{0x08, 0x96, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		for len(b) > 0 {
			_, _, n := ConsumeField(b)
			if n < 0 {
				if Error(n) == nil {
					t.Fatal("negative length without an error")
				}
				return
			}
			if n == 0 || n > len(b) {
				t.Fatalf("consumed %d of %d bytes", n, len(b))
			}
			b = b[n:]
		}
	})
}

// Next agrees with ConsumeTag, ConsumeValue and ConsumeBytes on every input: its fast
// path (a one-byte tag and a one-byte length or varint) is only a shortcut.
func FuzzNext(f *testing.F) {
	f.Add([]byte{0x0a, 0x02, 'h', 'i'})
	f.Add([]byte{0x08, 0x96, 0x01})
	f.Add([]byte{0x0a, 0x05, 'a'})
	f.Add([]byte{0x08, 0x01})
	f.Add([]byte{0x0a, 0x80, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		num, typ, v, n := Next(b)
		wnum, wtyp, wn := ConsumeField(b)
		if n != wn || (n >= 0 && (num != wnum || typ != wtyp)) {
			t.Fatalf("Next = %d %d %d, ConsumeField = %d %d %d", num, typ, n, wnum, wtyp, wn)
		}
		if n < 0 {
			return
		}
		_, _, tag := ConsumeTag(b)
		want := b[tag:n]
		if typ == Bytes {
			want, _ = ConsumeBytes(want)
		}
		if string(v) != string(want) || cap(v) != len(v) {
			t.Fatalf("Next's value %q (cap %d), want %q", v, cap(v), want)
		}
	})
}
