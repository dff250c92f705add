package object

import (
	"encoding/json"
	"time"

	"github.com/kinformer/kinformer/internal/codec"
)

// Lease is a coordination.k8s.io/v1 Lease: a small record that one holder at a time
// renews, used for leader election and node heartbeats.
type Lease struct {
	TypeMeta
	ObjectMeta `json:"metadata" pb:"1"`
	Spec       LeaseSpec `json:"spec" pb:"2"`

	Unknown Unknown `json:"-"`
}

// LeaseSpec is who holds a Lease, since when, and for how long a silent holder keeps it.
// Every field is optional in the API, hence the pointers: an absent holderIdentity and an
// empty one both mean nobody holds the lease. Fields this package does not model
// (strategy, preferredHolder) are kept in Unknown and written back unchanged.
type LeaseSpec struct {
	HolderIdentity       *string    `json:"holderIdentity,omitempty" pb:"1"`
	LeaseDurationSeconds *int32     `json:"leaseDurationSeconds,omitempty" pb:"2"`
	AcquireTime          *MicroTime `json:"acquireTime,omitempty" pb:"3"`
	RenewTime            *MicroTime `json:"renewTime,omitempty" pb:"4"`
	LeaseTransitions     *int32     `json:"leaseTransitions,omitempty" pb:"5"`
	Unknown              Unknown    `json:"-"`
}

// MarshalJSON writes the modelled fields and every unknown member.
func (l Lease) MarshalJSON() ([]byte, error) { return codec.Marshal(&l) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (l *Lease) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, l) }

// MarshalJSON writes the modelled fields and every unknown member.
func (s LeaseSpec) MarshalJSON() ([]byte, error) { return codec.Marshal(&s) }

// UnmarshalJSON reads the modelled fields and keeps the rest.
func (s *LeaseSpec) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, s) }

// RFC3339Micro is the layout of a MicroTime on the wire: always six fractional digits.
const RFC3339Micro = "2006-01-02T15:04:05.000000Z07:00"

// MicroTime is a timestamp with microsecond precision, the type of a Lease's acquireTime
// and renewTime (and of events' eventTime). Unlike Time it is not a lenient RFC 3339
// value: the apiserver parses these fields with exactly six fractional digits and rejects
// anything else with 400, so MarshalJSON always writes RFC3339Micro.
type MicroTime struct{ time.Time }

// NewMicroTime returns t in UTC, truncated to what the API keeps.
func NewMicroTime(t time.Time) MicroTime {
	return MicroTime{t.UTC().Truncate(time.Microsecond)}
}

// MarshalJSON writes RFC3339Micro in UTC, or null for the zero time (reached only where a
// field is not a pointer with omitempty).
func (t MicroTime) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(t.UTC().Format(RFC3339Micro))
}

// UnmarshalJSON accepts null, or any RFC 3339 timestamp: being lenient on input costs
// nothing, and a value with fewer digits (written by hand) still decodes.
func (t *MicroTime) UnmarshalJSON(b []byte) error {
	var tt Time
	if err := tt.UnmarshalJSON(b); err != nil {
		return err
	}
	t.Time = tt.Time()
	return nil
}
