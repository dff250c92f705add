package object

import (
	"bytes"
	"encoding/json"
	"time"
)

// Time is a timestamp as the Kubernetes API writes it: RFC 3339 in UTC with second
// precision. Fields of this type are tagged omitzero: kube-apiserver 1.36 omits an unset
// creationTimestamp (a pod template's) instead of writing null.
type Time struct{ time.Time }

// Now returns the current time truncated to what the API keeps.
func Now() Time { return Time{time.Now().UTC().Truncate(time.Second)} }

// MarshalJSON writes null for the zero time (reached only where a field is not omitzero).
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	if t.Nanosecond() != 0 {
		// The API writes whole seconds; a value that came with fractions keeps them, so a
		// round trip never loses data.
		return json.Marshal(t.UTC().Format(time.RFC3339Nano))
	}
	return json.Marshal(t.UTC().Format(time.RFC3339))
}

// UnmarshalJSON accepts null, or any RFC 3339 timestamp (with or without fractions).
func (t *Time) UnmarshalJSON(b []byte) error {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' && bytes.IndexByte(b, '\\') < 0 {
		return t.parse(b[1 : len(b)-1]) // the usual case: no need for encoding/json
	}
	if string(b) == "null" {
		t.Time = time.Time{}
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
		t.Time = time.Time{}
		return nil
	}
	if parsed, ok := parseUTCSeconds(s); ok {
		t.Time = parsed
		return nil
	}
	parsed, err := time.Parse(time.RFC3339Nano, string(s))
	if err != nil {
		return err
	}
	t.Time = parsed
	return nil
}

// parseUTCSeconds reads the form the API writes, 2006-01-02T15:04:05Z, without
// time.Parse. Anything else, or a date it would have to check further (a day past the
// 28th), is left to time.Parse; the result is the same as time.Parse's.
func parseUTCSeconds(s []byte) (time.Time, bool) {
	if len(s) != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != 'Z' {
		return time.Time{}, false
	}
	num := func(from, to int) int {
		n := 0
		for _, c := range s[from:to] {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	year, month, day := num(0, 4), num(5, 7), num(8, 10)
	hour, minute, sec := num(11, 13), num(14, 16), num(17, 19)
	if year < 0 || month < 1 || month > 12 || day < 1 || day > 28 ||
		hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.UTC), true
}
