package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/logbuf"
	"github.com/kinformer/kinformer/internal/testrig/simtest"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// TestFakeKubeletStartsPods runs the command against the simulator: a pod becomes ready,
// and one with an image of a default never-ready tag is started but never ready.
func TestFakeKubeletStartsPods(t *testing.T) {
	leakcheck.Check(t)
	_, kc, pods := simPods(t)
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut logbuf.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"fake-kubelet", "--kubeconfig", kc, "--ready-after", "0"}, &out, &errOut)
	}()

	for name, image := range map[string]string{"web": "nginx:1.27", "stuck": "nginx:404"} {
		p := &object.Pod{ObjectMeta: object.ObjectMeta{Name: name}}
		p.Spec.Unknown.Set("containers", json.RawMessage(`[{"name":"app","image":"`+image+`"}]`))
		if _, err := pods.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	var web, stuck *object.Pod
	testwait.Eventually(t, 30*time.Second, func() bool {
		var err error
		if web, err = pods.Get(ctx, "web"); err != nil {
			t.Fatal(err)
		}
		if stuck, err = pods.Get(ctx, "stuck"); err != nil {
			t.Fatal(err)
		}
		stuckStarted := stuck.Status.Unknown.Get("startTime") != nil
		return web.IsReady() && stuckStarted
	}, "pods not started in time: web %+v, stuck %+v\nstdout: %s\nstderr: %s",
		testwait.Lazy(func() any { return web.Status }), testwait.Lazy(func() any { return stuck.Status }), &out, &errOut)
	if stuck.IsReady() || stuck.Spec.NodeName != "fake-node" {
		t.Errorf("a pod with image nginx:404 is ready, or not on fake-node: %+v", stuck)
	}
	waitForOutput(t, &out, `fake kubelet: binding pods to node fake-node at http://127.0.0.1:`)
	waitForOutput(t, &out, `ready after 0s, never ready: [":nonexistent" ":404"]`)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("fake-kubelet ended with %v", err)
	}
}

func TestFakeKubeletFlags(t *testing.T) {
	var p patterns
	for _, v := range []string{":nonexistent,:404", " broken/ ", ",,"} {
		if err := p.Set(v); err != nil {
			t.Fatal(err)
		}
	}
	if d := cmp.Diff([]string{":nonexistent", ":404", "broken/"}, p.list); d != "" || !p.set {
		t.Errorf("patterns (-want +got):\n%s", d)
	}
	r := resources{}
	for _, v := range []string{"cpu=4, memory=8Gi", "pods=20", ",", "cpu=2"} {
		if err := r.Set(v); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.over(map[string]string{"cpu": "32", "ephemeral-storage": "100Gi"}); got != "cpu=2,ephemeral-storage=100Gi,memory=8Gi,pods=20" {
		t.Errorf("resources over defaults: %s", got)
	}
	for _, bad := range []string{"cpu", "=4", "cpu:4"} {
		if err := (resources{}).Set(bad); err == nil {
			t.Errorf("--capacity %q accepted", bad)
		}
	}
	_, kc := startSim(t, apisim.Options{})
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"pods"}, 2},
		{[]string{"--capacity", "cpu"}, 1}, // as every flag the flag package refuses
		{[]string{"--capacity", "cpu=four"}, 2},
		{[]string{"--allocatable", "memory=1GB"}, 2},
	} {
		var out, errOut logbuf.Buffer
		args := append([]string{"fake-kubelet", "--kubeconfig", kc}, tt.args...)
		if err := run(context.Background(), args, &out, &errOut); exitCode(err) != tt.code {
			t.Errorf("%q: %v, want exit code %d", tt.args, err, tt.code)
		}
	}
}

// TestFakeKubeletRegistersItsNode runs the command against the simulator: the Node has
// the capacity of the flags, and is deleted on exit only with --delete-node-on-exit.
func TestFakeKubeletRegistersItsNode(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		capacity string
		stays    bool
	}{
		{"defaults", nil, `{"cpu":"32","memory":"256Gi","pods":"110"}`, true},
		{"flags", []string{"--capacity", "cpu=4,memory=8Gi", "--allocatable", "cpu=3", "--delete-node-on-exit"},
			`{"cpu":"4","memory":"8Gi","pods":"110"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			leakcheck.Check(t)
			_, kc := startSim(t, apisim.Options{})
			c := simtest.KubeconfigClient(t, kc)
			info, err := c.Discover(context.Background(), "nodes")
			if err != nil {
				t.Fatal(err)
			}
			nodes := listwatch.For[*object.Raw](c, info, "")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out, errOut logbuf.Buffer
			done := make(chan error, 1)
			go func() {
				done <- run(ctx, append([]string{"fake-kubelet", "--kubeconfig", kc, "--node-name", "n1"}, tt.args...), &out, &errOut)
			}()
			var node *object.Raw
			testwait.Eventually(t, 30*time.Second, func() bool {
				node, err = nodes.Get(ctx, "n1")
				return err == nil
			}, "no Node n1: %v\nstdout: %s\nstderr: %s", testwait.Lazy(func() any { return err }), &out, &errOut)
			var status struct{ Capacity, Allocatable json.RawMessage }
			if err := json.Unmarshal(node.Unknown.Get("status"), &status); err != nil {
				t.Fatal(err)
			}
			if string(status.Capacity) != tt.capacity {
				t.Errorf("capacity %s, want %s", status.Capacity, tt.capacity)
			}
			waitForOutput(t, &out, "fake kubelet: node n1: capacity ")
			cancel()
			if err := <-done; err != nil {
				t.Errorf("fake-kubelet ended with %v", err)
			}
			_, err = nodes.Get(context.Background(), "n1")
			if stays := err == nil; stays != tt.stays {
				t.Errorf("after exit: Node there %v (%v), want %v", stays, err, tt.stays)
			}
		})
	}
}
