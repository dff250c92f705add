package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/logbuf"
	"github.com/kinformer/kinformer/internal/testrig/simtest"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

func startSim(t *testing.T, opts apisim.Options) (*apisim.Server, string) {
	t.Helper()
	sim := apisim.New(opts)
	url, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := sim.WriteKubeconfig(kc, url); err != nil {
		t.Fatal(err)
	}
	return sim, kc
}

// simPods starts a simulator and returns it, its kubeconfig, and the pods of namespace
// "default" through a client configured from that kubeconfig.
func simPods(t *testing.T) (*apisim.Server, string, *listwatch.Resource[*object.Pod]) {
	t.Helper()
	sim, kc := startSim(t, apisim.Options{})
	c := simtest.KubeconfigClient(t, kc)
	info, err := c.Discover(context.Background(), "pods")
	if err != nil {
		t.Fatal(err)
	}
	return sim, kc, listwatch.For[*object.Pod](c, info, "default")
}

// waitForOutput waits until out contains want.
func waitForOutput(t *testing.T, out *logbuf.Buffer, want string) {
	t.Helper()
	testwait.Eventually(t, 10*time.Second, func() bool { return strings.Contains(out.String(), want) },
		"output never contained %q:\n%s", want, out)
}

func TestWatchPrintsEvents(t *testing.T) {
	leakcheck.Check(t)
	_, kc, pods := simPods(t)
	if _, err := pods.Create(context.Background(), &object.Pod{ObjectMeta: object.ObjectMeta{Name: "before"}}); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut logbuf.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"watch", "pods", "--kubeconfig", kc, "-l", ""}, &out, &errOut) }()
	waitForOutput(t, &out, "ADD     default/before rv=2 initial=true")
	if _, err := pods.Create(ctx, &object.Pod{ObjectMeta: object.ObjectMeta{Name: "after"}}); err != nil {
		t.Fatal(err)
	}
	waitForOutput(t, &out, "ADD     default/after")
	if err := pods.Delete(ctx, "after", listwatch.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForOutput(t, &out, "DELETE  default/after")
	cancel()
	if err := <-done; err != nil {
		t.Errorf("watch ended with %v", err)
	}
}

func TestWatchErrors(t *testing.T) {
	sim, kc := startSim(t, apisim.Options{Token: "t0ken"})
	sim.Faults().Forbid("configmaps", true)
	dir := t.TempDir()
	badToken := filepath.Join(dir, "bad")
	data, _ := os.ReadFile(kc)
	os.WriteFile(badToken, bytes.ReplaceAll(data, []byte("t0ken"), []byte("wrong")), 0o600)
	unreachable := filepath.Join(dir, "down")
	os.WriteFile(unreachable, []byte("apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters: [{name: c, cluster: {server: \"http://127.0.0.1:1\"}}]\ncontexts: [{name: c, context: {cluster: c}}]\n"), 0o600)
	tests := []struct {
		name string
		args []string
		want string
		code int
	}{
		{"unknown resource", []string{"watch", "gadgets", "--kubeconfig", kc}, "does not have this resource type", 1},
		{"no kubeconfig", []string{"watch", "pods", "--kubeconfig", filepath.Join(dir, "missing")}, "no such file", 1},
		{"unreachable", []string{"watch", "pods", "--kubeconfig", unreachable}, "cannot reach the apiserver", 1},
		{"401", []string{"watch", "pods", "--kubeconfig", badToken}, "401", 1},
		{"403", []string{"watch", "configmaps", "--kubeconfig", kc}, "403", 1},
		{"bad selector", []string{"watch", "pods", "--kubeconfig", kc, "-l", "a in b"}, "expected '('", 2},
		// A field the server cannot select by is its 400: terminal, not retried forever.
		{"field selector refused", []string{"watch", "pods", "--kubeconfig", kc, "--field-selector", "spec.foo=bar"}, "refused the request (400)", 1},
		{"no resource", []string{"watch", "--kubeconfig", kc}, "usage", 2},
		{"unknown command", []string{"frobnicate"}, "unknown command", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var out, errOut logbuf.Buffer
			err := run(ctx, tt.args, &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want it to mention %q", err, tt.want)
			}
			if got := exitCode(err); got != tt.code {
				t.Errorf("exit code %d, want %d", got, tt.code)
			}
		})
	}
	t.Run("no kubeconfig anywhere", func(t *testing.T) {
		_, err := listwatch.LoadKubeconfig(listwatch.LoadOptions{Getenv: func(string) string { return "" }, Home: dir})
		if err != listwatch.ErrNoKubeconfig {
			t.Errorf("error = %v", err)
		}
	})
}

// The demo tells its whole story on the simulator and exits cleanly; piped, it prints
// each chapter and periodic summary lines, the last one before its last line.
func TestDemoRuns(t *testing.T) {
	leakcheck.Check(t)
	var out, errOut logbuf.Buffer
	if err := run(context.Background(), []string{"demo", "--ready-after", "100ms", "--timeout", "60s"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out.String(), errOut.String())
	}
	printed := out.String()
	for _, want := range []string{"✓ 1/8 create Deployment web", "✓ 5/8 pause halfway", "✓ 7/8 roll back", "✓ 8/8 delete Deployment web",
		"web rev ", "events/s deploy", " retries ", " stale "} {
		if !strings.Contains(printed, want) {
			t.Errorf("demo output lacks %q:\n%s", want, printed)
		}
	}
	if strings.Contains(printed, "metrics:") || strings.Contains(printed, "?") {
		t.Errorf("the view could not read the engine's counters:\n%s", printed)
	}
	if !strings.HasSuffix(printed, "\nkinformer demo: done\n") {
		t.Errorf("the demo's output does not end with its last line:\n%s", printed)
	}
}

func TestCacheDumpAndVerify(t *testing.T) {
	leakcheck.Check(t)
	sim, kc, pods := simPods(t)
	for _, n := range []string{"b", "a"} {
		if _, err := pods.Create(context.Background(), &object.Pod{ObjectMeta: object.ObjectMeta{Name: n}}); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut logbuf.Buffer
	if err := run(context.Background(), []string{"cache", "dump", "pods", "--kubeconfig", kc}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"namespace":"default","name":"a","uid":"`) || !strings.Contains(lines[1], `"name":"b"`) {
		t.Errorf("dump:\n%s", out.String())
	}
	var vout logbuf.Buffer
	if err := run(context.Background(), []string{"cache", "verify", "pods", "--kubeconfig", kc}, &vout, &errOut); err != nil {
		t.Fatalf("verify: %v\n%s", err, vout.String())
	}
	if !strings.Contains(vout.String(), "verified 2 objects") {
		t.Errorf("verify output: %s", vout.String())
	}
	// Listed at exactly the cache's resourceVersion (nothing to wait for); and when the
	// server answers that list 410 (the version compacted away), the newest state, with
	// a word on stderr of what it waits for.
	exact := func(r *http.Request) bool { return r.URL.Query().Get("resourceVersionMatch") == "Exact" }
	var exactLists atomic.Int32
	sim.Faults().FailRequests(1, 0, 0, func(r *http.Request) bool {
		if exact(r) {
			exactLists.Add(1)
		}
		return false // only watching
	})
	vout = logbuf.Buffer{}
	if err := run(context.Background(), []string{"cache", "verify", "pods", "--kubeconfig", kc}, &vout, &errOut); err != nil || exactLists.Load() == 0 {
		t.Errorf("verify: %v, %d lists at the cache's exact resourceVersion", err, exactLists.Load())
	}
	sim.Faults().FailRequests(1, http.StatusGone, 0, exact)
	var vout2, errOut2 logbuf.Buffer
	if err := run(context.Background(), []string{"cache", "verify", "pods", "--kubeconfig", kc}, &vout2, &errOut2); err != nil {
		t.Fatalf("verify after a 410: %v\n%s", err, vout2.String())
	}
	if !strings.Contains(vout2.String(), "verified 2 objects") || !strings.Contains(errOut2.String(), "no longer has the cache's resourceVersion") {
		t.Errorf("verify after a 410:\n%s\n%s", vout2.String(), errOut2.String())
	}
	_ = sim
}
