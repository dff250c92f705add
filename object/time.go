package object

import (
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

func (t *Time) decodeKeep(b []byte) error { return t.UnmarshalJSON(b) }

// UnmarshalJSON accepts null, or any RFC 3339 timestamp (with or without fractions).
func (t *Time) UnmarshalJSON(b []byte) error {
	if s, ok := plainString(b); ok { // the usual case: no need for encoding/json
		return t.parse(s)
	}
	if string(b) == "null" {
		t.Time = time.Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	return t.parse(s)
}

func (t *Time) parse(s string) error {
	if s == "" {
		t.Time = time.Time{}
		return nil
	}
	parsed, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	t.Time = parsed
	return nil
}
