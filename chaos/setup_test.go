package chaos

import (
	"os/exec"
	"strings"
	"testing"
)

// prepare creates namespace ns and the widgets CRD the engine watches (kept if there).
func prepare(t *testing.T, ns string) {
	t.Helper()
	kubectl := func(stdin string, args ...string) {
		cmd := exec.Command("kubectl", append([]string{"--kubeconfig", control.Kubeconfig}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kubectl %v: %v\n%s", args, err, out)
		}
	}
	kubectl("", "create", "namespace", ns)
	kubectl(widgetCRD, "apply", "-f", "-")
	kubectl("", "wait", "--for=condition=Established", "crd/widgets.chaos.kinformer.io", "--timeout=60s")
}
