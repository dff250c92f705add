package e2e

import (
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// proc is a kinformer process started by a test: its output is collected, and the test
// can signal it and wait for its exit. It is killed when the test ends.
type proc struct {
	cmd  *exec.Cmd
	out  *lineWatcher
	exit chan error // closed after the exit status is sent
}

func startProc(t *testing.T, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(shared.bin, args...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, out: watchOutput(pr), exit: make(chan error, 1)}
	go func() {
		err := cmd.Wait()
		pw.Close()
		p.exit <- err
		close(p.exit)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.out.done
		if t.Failed() {
			t.Logf("output of kinformer %s:\n%s", args[0], p.output())
		}
	})
	return p
}

// signal sends sig and waits for the exit; it returns the exit code and how long the
// process took to exit.
func (p *proc) signal(t *testing.T, sig syscall.Signal) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.exit:
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return code, time.Since(start)
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not exit after %v", p.cmd.Args, sig)
		return 0, 0
	}
}

func (p *proc) output() string { return p.out.String() }

var metricsURL = regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/metrics`)

// startManager runs a controller manager with its plain HTTP endpoints on a free port
// (and no secure port: several managers run at once) and returns it with that address.
// Without leader election unless args ask for it: the tests run one manager each, and a
// Lease left held by the one before would make the next a standby.
func startManager(t *testing.T, args ...string) (*proc, string) {
	t.Helper()
	if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--leader-elect") }) {
		args = append([]string{"--leader-elect=false"}, args...)
	}
	p := startProc(t, append([]string{"controller-manager", "--kubeconfig", shared.cluster.Kubeconfig,
		"--metrics-addr", "127.0.0.1:0", "--secure-port", "0"}, args...)...)
	p.out.waitFor(t, "controller-manager: ")
	m := metricsURL.FindStringSubmatch(p.output())
	if m == nil {
		t.Fatalf("no metrics address in:\n%s", p.output())
	}
	return p, m[1]
}

// metric returns the value of the sample whose line starts with name (with labels).
func metric(t *testing.T, addr, name string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			return v
		}
	}
	return ""
}
