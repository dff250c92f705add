package e2e

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/kinformer/kinformer/internal/testrig/testwait"
)

// TestSecureMetricsDelegateToTheAPIServer: `kinformer controller-manager --secure-port`
// serves /metrics over HTTPS only to callers the real apiserver authenticates
// (TokenReview) and allows get on the non-resource URL /metrics (SubjectAccessReview),
// as kube-controller-manager does; /healthz answers without a token.
func TestSecureMetricsDelegateToTheAPIServer(t *testing.T) {
	ns := namespace(t)
	// A ServiceAccount bound to a ClusterRole that may get /metrics, and one that may not.
	role := "kinformer-e2e-metrics-reader-" + ns
	kubectl(t, "create", "clusterrole", role, "--verb=get", "--non-resource-url=/metrics")
	kubectl(t, "create", "clusterrolebinding", role, "--clusterrole="+role, "--serviceaccount="+ns+":scraper")
	t.Cleanup(func() {
		kubectl(t, "delete", "clusterrolebinding", role)
		kubectl(t, "delete", "clusterrole", role)
	})
	kubectl(t, "-n", ns, "create", "serviceaccount", "scraper")
	kubectl(t, "-n", ns, "create", "serviceaccount", "stranger")
	scraper := strings.TrimSpace(kubectl(t, "-n", ns, "create", "token", "scraper"))
	stranger := strings.TrimSpace(kubectl(t, "-n", ns, "create", "token", "stranger"))

	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := free.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	free.Close()
	p := startProc(t, "controller-manager", "--kubeconfig", shared.cluster.Kubeconfig, "--controllers", "replicaset",
		"--leader-elect=false", "--bind-address", "127.0.0.1", "--secure-port", port)
	p.out.waitFor(t, "controller-manager: ")
	if want := "https://" + addr + "/metrics"; !strings.Contains(p.output(), want) {
		t.Fatalf("no %s in:\n%s", want, p.output())
	}

	// The certificate is self-signed: scrapers given no CA skip verification, as they do
	// for kube-controller-manager's.
	get := func(path, token string) (int, string) { return getSecure(t, addr, path, token) }

	for _, tc := range []struct {
		name, path, token string
		code              int
		body              string
	}{
		{"healthz without a token", "/healthz", "", 200, "ok"},
		{"metrics without a token", "/metrics", "", 401, "Unauthorized"},
		{"metrics with a made-up token", "/metrics", "made-up", 401, "Unauthorized"},
		{"metrics for a ServiceAccount without get on /metrics", "/metrics", stranger, 403,
			`forbidden: User "system:serviceaccount:` + ns + `:stranger" cannot get path "/metrics"`},
		{"metrics for the admin (system:masters)", "/metrics", shared.cluster.Token, 200, `workqueue_depth{name="replicaset"}`},
	} {
		if code, body := get(tc.path, tc.token); code != tc.code || !strings.Contains(body, tc.body) {
			t.Errorf("%s: %d %q, want %d with %q", tc.name, code, body, tc.code, tc.body)
		}
	}
	// The binding reaches the apiserver's authorizer in a moment; until then the
	// scraper is refused, and each refusal is kept 10 s: poll past that.
	var code int
	var body string
	clusterPoll.Eventually(t, 30*time.Second, func() bool {
		code, body = get("/metrics", scraper)
		return code == 200
	}, "the bound ServiceAccount: %v", testwait.Lazy(func() any { return fmt.Sprintf("%d %q", code, body) }))
	if !strings.Contains(body, `workqueue_depth{name="replicaset"}`) {
		t.Errorf("the bound ServiceAccount got no workqueue_depth:\n%.500s", body)
	}
	for who, token := range map[string]string{"scraper": scraper, "stranger": stranger} {
		if strings.Contains(p.output(), token) {
			t.Errorf("the manager's output shows the %s's token", who)
		}
	}
}
