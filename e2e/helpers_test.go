package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kinformer/kinformer/internal/testrig/simtest"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// clusterPoll is how the tests wait on the cluster: every 100 ms, not to load its
// apiserver (or the client's rate limiter) with the checks.
var clusterPoll = testwait.Every(100 * time.Millisecond)

// client returns a listwatch client configured from the cluster's kubeconfig, the way a
// user's tool would be.
func client(t *testing.T) *listwatch.Client {
	t.Helper()
	return simtest.KubeconfigClient(t, shared.cluster.Kubeconfig)
}

func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	return kubectlIn(t, "", args...)
}

func kubectlIn(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", shared.cluster.Kubeconfig}, args...)...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

var nsSeq atomic.Int64

// namespace creates a fresh namespace for one test and deletes it afterwards.
func namespace(t *testing.T) string {
	t.Helper()
	ns := fmt.Sprintf("e2e-%d-%d", time.Now().UnixNano()%100000, nsSeq.Add(1))
	kubectl(t, "create", "namespace", ns)
	t.Cleanup(func() {
		_ = exec.Command("kubectl", "--kubeconfig", shared.cluster.Kubeconfig, "delete", "namespace", ns, "--wait=false").Run()
	})
	return ns
}

func resource[T object.Object](t *testing.T, c *listwatch.Client, name, ns string) *listwatch.Resource[T] {
	t.Helper()
	info, err := c.Discover(testwait.Context(t, 10*time.Second), name)
	if err != nil {
		t.Fatal(err)
	}
	return listwatch.For[T](c, info, ns)
}

// nextEvent reads events until one that is not a bookmark.
func nextEvent[T any](t *testing.T, w listwatch.Stream[T]) listwatch.Event[T] {
	t.Helper()
	for {
		ev, err := w.Next()
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		if ev.Type != listwatch.Bookmark {
			return ev
		}
	}
}
