package object

import "github.com/kinformer/kinformer/internal/codec"

// Raw is an object of any resource: kind, apiVersion and metadata are parsed, everything
// else (spec, status, data, ...) is kept as raw JSON in Unknown. Encoding it again gives
// back every member it was decoded from.
type Raw struct {
	TypeMeta
	ObjectMeta `json:"metadata" pb:"1"`

	Unknown Unknown `json:"-"`
}

// MarshalJSON writes the metadata and every other member unchanged.
func (r Raw) MarshalJSON() ([]byte, error) { return codec.Marshal(&r) }

// UnmarshalJSON parses the metadata and keeps the rest.
func (r *Raw) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, r) }
