package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/kinformer/kinformer/bench/measure"
)

// Binaries are the programs the harness runs, built once per harness run.
type Binaries struct {
	StreamServer, Ceiling, Kinformer, ClientGo string
	// PBPrep writes the stream server's objects in protobuf for its -protobuf-objects
	// (bench/clientgo/cmd/pbprep).
	PBPrep string
	// Before, if set, is kinformer-runner built from an earlier commit (BuildBefore): the
	// engine Before runs it beside kinformer, so that a change is held against the code
	// it changes, side by side in one run.
	Before string
}

// BuildBefore builds kinformer-runner as it was at the commit ref of repo into dir (from
// `git archive`, so the checkout is not touched) and returns its path.
func BuildBefore(ctx context.Context, repo, ref, dir string) (string, error) {
	src := filepath.Join(dir, "before-src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	archive := exec.CommandContext(ctx, "sh", "-c", `git -C "$1" archive --format=tar "$2" | tar -x -C "$3"`, "sh", repo, ref, src)
	if out, err := archive.CombinedOutput(); err != nil {
		return "", fmt.Errorf("extracting %s: %v\n%s", ref, err, out)
	}
	bin := filepath.Join(dir, "kinformer-runner-before")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./bench/cmd/kinformer-runner")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building kinformer-runner at %s: %v\n%s", ref, err, out)
	}
	return bin, os.RemoveAll(src)
}

// Build compiles the stream server, its ceiling client, both runners and pbprep into dir.
// The client-go runner and pbprep are built inside their own module (bench/clientgo), so
// the engine's go.mod never names k8s.io.
func Build(ctx context.Context, repo, dir string) (Binaries, error) {
	b := Binaries{
		StreamServer: filepath.Join(dir, "streamserver"),
		Ceiling:      filepath.Join(dir, "ceiling"),
		Kinformer:    filepath.Join(dir, "kinformer-runner"),
		ClientGo:     filepath.Join(dir, "clientgo-runner"),
		PBPrep:       filepath.Join(dir, "pbprep"),
	}
	for _, job := range []struct{ module, pkg, out string }{
		{repo, "./bench/cmd/streamserver", b.StreamServer},
		{repo, "./bench/cmd/ceiling", b.Ceiling},
		{repo, "./bench/cmd/kinformer-runner", b.Kinformer},
		{filepath.Join(repo, "bench", "clientgo"), "./cmd/clientgo-runner", b.ClientGo},
		{filepath.Join(repo, "bench", "clientgo"), "./cmd/pbprep", b.PBPrep},
	} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", job.out, job.pkg)
		cmd.Dir = job.module
		if out, err := cmd.CombinedOutput(); err != nil {
			return b, fmt.Errorf("building %s: %v\n%s", job.pkg, err, out)
		}
	}
	return b, nil
}

// server is a running stream server process.
type server struct {
	cmd *exec.Cmd
	URL string
	CA  string // PEM file of its certificate, with TLS
}

// startServer runs the stream server with args and waits for its LISTENING line.
func startServer(ctx context.Context, bin, tmp string, tls bool, args ...string) (*server, error) {
	s := &server{}
	if tls {
		s.CA = filepath.Join(tmp, "ca.pem")
		args = append(args, "-tls", "-ca-out", s.CA)
	}
	s.cmd = exec.CommandContext(ctx, bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	s.cmd.Stderr = os.Stderr
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	line := make(chan string, 1)
	go func() {
		r := bufio.NewReader(out)
		l, _ := r.ReadString('\n')
		line <- l
		_, _ = io.Copy(io.Discard, r)
	}()
	select {
	case l := <-line:
		if url, ok := strings.CutPrefix(strings.TrimSpace(l), "LISTENING "); ok {
			s.URL = url
			return s, nil
		}
		s.stop()
		return nil, fmt.Errorf("stream server said %q, not LISTENING", l)
	case <-time.After(2 * time.Minute): // pre-encoding 400 MB of secrets takes a while
		s.stop()
		return nil, fmt.Errorf("stream server did not start")
	}
}

func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// runJSON runs bin with args and decodes the last line of its stdout into v.
func runJSON(ctx context.Context, timeout time.Duration, v any, bin string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	last := lines[len(lines)-1]
	if err := json.Unmarshal([]byte(last), v); err != nil {
		return fmt.Errorf("%s %s: %v; no result line (%v); stderr:\n%s", filepath.Base(bin), strings.Join(args, " "), runErr, err, tail(stderr.String()))
	}
	if runErr != nil {
		if r, ok := v.(*measure.Result); ok && r.Error != "" {
			return fmt.Errorf("%s: %s", filepath.Base(bin), r.Error)
		}
		return fmt.Errorf("%s %s: %v; stderr:\n%s", filepath.Base(bin), strings.Join(args, " "), runErr, tail(stderr.String()))
	}
	return nil
}

// runLines runs bin and returns its stdout's lines.
func runLines(ctx context.Context, timeout time.Duration, bin string, args ...string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, tail(stderr.String()))
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n"), nil
}

func tail(s string) string {
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}
