package object

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// IntOrString is a value written either as a number (3) or a string ("25%"), as in
// maxSurge and maxUnavailable.
type IntOrString struct {
	IsString bool
	Int      int32
	Str      string
}

// FromInt returns an integer IntOrString.
func FromInt(i int32) IntOrString { return IntOrString{Int: i} }

// FromString returns a string IntOrString.
func FromString(s string) IntOrString { return IntOrString{IsString: true, Str: s} }

// MarshalJSON writes a number or a string, whichever the value holds.
func (v IntOrString) MarshalJSON() ([]byte, error) {
	if v.IsString {
		return json.Marshal(v.Str)
	}
	return json.Marshal(v.Int)
}

// UnmarshalJSON reads a number or a string.
func (v *IntOrString) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		v.IsString = true
		v.Int = 0
		return json.Unmarshal(b, &v.Str)
	}
	v.IsString, v.Str = false, ""
	return json.Unmarshal(b, &v.Int)
}

// String returns the value as written.
func (v IntOrString) String() string {
	if v.IsString {
		return v.Str
	}
	return strconv.Itoa(int(v.Int))
}

// Scaled resolves the value against total: an integer is returned as is, a percentage is
// total*pct/100 rounded up or down. Anything else (e.g. "3" or "abc%") is an error.
func (v IntOrString) Scaled(total int, roundUp bool) (int, error) {
	if !v.IsString {
		return int(v.Int), nil
	}
	num, ok := strings.CutSuffix(v.Str, "%")
	if !ok {
		return 0, fmt.Errorf("invalid value %q: an integer or a percentage is required", v.Str)
	}
	pct, err := strconv.Atoi(num)
	if err != nil {
		return 0, fmt.Errorf("invalid percentage %q: %w", v.Str, err)
	}
	f := float64(pct) * float64(total) / 100
	if roundUp {
		return int(math.Ceil(f)), nil
	}
	return int(math.Floor(f)), nil
}
