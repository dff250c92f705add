package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
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
	_ = sim
	if err := run(context.Background(), []string{"cache", "list"}, &vout, &errOut); exitCode(err) != 2 {
		t.Errorf("bad subcommand: %v", err)
	}
}

// A sync that takes a while is never silent: the command says what it waits for (the
// reflector's state and its last error) on stderr, then syncs once the server recovers.
func TestWatchSaysWhatItWaitsFor(t *testing.T) {
	leakcheck.Check(t)
	sim, kc, _ := simPods(t)
	sim.Faults().FailRequests(1000, 500, 0, func(r *http.Request) bool {
		return r.URL.Path == "/api/v1/namespaces/default/pods" && r.URL.Query().Get("watch") == ""
	})
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut logbuf.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"watch", "pods", "--kubeconfig", kc}, &out, &errOut) }()
	waitForOutput(t, &errOut, "kinformer: waiting for default/pods to sync: ")
	waitForOutput(t, &errOut, "last error: ")
	if !strings.Contains(errOut.String(), "injected failure") {
		t.Errorf("the wait does not name the last error:\n%s", errOut.String())
	}
	sim.Faults().FailRequests(0, 0, 0, nil)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("watch ended with %v", err)
	}
}

// The controller manager runs against `kinformer sim` as against a cluster, with leader
// election too, and stops cleanly on interrupt.
func TestControllerManagerAgainstSim(t *testing.T) {
	leakcheck.Check(t)
	sim, kc := startSim(t, apisim.Options{})
	c := simtest.KubeconfigClient(t, kc)
	info, err := c.Discover(context.Background(), "replicasets.apps")
	if err != nil {
		t.Fatal(err)
	}
	two := int32(2)
	rs := &object.ReplicaSet{ObjectMeta: object.ObjectMeta{Name: "web"}, Spec: object.ReplicaSetSpec{Replicas: &two,
		Selector: &object.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template: object.PodTemplateSpec{ObjectMeta: object.ObjectMeta{Labels: map[string]string{"app": "web"}}, Spec: []byte(`{"containers":[{"name":"c","image":"nginx"}]}`)}}}
	if _, err := listwatch.For[*object.ReplicaSet](c, info, "default").Create(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut logbuf.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"controller-manager", "--kubeconfig", kc, "--metrics-addr", "127.0.0.1:0", "--secure-port", "0", "--leader-elect",
			"--lease-duration", "2s", "--renew-deadline", "1s", "--retry-period", "200ms", "--log-level", "debug"}, &out, &errOut)
	}()
	waitForOutput(t, &out, "controller-manager: controllers ")
	testwait.Eventually(t, 10*time.Second, func() bool {
		st, _ := listwatch.For[*object.ReplicaSet](c, info, "default").Get(context.Background(), "web")
		return st != nil && st.Status.Replicas == 2
	}, "the ReplicaSet was not reconciled:\n%s\n%s", &out, &errOut)
	// --log-level debug: a line per sync, with its key.
	testwait.Eventually(t, 10*time.Second, func() bool {
		return strings.Contains(errOut.String(), `msg=synced controller=replicaset key=default/web`)
	},
		"no sync logged at debug level:\n%s", &errOut)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("controller-manager ended with %v", err)
	}
	_ = sim
}
