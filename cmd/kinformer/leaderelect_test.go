package main

import (
	"io"
	"testing"
)

// Leader election is on by default, as kube-controller-manager's; --leader-elect=false
// turns it off; a shard group's members do not elect (they all act), and asking for both
// is a usage error.
func TestLeaderElectionByDefault(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		elect bool
		err   bool
	}{
		{nil, true, false},
		{[]string{"--leader-elect=false"}, false, false},
		{[]string{"--shard-group", "g"}, false, false},
		{[]string{"--shard-group", "g", "--leader-elect"}, false, true},
		{[]string{"--shard-group", "g", "--leader-elect=false"}, false, false},
	} {
		var f controllerManagerFlags
		err := f.parse(append([]string{"--kubeconfig", "kc"}, tc.args...), io.Discard)
		if (err != nil) != tc.err || err == nil && f.elect != tc.elect {
			t.Errorf("%q: elect %v, err %v; want elect %v, an error %v", tc.args, f.elect, err, tc.elect, tc.err)
		}
	}
}
