package e2e

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/internal/testrig/cluster"
	"github.com/kinformer/kinformer/internal/testrig/simtest"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/object"
)

// serviceAccountKubeconfig writes a kubeconfig for the shared cluster that authenticates
// with token, in namespace ns.
func serviceAccountKubeconfig(t *testing.T, ns, token string) string {
	t.Helper()
	return tokenKubeconfigFor(t, shared.cluster, ns, token)
}

// tokenKubeconfigFor writes a kubeconfig for cluster c that authenticates with token, in
// namespace ns.
func tokenKubeconfigFor(t *testing.T, c *cluster.Cluster, ns, token string) string {
	t.Helper()
	doc := fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: sa
clusters:
- name: e2e
  cluster: {server: %q, certificate-authority-data: %s}
users:
- name: sa
  user: {token: %q}
contexts:
- name: sa
  context: {cluster: e2e, user: sa, namespace: %s}
`, c.URL, base64.StdEncoding.EncodeToString(c.CAData), token, ns)
	f, err := os.CreateTemp(t.TempDir(), "kubeconfig-")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(doc); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// TestServiceAccountScopedToOneNamespace: a ServiceAccount allowed only to list and
// watch pods in one namespace gets a working informer there, and a cluster-wide
// informer that says "forbidden" at once instead of waiting in silence; `kinformer
// watch pods -A` exits with the apiserver's 403 message. Its token shows nowhere.
func TestServiceAccountScopedToOneNamespace(t *testing.T) {
	ns := namespace(t)
	const sa = "pod-reader"
	kubectl(t, "-n", ns, "create", "serviceaccount", sa)
	kubectl(t, "-n", ns, "create", "role", sa, "--verb=list,watch", "--resource=pods")
	kubectl(t, "-n", ns, "create", "rolebinding", sa, "--role="+sa, "--serviceaccount="+ns+":"+sa)
	kubectl(t, "-n", ns, "run", "web", "--image=nginx", "--restart=Never")
	token := strings.TrimSpace(kubectl(t, "-n", ns, "create", "token", sa))
	kc := serviceAccountKubeconfig(t, ns, token)
	noToken := func(what, text string) {
		t.Helper()
		if strings.Contains(text, token) {
			t.Errorf("%s shows the service account's token:\n%s", what, text)
		}
	}

	c := simtest.KubeconfigClient(t, kc)
	ctx := testwait.Context(t, time.Minute)
	f := informer.NewFactory(c, informer.FactoryOptions{})
	inNS, err := informer.For[*object.Raw](ctx, f, "pods", informer.Selectors{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	everywhere, err := informer.For[*object.Raw](ctx, f, "pods", informer.Selectors{})
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	f.Start(ctx)
	defer f.Shutdown()

	// Cluster-wide: forbidden, reported in the status as soon as the list is refused.
	var st informer.SyncStatus
	testwait.Every(time.Millisecond).Eventually(t, 10*time.Second, func() bool {
		st = everywhere.Status()
		return object.IsForbidden(st.LastError)
	}, "no forbidden status: %+v", testwait.Lazy(func() any { return st }))
	forbiddenAfter := time.Since(started)
	t.Logf("cluster-wide informer: forbidden after %v: %v", forbiddenAfter, st.LastError)
	if forbiddenAfter > time.Second {
		t.Errorf("forbidden reported after %v, want within a second", forbiddenAfter)
	}
	want := fmt.Sprintf(`User "system:serviceaccount:%s:%s" cannot list resource "pods"`, ns, sa)
	if !strings.Contains(st.LastError.Error(), want) || !strings.Contains(st.LastError.Error(), "cluster scope") {
		t.Errorf("status error %q, want the apiserver's message %q ... at the cluster scope", st.LastError, want)
	}
	noToken("the sync status", fmt.Sprintf("%+v", st))
	wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	err = informer.WaitForSync(wctx, everywhere)
	cancel()
	if !object.IsForbidden(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitForSync of the cluster-wide informer: %v, want a timeout that says forbidden", err)
	}
	noToken("WaitForSync's error", fmt.Sprint(err))

	// In its namespace: synced, with the pod.
	if err := informer.WaitForSync(testwait.Context(t, 30*time.Second), inNS); err != nil {
		t.Fatalf("namespaced informer: %v", err)
	}
	if _, ok := inNS.Lister().Get(ns + "/web"); !ok {
		t.Errorf("namespaced informer: no %s/web in its cache", ns)
	}

	// The command line: in the namespace it watches; across all of them it exits at once.
	startCLI(t, "watch", "pods", "--kubeconfig", kc).waitFor(t, "ADD     "+ns+"/web")
	cliStarted := time.Now()
	cmd := exec.CommandContext(testwait.Context(t, 30*time.Second), shared.bin, "watch", "pods", "-A", "--kubeconfig", kc)
	out, err := cmd.CombinedOutput()
	exitedAfter := time.Since(cliStarted)
	t.Logf("kinformer watch pods -A: exit %v after %v:\n%s", err, exitedAfter, out)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "(403") || !strings.Contains(string(out), want) {
		t.Errorf("kinformer watch pods -A: %v, want exit 1 with the 403 message %q", err, want)
	}
	if exitedAfter > 2*time.Second {
		t.Errorf("kinformer watch pods -A took %v to give up, want about a second", exitedAfter)
	}
	noToken("kinformer watch", string(out))
}
