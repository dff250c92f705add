package memlimit

import (
	"flag"
	"io"
	"math"
	"runtime/debug"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Bytes
		wantErr bool
	}{
		{"", 0, false},
		{"0", 0, false},
		{"2684354560", 2684354560, false},
		{"2.5GiB", 5 << 29, false},
		{"2.5Gi", 5 << 29, false},
		{"512MiB", 512 << 20, false},
		{"3GB", 3e9, false},
		{"3G", 3e9, false},
		{" 100 KB ", 100e3, false},
		{"1TiB", 1 << 40, false},
		{"1024B", 1024, false},
		{"-1", 0, true},
		{"GiB", 0, true},
		{"2.5XB", 0, true},
		{"lots", 0, true},
		{"NaN", 0, true},
		{"1e30TiB", 0, true},
	} {
		got, err := Parse(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("Parse(%q) = %d, %v; want %d, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestString(t *testing.T) {
	for _, tc := range []struct {
		b    Bytes
		want string
	}{{0, ""}, {3 << 30, "3GiB"}, {2560 << 20, "2560MiB"}, {3e9, "3000000000"}} {
		if got := tc.b.String(); got != tc.want {
			t.Errorf("Bytes(%d).String() = %q, want %q", int64(tc.b), got, tc.want)
		}
		if back, err := Parse(tc.b.String()); err != nil || back != tc.b {
			t.Errorf("Parse(%q) = %d, %v; want %d", tc.b.String(), back, err, int64(tc.b))
		}
	}
}

func TestFlagAndApply(t *testing.T) {
	var b Bytes
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(&b, "memory-limit", "soft memory limit")
	if err := fs.Parse([]string{"-memory-limit", "1.5GiB"}); err != nil || b != 3<<29 {
		t.Fatalf("-memory-limit 1.5GiB: %d, %v", b, err)
	}
	if err := fs.Parse([]string{"-memory-limit", "much"}); err == nil || !strings.Contains(err.Error(), "2.5GiB") {
		t.Fatalf("-memory-limit much: %v", err)
	}
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	if Bytes(0).Apply() || debug.SetMemoryLimit(-1) != prev {
		t.Fatal("Apply of no limit changed the limit")
	}
	if !b.Apply() || debug.SetMemoryLimit(-1) != 3<<29 {
		t.Fatal("Apply did not set the limit")
	}
	if debug.SetMemoryLimit(math.MaxInt64) != 3<<29 {
		t.Fatal("the limit changed")
	}
}
