package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/internal/leakcheck"
	"github.com/kinformer/kinformer/internal/testwait"
	"github.com/kinformer/kinformer/object"
)

// TestFakeKubeletStartsPods runs the command against the simulator: a pod becomes ready,
// and one with an image of a default never-ready tag is started but never ready.
func TestFakeKubeletStartsPods(t *testing.T) {
	leakcheck.Check(t)
	_, kc, pods := simPods(t)
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
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
	var out, errOut syncBuffer
	if err := run(context.Background(), []string{"fake-kubelet", "pods"}, &out, &errOut); exitCode(err) != 2 {
		t.Errorf("a positional argument: %v, want a usage error", err)
	}
}
