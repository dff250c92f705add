package main

import (
	"context"
	"testing"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/fakekubelet"
	"github.com/kinformer/kinformer/internal/testrig/simtest"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// TestHasNodes: the demo leaves the pods to a cluster's kubelets, but not to the Node a
// stopped fake kubelet left behind.
func TestHasNodes(t *testing.T) {
	_, c := simtest.Start(t, apisim.Options{})
	ctx := context.Background()
	info, err := c.Discover(ctx, "nodes")
	if err != nil {
		t.Fatal(err)
	}
	nodes := listwatch.For[*object.Raw](c, info, "")
	steps := []struct {
		node   *object.Raw
		wanted bool
	}{
		{nil, false},
		{&object.Raw{ObjectMeta: object.ObjectMeta{Name: "fake", Labels: map[string]string{fakekubelet.NodeLabel: "true"}}}, false},
		{&object.Raw{ObjectMeta: object.ObjectMeta{Name: "real", Labels: map[string]string{"kubernetes.io/hostname": "real"}}}, true},
	}
	for _, s := range steps {
		if s.node != nil {
			if _, err := nodes.Create(ctx, s.node); err != nil {
				t.Fatal(err)
			}
		}
		if got := hasNodes(ctx, c); got != s.wanted {
			t.Errorf("hasNodes with %+v: %v", s.node, got)
		}
	}
}
