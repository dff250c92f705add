package lease_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/lease"
	"github.com/kinformer/kinformer/object"
)

func ptr[T any](v T) *T { return &v }

func microAt(t time.Time) *object.MicroTime { m := object.NewMicroTime(t); return &m }

func TestStampAndTake(t *testing.T) {
	timing := lease.Timing{LeaseDuration: 1500 * time.Millisecond}
	before := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	now := before.Add(time.Minute + 1234567*time.Nanosecond) // kept to the microsecond
	withStrategy := func(s object.LeaseSpec) object.LeaseSpec {
		s.Unknown.Set("strategy", json.RawMessage(`"OldestEmulationVersion"`))
		return s
	}
	tests := []struct {
		name      string
		spec      object.LeaseSpec
		take      bool // Take rather than Stamp
		want      object.LeaseSpec
		wantTaken bool // acquireTime is now
	}{
		{name: "a Lease nobody held: the first holder, no transition",
			spec: object.LeaseSpec{},
			want: object.LeaseSpec{HolderIdentity: ptr("a"), LeaseDurationSeconds: ptr[int32](2), LeaseTransitions: ptr[int32](0)}, wantTaken: true},
		{name: "renewal keeps acquireTime and leaseTransitions",
			spec: object.LeaseSpec{HolderIdentity: ptr("a"), LeaseDurationSeconds: ptr[int32](2), AcquireTime: microAt(before), RenewTime: microAt(before), LeaseTransitions: ptr[int32](3)},
			want: object.LeaseSpec{HolderIdentity: ptr("a"), LeaseDurationSeconds: ptr[int32](2), AcquireTime: microAt(before), LeaseTransitions: ptr[int32](3)}},
		{name: "renewal writes the holder's own duration",
			spec: object.LeaseSpec{HolderIdentity: ptr("a"), LeaseDurationSeconds: ptr[int32](60), AcquireTime: microAt(before), RenewTime: microAt(before), LeaseTransitions: ptr[int32](0)},
			want: object.LeaseSpec{HolderIdentity: ptr("a"), LeaseDurationSeconds: ptr[int32](2), AcquireTime: microAt(before), LeaseTransitions: ptr[int32](0)}},
		{name: "taken from another holder",
			spec: object.LeaseSpec{HolderIdentity: ptr("b"), LeaseDurationSeconds: ptr[int32](15), AcquireTime: microAt(before), RenewTime: microAt(before), LeaseTransitions: ptr[int32](3)},
			want: object.LeaseSpec{HolderIdentity: ptr("a"), LeaseDurationSeconds: ptr[int32](2), LeaseTransitions: ptr[int32](4)}, wantTaken: true},
		{name: "taken after a release",
			spec: object.LeaseSpec{HolderIdentity: ptr(""), LeaseDurationSeconds: ptr[int32](1), AcquireTime: microAt(before), RenewTime: microAt(before), LeaseTransitions: ptr[int32](3)},
			want: object.LeaseSpec{HolderIdentity: ptr("a"), LeaseDurationSeconds: ptr[int32](2), LeaseTransitions: ptr[int32](4)}, wantTaken: true},
		{name: "this holder's name without an acquireTime: taken",
			spec: object.LeaseSpec{HolderIdentity: ptr("a"), LeaseTransitions: ptr[int32](3)},
			want: object.LeaseSpec{HolderIdentity: ptr("a"), LeaseDurationSeconds: ptr[int32](2), LeaseTransitions: ptr[int32](4)}, wantTaken: true},
		{name: "Take from an earlier process of the same name", take: true,
			spec: object.LeaseSpec{HolderIdentity: ptr("a"), LeaseDurationSeconds: ptr[int32](2), AcquireTime: microAt(before), RenewTime: microAt(before), LeaseTransitions: ptr[int32](3)},
			want: object.LeaseSpec{HolderIdentity: ptr("a"), LeaseDurationSeconds: ptr[int32](2), LeaseTransitions: ptr[int32](4)}, wantTaken: true},
		{name: "Take of a Lease nobody held", take: true,
			spec: object.LeaseSpec{},
			want: object.LeaseSpec{HolderIdentity: ptr("a"), LeaseDurationSeconds: ptr[int32](2), LeaseTransitions: ptr[int32](0)}, wantTaken: true},
		{name: "members not modelled stay",
			spec: withStrategy(object.LeaseSpec{HolderIdentity: ptr("b"), LeaseTransitions: ptr[int32](0)}),
			want: withStrategy(object.LeaseSpec{HolderIdentity: ptr("a"), LeaseDurationSeconds: ptr[int32](2), LeaseTransitions: ptr[int32](1)}), wantTaken: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := object.DeepCopy(tt.spec)
			var got object.LeaseSpec
			if tt.take {
				got = lease.Take(in, "a", timing, now)
			} else {
				got = lease.Stamp(in, "a", timing, now)
			}
			want := tt.want
			want.RenewTime = microAt(now)
			if tt.wantTaken {
				want.AcquireTime = microAt(now)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.spec, in); d != "" {
				t.Errorf("the spec passed in changed (-before +after):\n%s", d)
			}
		})
	}
}

func TestHolderAndDuration(t *testing.T) {
	tests := []struct {
		spec         object.LeaseSpec
		wantHolder   string
		wantDuration time.Duration
	}{
		{object.LeaseSpec{}, "", 7 * time.Second},
		{object.LeaseSpec{HolderIdentity: ptr(""), LeaseDurationSeconds: ptr[int32](0)}, "", 7 * time.Second},
		{object.LeaseSpec{HolderIdentity: ptr("a"), LeaseDurationSeconds: ptr[int32](-3)}, "a", 7 * time.Second},
		{object.LeaseSpec{HolderIdentity: ptr("b"), LeaseDurationSeconds: ptr[int32](1)}, "b", time.Second},
	}
	for _, tt := range tests {
		if got := lease.Holder(tt.spec); got != tt.wantHolder {
			t.Errorf("Holder(%s) = %q, want %q", specString(tt.spec), got, tt.wantHolder)
		}
		if got := lease.Duration(tt.spec, 7*time.Second); got != tt.wantDuration {
			t.Errorf("Duration(%s, 7s) = %v, want %v", specString(tt.spec), got, tt.wantDuration)
		}
	}
}

func specString(s object.LeaseSpec) string {
	b, err := json.Marshal(s)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
