package memlimit

import (
	"fmt"
	"math"
	"runtime/debug"
	"strconv"
	"strings"
)

// Bytes is a memory limit in bytes; 0 is none. It is a flag.Value.
type Bytes int64

// units are the suffixes Parse takes, binary and decimal, longest first within a letter
// so that "GiB" is not read as "G" and "iB".
var units = []struct {
	suffix string
	mult   float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12},
	{"B", 1},
}

// Parse reads a size: a whole number of bytes, or a number (fractions allowed) and a
// unit, binary (KiB, MiB, GiB, TiB, or Ki … Ti) or decimal (KB … TB, or K … T), B for
// bytes. "" and "0" are no limit.
func Parse(s string) (Bytes, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, nil
	}
	mult := 1.0
	for _, u := range units {
		if num, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(num), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("memory limit %q: want bytes or a size such as 2.5GiB or 3000MB", s)
	}
	b := v * mult
	if b >= math.MaxInt64 {
		return 0, fmt.Errorf("memory limit %q is too large", s)
	}
	return Bytes(b), nil
}

// Set parses s (flag.Value).
func (b *Bytes) Set(s string) error {
	v, err := Parse(s)
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// String is the limit as GiB or MiB when it is a whole number of them, else in bytes; ""
// for none, so that a flag's help shows no default.
func (b *Bytes) String() string {
	if b == nil || *b == 0 {
		return ""
	}
	switch v := int64(*b); {
	case v%(1<<30) == 0:
		return strconv.FormatInt(v>>30, 10) + "GiB"
	case v%(1<<20) == 0:
		return strconv.FormatInt(v>>20, 10) + "MiB"
	default:
		return strconv.FormatInt(v, 10)
	}
}

// Apply sets the runtime's soft memory limit to b, if b is not 0, and reports whether it
// did.
func (b Bytes) Apply() bool {
	if b <= 0 {
		return false
	}
	debug.SetMemoryLimit(int64(b))
	return true
}
