package e2e

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestDeployManifests: what deploy/ holds passes the real apiserver's server-side dry run,
// and its RBAC is all the processes need. A controller manager running as the manifests'
// ServiceAccount (a member of a shard group, as deploy/ runs it), and a fake kubelet as
// its own, take a Deployment through a rollout, a
// scale and an image change, and serve /metrics through the reviews they may create,
// with no request refused.
func TestDeployManifests(t *testing.T) {
	for _, dir := range []string{"../deploy", "../deploy/fake-kubelet"} {
		if out := kubectl(t, "apply", "--dry-run=server", "-f", dir); !strings.Contains(out, "(server dry run)") {
			t.Fatalf("kubectl apply --dry-run=server -f %s:\n%s", dir, out)
		}
	}
	// The roles for real (not the Deployments: no image is built here).
	rbac := []string{"../deploy/10-controller-manager-rbac.yaml", "../deploy/fake-kubelet/rbac.yaml"}
	for _, f := range rbac {
		kubectl(t, "apply", "-f", f)
	}
	t.Cleanup(func() {
		for _, f := range rbac {
			kubectl(t, "delete", "-f", f)
		}
	})
	managerConfig := tokenKubeconfig(t, "kinformer-controller-manager")
	kubeletConfig := tokenKubeconfig(t, "kinformer-fake-kubelet")

	ns := namespace(t)
	kubelet := startProc(t, "fake-kubelet", "--kubeconfig", kubeletConfig, "--node-name", "deploy-"+ns,
		"--ready-after", "300ms", "--delete-node-on-exit")
	port := freePort(t)
	// A member of a shard group, as deploy/ runs it: its Lease in kube-system needs the Role.
	manager := startProc(t, "controller-manager", "--kubeconfig", managerConfig, "-v",
		"--bind-address", "127.0.0.1", "--secure-port", port,
		"--shard-group", "deploy-e2e", "--shard-id", "m1", "--shard-namespace", "kube-system")
	manager.out.waitFor(t, "controller-manager: ")

	rollout := func() {
		t.Helper()
		if out := kubectl(t, "rollout", "status", "-n", ns, "deployment/web", "--timeout=90s"); !strings.Contains(out, "successfully rolled out") {
			t.Fatalf("rollout status: %s", out)
		}
	}
	kubectl(t, "create", "deployment", "web", "-n", ns, "--image=nginx:1.27", "--replicas=3")
	rollout()
	kubectl(t, "scale", "-n", ns, "deployment/web", "--replicas=5")
	rollout()
	kubectl(t, "set", "image", "-n", ns, "deployment/web", "nginx=nginx:1.28")
	rollout()

	// /metrics for the admin: the manager asks the apiserver with a TokenReview and a
	// SubjectAccessReview, as its ServiceAccount.
	if code, body := getSecure(t, "127.0.0.1:"+port, "/metrics", shared.cluster.Token); code != 200 || !strings.Contains(body, "workqueue_depth") {
		t.Errorf("/metrics for the admin through the ServiceAccount's reviews: %d %.300s", code, body)
	}
	for name, p := range map[string]*proc{"controller-manager": manager, "fake-kubelet": kubelet} {
		if out := p.output(); strings.Contains(out, "forbidden") || strings.Contains(out, " 403") {
			t.Errorf("%s was refused a request:\n%s", name, out)
		}
	}
}

// tokenKubeconfig writes a kubeconfig for the cluster that authenticates with a fresh
// token of the ServiceAccount kube-system/name.
func tokenKubeconfig(t *testing.T, name string) string {
	t.Helper()
	token := strings.TrimSpace(kubectl(t, "-n", "kube-system", "create", "token", name, "--duration=1h"))
	return serviceAccountKubeconfig(t, "kube-system", token)
}

// freePort returns a loopback port nothing listens on (for a process to bind).
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// getSecure GETs path from a manager's secure port (its certificate is self-signed),
// with token as the bearer ("" for none).
func getSecure(t *testing.T, addr, path, token string) (int, string) {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequest("GET", "https://"+addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Transport: tr, Timeout: 15 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
