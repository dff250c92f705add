package main

import (
	"io"
	"strings"
	"testing"

	"github.com/kinformer/kinformer/internal/memlimit"
)

func TestMemoryLimitFlag(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    memlimit.Bytes
		wantErr string
	}{
		{nil, 0, ""}, // off by default
		{[]string{"--memory-limit", "2.5Gi"}, 5 << 29, ""},
		{[]string{"--memory-limit=3GB"}, 3e9, ""},
		{[]string{"--memory-limit", "lots"}, 0, "2.5GiB"},
	} {
		var f controllerManagerFlags
		err := f.parse(tc.args, io.Discard)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: %v, want an error with %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil || f.memoryLimit != tc.want {
			t.Errorf("%v: limit %d, %v; want %d", tc.args, f.memoryLimit, err, tc.want)
		}
	}
	if !strings.Contains(controllerManagerUsage, "[--memory-limit SIZE]") {
		t.Error("the usage line does not name --memory-limit")
	}
}
