package e2e

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kinformer/kinformer/internal/testrig/testwait"
)

// lineWatcher collects the lines a process prints.
type lineWatcher struct {
	mu    sync.Mutex
	lines []string
	done  chan struct{}
}

func watchOutput(r io.Reader) *lineWatcher {
	lw := &lineWatcher{done: make(chan struct{})}
	go func() {
		defer close(lw.done)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lw.mu.Lock()
			lw.lines = append(lw.lines, sc.Text())
			lw.mu.Unlock()
		}
	}()
	return lw
}

// waitFor waits for a line that starts with prefix.
func (lw *lineWatcher) waitFor(t *testing.T, prefix string) {
	t.Helper()
	testwait.Every(50*time.Millisecond).Eventually(t, 30*time.Second, func() bool {
		lw.mu.Lock()
		defer lw.mu.Unlock()
		return slices.ContainsFunc(lw.lines, func(l string) bool { return strings.HasPrefix(l, prefix) })
	}, "no line starting %q in:\n%s", prefix, lw)
}

// String returns the lines printed so far.
func (lw *lineWatcher) String() string {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return strings.Join(lw.lines, "\n")
}

// startCLI runs the kinformer binary and stops it when the test ends.
func startCLI(t *testing.T, args ...string) *lineWatcher {
	t.Helper()
	cmd := exec.Command(shared.bin, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lw := watchOutput(out)
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		<-lw.done
		_ = cmd.Wait()
	})
	return lw
}

func TestCLIWatchAgainstRealAPIServer(t *testing.T) {
	ns := namespace(t)
	kubectl(t, "-n", ns, "run", "before", "--image=nginx", "--restart=Never")
	lw := startCLI(t, "watch", "pods", "-n", ns, "--kubeconfig", shared.cluster.Kubeconfig)
	lw.waitFor(t, "ADD     "+ns+"/before")
	kubectl(t, "-n", ns, "run", "after", "--image=nginx", "--restart=Never")
	lw.waitFor(t, "ADD     "+ns+"/after")
	kubectl(t, "-n", ns, "label", "pod", "after", "x=y")
	lw.waitFor(t, "UPDATE  "+ns+"/after")
	kubectl(t, "-n", ns, "delete", "pod", "after", "--grace-period=0", "--force")
	lw.waitFor(t, "DELETE  "+ns+"/after")
}

func TestCLIWatchAgainstSimulator(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "sim.kubeconfig")
	sim := startCLI(t, "sim", "--addr", "127.0.0.1:0", "--kubeconfig-out", kc)
	sim.waitFor(t, "kubeconfig written")
	lw := startCLI(t, "watch", "pods", "--kubeconfig", kc)
	// kubectl is a real client of the simulator too.
	run := func(args ...string) {
		out, err := exec.Command("kubectl", append([]string{"--kubeconfig", kc}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %v: %v\n%s", args, err, out)
		}
	}
	createPod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1"},"spec":{"containers":[{"name":"c","image":"i"}]}}`
	// The simulator serves no OpenAPI document, so kubectl's client-side validation is off.
	cmd := exec.Command("kubectl", "--kubeconfig", kc, "create", "--validate=false", "-f", "-")
	cmd.Stdin = strings.NewReader(createPod)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl create pod: %v\n%s", err, out)
	}
	lw.waitFor(t, "ADD     default/p1")
	run("delete", "pod", "p1")
	lw.waitFor(t, "DELETE  default/p1")
}
