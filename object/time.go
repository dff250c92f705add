package object

import (
	"bytes"
	"cmp"
	"encoding/json"
	"time"

	"github.com/kinformer/kinformer/internal/codec"
)

// Time is a timestamp as the Kubernetes API writes it: RFC 3339 in UTC with second
// precision. Fields of this type are tagged omitzero: kube-apiserver 1.36 omits an unset
// creationTimestamp (a pod template's) instead of writing null.
//
// It is held in 8 bytes rather than a time.Time's 24: a cached pod has a dozen
// timestamps (its conditions', its containers' start times). The 8 bytes keep what the
// API can hold, whole seconds of years 0 to 9999, and a fraction down to the
// microsecond (kube-apiserver writes none: it drops a fraction it is sent). NewTime
// makes one, Time reads it back; Compare, Before, After and Equal need neither.
type Time struct {
	// v is 0 for the zero time; else the seconds since year 0 began, plus 1, times 2^20,
	// plus the microseconds. So v orders as the times do.
	v int64
}

const (
	yearZero = -62167219200 // time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	lastSec  = 253402300799 // time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()
	usBits   = 20
)

// NewTime returns t as a Time, to the microsecond. The zero time.Time gives the zero
// Time; a time before year 0 or after year 9999 (which RFC 3339 cannot write) is moved
// to the nearest one it can.
func NewTime(t time.Time) Time {
	if t.IsZero() {
		return Time{}
	}
	sec, us := t.Unix(), int64(t.Nanosecond()/1000)
	switch {
	case sec < yearZero:
		sec, us = yearZero, 0
	case sec > lastSec:
		sec, us = lastSec, 999999
	}
	return Time{(sec-yearZero+1)<<usBits | us}
}

// Now returns the current time truncated to what the API keeps.
func Now() Time { return NewTime(time.Now().Truncate(time.Second)) }

// Time returns t as a time.Time, in UTC.
func (t Time) Time() time.Time {
	if t.v == 0 {
		return time.Time{}
	}
	return time.Unix(t.v>>usBits+yearZero-1, t.v&(1<<usBits-1)*1000).UTC()
}

// IsZero reports whether t is the zero time.
func (t Time) IsZero() bool { return t.v == 0 }

// Compare returns -1, 0 or +1 as t is before, at or after u.
func (t Time) Compare(u Time) int { return cmp.Compare(t.v, u.v) }

// Equal reports whether t and u are the same instant.
func (t Time) Equal(u Time) bool { return t.v == u.v }

// Before reports whether t is before u.
func (t Time) Before(u Time) bool { return t.v < u.v }

// After reports whether t is after u.
func (t Time) After(u Time) bool { return t.v > u.v }

// String formats t as the API writes it.
func (t Time) String() string {
	if t.IsZero() {
		return "<zero>"
	}
	return t.format()
}

func (t Time) format() string {
	tt := t.Time()
	if tt.Nanosecond() != 0 {
		// The API writes whole seconds; a value that came with a fraction keeps it, to
		// the microsecond (kube-apiserver drops fractions altogether).
		return tt.Format(time.RFC3339Nano)
	}
	return tt.Format(time.RFC3339)
}

// MarshalJSON writes null for the zero time (reached only where a field is not omitzero).
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(t.format())
}

// UnmarshalJSON accepts null, or any RFC 3339 timestamp (with or without fractions).
func (t *Time) UnmarshalJSON(b []byte) error {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' && bytes.IndexByte(b, '\\') < 0 {
		return t.parse(b[1 : len(b)-1]) // the usual case: no need for encoding/json
	}
	if string(b) == "null" {
		*t = Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	return t.parse([]byte(s))
}

// parse reads an RFC 3339 timestamp; empty is the zero time.
func (t *Time) parse(s []byte) error {
	if len(s) == 0 {
		*t = Time{}
		return nil
	}
	if parsed, ok := codec.ParseUTCSeconds(s); ok {
		*t = NewTime(parsed)
		return nil
	}
	parsed, err := time.Parse(time.RFC3339Nano, string(s))
	if err != nil {
		return err
	}
	*t = NewTime(parsed)
	return nil
}
