package object

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const leaseJSON = `{
 "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
 "metadata": {"name": "kube-controller-manager", "namespace": "kube-system", "resourceVersion": "7",
   "managedFields": [{"manager": "kube-controller-manager", "operation": "Update"}]},
 "spec": {"holderIdentity": "node-a_0f3c", "leaseDurationSeconds": 15,
   "acquireTime": "2026-01-02T03:04:05.123456Z", "renewTime": "2026-01-02T03:09:05.000001Z",
   "leaseTransitions": 4, "strategy": "OldestEmulationVersion", "preferredHolder": "node-b"},
 "futureTopLevel": {"x": 1}
}`

func TestLeaseRoundTripKeepsUnknownFields(t *testing.T) {
	l := roundTrip[Lease](t, leaseJSON)

	str := func(s string) *string { return &s }
	i32 := func(n int32) *int32 { return &n }
	at := func(s string) *MicroTime {
		parsed, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return &MicroTime{parsed}
	}
	want := LeaseSpec{
		HolderIdentity:       str("node-a_0f3c"),
		LeaseDurationSeconds: i32(15),
		AcquireTime:          at("2026-01-02T03:04:05.123456Z"),
		RenewTime:            at("2026-01-02T03:09:05.000001Z"),
		LeaseTransitions:     i32(4),
	}
	want.Unknown.Set("strategy", json.RawMessage(`"OldestEmulationVersion"`))
	want.Unknown.Set("preferredHolder", json.RawMessage(`"node-b"`))
	if d := cmp.Diff(want, l.Spec); d != "" {
		t.Errorf("decoded spec (-want +got):\n%s", d)
	}
}

// The apiserver parses acquireTime and renewTime with exactly six fractional digits, so
// every MicroTime must come out that way, whatever precision or zone it was made with.
func TestMicroTimeEncodesSixFractionalDigits(t *testing.T) {
	tests := []struct {
		name string
		in   time.Time
		want string
	}{
		{"nanoseconds are truncated", time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC), `"2026-01-02T03:04:05.123456Z"`},
		{"whole seconds keep six zeros", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), `"2026-01-02T03:04:05.000000Z"`},
		{"trailing zeros are kept", time.Date(2026, 1, 2, 3, 4, 5, 100000, time.UTC), `"2026-01-02T03:04:05.000100Z"`},
		{"other zones are written in UTC", time.Date(2026, 1, 2, 5, 4, 5, 7000, time.FixedZone("x", 2*3600)), `"2026-01-02T03:04:05.000007Z"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, mt := range []MicroTime{{tt.in}, NewMicroTime(tt.in)} {
				b, err := json.Marshal(mt)
				if err != nil {
					t.Fatal(err)
				}
				if string(b) != tt.want {
					t.Errorf("Marshal(%v) = %s, want %s", mt.Time, b, tt.want)
				}
			}
		})
	}
}

func TestLeaseEncodesOnlySetFields(t *testing.T) {
	holder, transitions := "me", int32(0)
	renew := NewMicroTime(time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC))
	l := Lease{
		TypeMeta:   TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
		ObjectMeta: ObjectMeta{Name: "x", Namespace: "kube-system"},
		Spec:       LeaseSpec{HolderIdentity: &holder, RenewTime: &renew, LeaseTransitions: &transitions},
	}
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	// leaseTransitions 0 is written: a pointer to zero is a value, not an absence.
	want := `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"x","namespace":"kube-system"},` +
		`"spec":{"holderIdentity":"me","leaseTransitions":0,"renewTime":"2026-01-02T03:04:05.000006Z"}}`
	if string(b) != want {
		t.Errorf("Marshal =\n%s\nwant\n%s", b, want)
	}

	var back Lease
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(l, back); d != "" {
		t.Errorf("decode after encode (-want +got):\n%s", d)
	}
}
