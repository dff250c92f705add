package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kinformer/kinformer/bench/measure"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/logbuf"
	"github.com/kinformer/kinformer/object"
)

func TestBenchSync(t *testing.T) {
	leakcheck.Check(t)
	_, kc, pods := simPods(t)
	ctx := context.Background()
	for i := range 50 {
		if _, err := pods.Create(ctx, &object.Pod{ObjectMeta: object.ObjectMeta{Name: fmt.Sprint("p", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut logbuf.Buffer
	if err := run(ctx, []string{"bench", "sync", "pods", "--json", "--kubeconfig", kc}, &out, &errOut); err != nil {
		t.Fatalf("bench sync: %v\n%s", err, &errOut)
	}
	var res measure.Result
	if err := json.Unmarshal([]byte(out.String()), &res); err != nil {
		t.Fatalf("not a result line: %v: %q", err, out.String())
	}
	if res.Objects != 50 || res.SyncSeconds <= 0 || res.PeakRSSBytes <= 0 || res.HeapAfterGCBytes == 0 {
		t.Errorf("implausible result: %+v", res)
	}
	out = logbuf.Buffer{}
	if err := run(ctx, []string{"bench", "sync", "pods", "--kubeconfig", kc}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "synced 50 default/pods in ") {
		t.Errorf("human output: %q", out.String())
	}
	if err := run(ctx, []string{"bench", "list"}, &out, &errOut); err == nil {
		t.Error("an unknown bench subcommand must be a usage error")
	}
}
