package object

import "testing"

func TestKindOf(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{KindOf[*Pod](), "Pod"}, {KindOf[*ReplicaSet](), "ReplicaSet"}, {KindOf[*Deployment](), "Deployment"},
		{KindOf[*Lease](), "Lease"}, {KindOf[*Raw](), ""},
	} {
		if tc.got != tc.want {
			t.Errorf("KindOf = %q, want %q", tc.got, tc.want)
		}
	}
}
