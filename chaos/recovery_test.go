package chaos

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
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
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// TestRecoverySpeed times how long a watch stays down after a fault, for kinformer and
// for client-go's informer side by side: two processes watching one configmap through
// the same proxy, the same fault script, and a write made just after each fault; the
// time from that write to the line each process prints is the downtime it saw.
func TestRecoverySpeed(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const ns = "recovery"
	dir := t.TempDir()
	kinformerBin, runnerBin := filepath.Join(dir, "kinformer"), filepath.Join(dir, "watchrunner")
	build := func(dir, out, pkg string) {
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", pkg, err, b)
		}
	}
	build("..", kinformerBin, "./cmd/kinformer")
	build("../bench/clientgo", runnerBin, "./cmd/watchrunner")

	proxy, err := NewProxy(control.URL, control.CAData)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	kc := filepath.Join(dir, "proxy.kubeconfig")
	if err := os.WriteFile(kc, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: chaos
clusters: [{name: chaos, cluster: {server: %q, certificate-authority-data: %s}}]
users: [{name: admin, user: {token: %q}}]
contexts: [{name: chaos, context: {cluster: chaos, user: admin, namespace: %s}}]
`, proxy.URL(), base64.StdEncoding.EncodeToString(proxy.CAData()), control.Token, ns)), 0o600); err != nil {
		t.Fatal(err)
	}
	direct, err := listwatch.New(&listwatch.Config{Host: control.URL, BearerToken: control.Token, QPS: -1,
		TLS: listwatch.TLSConfig{CAData: control.CAData}})
	if err != nil {
		t.Fatal(err)
	}
	defer direct.CloseIdleConnections()
	nsInfo, _ := direct.Discover(ctx, "namespaces")
	if _, err := listwatch.For[*object.Raw](direct, nsInfo, "").Create(ctx, &object.Raw{TypeMeta: object.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: object.ObjectMeta{Name: ns}}); err != nil && !object.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	cmInfo, _ := direct.Discover(ctx, "configmaps")
	cms := listwatch.For[*object.Raw](direct, cmInfo, ns)
	if _, err := cms.Create(ctx, &object.Raw{TypeMeta: object.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: object.ObjectMeta{Name: "probe"}}); err != nil && !object.IsAlreadyExists(err) {
		t.Fatal(err)
	}

	engines := []*lineProc{
		startLines(t, "kinformer", kinformerBin, "watch", "configmaps", "-n", ns, "--kubeconfig", kc),
		startLines(t, "client-go", runnerBin, "-n", ns, "-kubeconfig", kc),
	}
	for _, e := range engines {
		e.waitFor(t, "ADD     "+ns+"/probe", 60*time.Second)
	}
	write := func(i int) string {
		patch := fmt.Sprintf(`{"data":{"round":"%d"}}`, i)
		o, err := cms.Patch(ctx, "probe", listwatch.MergePatch, []byte(patch), "")
		if err != nil {
			t.Fatal(err)
		}
		return o.ResourceVersion
	}
	// cut is every client connection the round's fault reset: the write waits until the
	// proxy has dropped them all, so that it comes once the fault has landed.
	var cut []*faultConn
	resetAll := func() {
		cut = append(cut, openConns(proxy)...)
		proxy.ResetAll()
	}
	scenarios := []struct {
		name  string
		fault func()
	}{
		{"one reset after 6 s of healthy streaming", func() { time.Sleep(6 * time.Second); resetAll() }},
		{"three resets 300 ms apart", func() {
			for range 3 {
				resetAll()
				time.Sleep(300 * time.Millisecond)
			}
		}},
		{"one reset after a 429 answered the previous watch", func() {
			time.Sleep(6 * time.Second)
			proxy.FailEach(429)
			resetAll()
		}},
	}
	var report strings.Builder
	fmt.Fprintf(&report, "recovery: downtime from a write right after the fault to the event printed (%d rounds each)\n", *recoveryRounds)
	fmt.Fprintf(&report, "  %-48s %-22s %-22s\n", "fault", "kinformer p50 / max", "client-go p50 / max")
	round := 0
	for _, sc := range scenarios {
		downtimes := make([][]time.Duration, len(engines))
		for range *recoveryRounds {
			round++
			cut = nil
			sc.fault()
			if len(cut) == 0 {
				t.Fatalf("round %d: the fault reset no connection: the engines were not connected", round)
			}
			testwait.Every(time.Millisecond).Eventually(t, 10*time.Second, func() bool { return dropped(proxy, cut) },
				"round %d: the proxy still holds connections the fault reset", round)
			written := time.Now()
			rv := write(round)
			for i, e := range engines {
				at := e.waitFor(t, fmt.Sprintf("UPDATE  %s/probe rv=%s", ns, rv), 60*time.Second)
				downtimes[i] = append(downtimes[i], at.Sub(written))
			}
			proxy.FailEach(0)
		}
		cells := make([]string, len(engines))
		for i := range engines {
			d := slices.Clone(downtimes[i])
			slices.Sort(d)
			cells[i] = fmt.Sprintf("%s / %s", d[len(d)/2].Round(time.Millisecond), d[len(d)-1].Round(time.Millisecond))
		}
		fmt.Fprintf(&report, "  %-48s %-22s %-22s\n", sc.name, cells[0], cells[1])
	}
	fmt.Println(report.String())
	if *reportFile != "" {
		f, err := os.OpenFile(*reportFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			_, _ = f.WriteString(report.String())
			f.Close()
		}
	}
}

// openConns returns p's client connections now.
func openConns(p *Proxy) []*faultConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	conns := make([]*faultConn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	return conns
}

// dropped reports whether p has closed and forgotten every one of conns.
func dropped(p *Proxy, conns []*faultConn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		if _, ok := p.conns[c]; ok {
			return false
		}
	}
	return true
}

// lineProc is a process whose output lines are timestamped as they arrive.
type lineProc struct {
	name  string
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []timedLine
	seen  int // lines already matched: each wait looks only at later lines
	done  chan struct{}
}

type timedLine struct {
	at   time.Time
	text string
}

func startLines(t *testing.T, name, bin string, args ...string) *lineProc {
	t.Helper()
	p := &lineProc{name: name, cmd: exec.Command(bin, args...), done: make(chan struct{})}
	pr, pw := io.Pipe()
	p.cmd.Stdout, p.cmd.Stderr = pw, pw
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, timedLine{at: time.Now(), text: sc.Text()})
			p.mu.Unlock()
		}
	}()
	go func() { _ = p.cmd.Wait(); pw.Close() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(os.Interrupt)
		<-p.done
	})
	return p
}

// waitFor returns when the first line after the last match that starts with prefix
// arrived.
func (p *lineProc) waitFor(t *testing.T, prefix string, d time.Duration) time.Time {
	t.Helper()
	var at time.Time
	testwait.Every(2*time.Millisecond).Eventually(t, d, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		for i := p.seen; i < len(p.lines); i++ {
			if strings.HasPrefix(p.lines[i].text, prefix) {
				p.seen = i + 1
				at = p.lines[i].at
				return true
			}
		}
		return false
	}, "%s printed no %q:\n%s", p.name, prefix, testwait.Lazy(func() any {
		p.mu.Lock()
		defer p.mu.Unlock()
		var all []string
		for _, l := range p.lines {
			all = append(all, l.text)
		}
		return strings.Join(all, "\n")
	}))
	return at
}
