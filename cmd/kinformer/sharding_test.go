package main

import (
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"
)

func TestShardFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // the group and ID, "" without sharding; or the usage error's words
		err  bool
	}{
		{nil, "", false},
		{[]string{"--shard-group", "ctrl", "--shard-id", "pod-a"}, "ctrl pod-a", false},
		{[]string{"--shard-group", "ctrl", "--shard-id", "pod-a", "--leader-elect"}, "exclude each other", true},
		{[]string{"--shard-id", "pod-a"}, "go with --shard-group", true},
		{[]string{"--shard-namespace", "ops"}, "go with --shard-group", true},
	} {
		var f controllerManagerFlags
		err := f.parse(tc.args, io.Discard)
		var ue usageError
		switch {
		case tc.err && (!errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: %v, want a usage error with %q", tc.args, err, tc.want)
		case !tc.err && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case !tc.err:
			got := ""
			if s := f.sharding(); s != nil {
				got = s.Group + " " + s.ID
			}
			if got != tc.want {
				t.Errorf("%v: sharding %q, want %q", tc.args, got, tc.want)
			}
		}
	}
}

// Without --shard-id a member is named after the host, lower case, with a random suffix:
// its Lease's name must be a lower-case DNS name.
func TestDefaultShardIDIsALeaseName(t *testing.T) {
	id := defaultShardID()
	if !regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?-[0-9a-f]{8}$`).MatchString(id) {
		t.Errorf("default shard ID %q is no lower-case DNS name with a suffix", id)
	}
	if defaultShardID() == id {
		t.Error("two default shard IDs are equal")
	}
}
