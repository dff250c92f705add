package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/object"
)

// TestFakeKubeletNodeAgainstRealAPIServer runs `kinformer fake-kubelet` against the real
// apiserver: its Node is Ready as kubectl reads it, with the capacity given, untainted
// and schedulable; its Lease in kube-node-lease is renewed every 10 s; and with
// --delete-node-on-exit both go when it stops. It takes one renewal period.
func TestFakeKubeletNodeAgainstRealAPIServer(t *testing.T) {
	// The apiserver creates kube-node-lease itself, for the kubelets' Leases.
	kubectl(t, "get", "namespace", "kube-node-lease")
	name := fmt.Sprintf("e2e-node-%d", time.Now().UnixNano()%100000)
	p := startProc(t, "fake-kubelet", "--kubeconfig", shared.cluster.Kubeconfig, "--node-name", name,
		"--capacity", "cpu=4,memory=8Gi", "--allocatable", "cpu=3500m", "--delete-node-on-exit")
	leases := resource[*object.Lease](t, client(t), "leases.coordination.k8s.io", "kube-node-lease")
	ctx := testwait.Context(t, time.Minute)

	// The Lease is written once the Node is registered.
	var first *object.Lease
	clusterPoll.Eventually(t, 30*time.Second, func() bool {
		var err error
		first, err = leases.Get(ctx, name)
		return err == nil
	}, "no Lease kube-node-lease/%s; fake-kubelet said:\n%s", name, testwait.Lazy(func() any { return p.output() }))

	kubectl(t, "wait", "--for=condition=Ready", "node/"+name, "--timeout=30s")
	// kubectl get node: NAME STATUS ROLES AGE VERSION.
	fields := strings.Fields(kubectl(t, "get", "node", name, "--no-headers"))
	version, _, err := client(t).ServerVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(fields) != 5 || fields[1] != "Ready" || fields[4] != version {
		t.Errorf("kubectl get node: %q, want it Ready at version %s", fields, version)
	}
	got := kubectl(t, "get", "node", name, "-o", "jsonpath={.status.capacity.cpu} {.status.capacity.memory} {.status.capacity.pods} "+
		"{.status.allocatable.cpu} {.status.allocatable.memory} | taints:{.spec.taints} unschedulable:{.spec.unschedulable} | "+
		"{.status.addresses[*].type} {.metadata.labels.kubernetes\\.io/os} {.status.nodeInfo.architecture}")
	if want := "4 8Gi 110 3500m 8Gi | taints: unschedulable: | InternalIP Hostname linux amd64"; got != want {
		t.Errorf("node:\n got %s\nwant %s", got, want)
	}
	uid := kubectl(t, "get", "node", name, "-o", "jsonpath={.metadata.uid}")
	wantRefs := []object.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: name, UID: uid}}
	if d := cmp.Diff(wantRefs, first.OwnerReferences); d != "" {
		t.Errorf("lease owners (-want +got):\n%s", d)
	}
	if h, d := first.Spec.HolderIdentity, first.Spec.LeaseDurationSeconds; h == nil || *h != name || d == nil || *d != 40 || first.Spec.RenewTime == nil {
		t.Fatalf("lease spec %+v, want held by %s for 40 s", first.Spec, name)
	}

	// The next renewal comes 10 s after the first.
	var next *object.Lease
	clusterPoll.Eventually(t, 30*time.Second, func() bool {
		var err error
		next, err = leases.Get(ctx, name)
		return err == nil && next.Spec.RenewTime != nil && !next.Spec.RenewTime.Equal(first.Spec.RenewTime.Time)
	}, "the Lease was not renewed after %v", first.Spec.RenewTime)
	if gap := next.Spec.RenewTime.Sub(first.Spec.RenewTime.Time); gap < 9*time.Second || gap > 15*time.Second {
		t.Errorf("renewed %v after the last renewal, want about 10 s", gap)
	}

	if code, _ := p.signal(t, syscall.SIGTERM); code != 0 {
		t.Errorf("fake-kubelet exited %d on SIGTERM:\n%s", code, p.output())
	}
	for _, obj := range []string{"node/" + name, "lease/" + name} {
		args := []string{"get", obj, "--ignore-not-found", "-o", "name"}
		if strings.HasPrefix(obj, "lease/") {
			args = append(args, "-n", "kube-node-lease")
		}
		if out := kubectl(t, args...); out != "" {
			t.Errorf("%s is still there after exit with --delete-node-on-exit", out)
		}
	}
}
