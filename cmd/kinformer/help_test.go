package main

import (
	"context"
	"strings"
	"testing"

	"github.com/kinformer/kinformer/internal/testrig/logbuf"
)

// help COMMAND prints the command's flags on stdout, -h asks for help and so exits 0,
// and version says what was built.
func TestHelpAndVersion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string // in stdout
	}{
		{[]string{"help", "watch"}, 0, "usage: kinformer watch RESOURCE"},
		{[]string{"help", "cache", "dump"}, 0, "usage: kinformer cache dump RESOURCE"},
		{[]string{"help", "cache"}, 0, "usage: kinformer cache verify RESOURCE"},
		{[]string{"watch", "-h"}, 0, ""},
		{[]string{"version"}, 0, "kinformer "},
		{[]string{"help"}, 0, "'kinformer version'"},
		{[]string{"help", "frobnicate"}, 2, ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errOut logbuf.Buffer
			err := run(context.Background(), tc.args, &out, &errOut)
			if got := exitCode(err); err != nil && got != tc.code || err == nil && tc.code != 0 {
				t.Errorf("%v: exit %d (%v), want %d", tc.args, got, err, tc.code)
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("%v printed %q, want it to hold %q", tc.args, out.String(), tc.want)
			}
		})
	}
}
