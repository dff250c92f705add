package lease

import (
	"time"

	"github.com/kinformer/kinformer/object"
)

// Stamp returns spec with holder as its holder, renewed at now, declaring t's duration.
// Taking the Lease from another holder, or from none, is a transition (see Take); a
// renewal by the same holder keeps acquireTime and leaseTransitions. Members of the spec
// this package does not model stay as they are.
func Stamp(spec object.LeaseSpec, holder string, t Timing, now time.Time) object.LeaseSpec {
	if Holder(spec) != holder || spec.AcquireTime == nil {
		return Take(spec, holder, t, now)
	}
	return renew(spec, holder, t, now)
}

// Take is Stamp for a holder that acquires the Lease, even from an earlier process of
// its own name: acquireTime restarts, and leaseTransitions counts one more, from 0 for a
// Lease nobody held before (client-go's record, which its leader election reads).
func Take(spec object.LeaseSpec, holder string, t Timing, now time.Time) object.LeaseSpec {
	spec.AcquireTime = ptr(object.NewMicroTime(now))
	if spec.LeaseTransitions == nil {
		spec.LeaseTransitions = ptr[int32](0)
	} else {
		spec.LeaseTransitions = ptr(*spec.LeaseTransitions + 1)
	}
	return renew(spec, holder, t, now)
}

func renew(spec object.LeaseSpec, holder string, t Timing, now time.Time) object.LeaseSpec {
	spec.HolderIdentity = ptr(holder)
	spec.LeaseDurationSeconds = ptr(t.Seconds())
	spec.RenewTime = ptr(object.NewMicroTime(now))
	return spec
}

// Holder is the spec's holderIdentity, "" for none.
func Holder(spec object.LeaseSpec) string { return deref(spec.HolderIdentity) }

// Duration is the duration a Lease declares, or dflt when it declares none.
func Duration(spec object.LeaseSpec, dflt time.Duration) time.Duration {
	if s := deref(spec.LeaseDurationSeconds); s > 0 {
		return time.Duration(s) * time.Second
	}
	return dflt
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
