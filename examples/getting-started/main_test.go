package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// The README's "Getting started" program is this one, from its package clause on: what
// a reader copies compiles, and runs (the test below).
func TestREADMEShowsThisProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Getting started\n")
	if !ok {
		t.Fatal("README.md has no \"## Getting started\" section")
	}
	_, block, ok := strings.Cut(section, "```go\n")
	block, _, closed := strings.Cut(block, "```\n")
	if !ok || !closed {
		t.Fatal("the Getting started section has no ```go block")
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	program := string(src[strings.Index(string(src), "package main"):])
	if d := cmp.Diff(program, block); d != "" {
		t.Errorf("README.md's program differs from examples/getting-started/main.go (-main.go +README):\n%s", d)
	}
}

// The program, built and run as a user runs it, with KUBECONFIG naming a simulated
// apiserver that holds two pods: it prints both, then that it caches two, and exits on
// an interrupt.
func TestRunsAgainstAnApiserver(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the program")
	}
	sim := apisim.New(apisim.Options{})
	t.Cleanup(func() { sim.Close() })
	url, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := sim.WriteKubeconfig(kubeconfig, url); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client, err := listwatch.New(&listwatch.Config{Host: url, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer client.CloseIdleConnections()
	res, err := client.Discover(ctx, "pods")
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"default", "team-a"} {
		if _, err := listwatch.For[*object.Pod](client, res, ns).Create(ctx, &object.Pod{ObjectMeta: object.ObjectMeta{Name: "web"}}); err != nil {
			t.Fatal(err)
		}
	}

	bin := filepath.Join(dir, "getting-started")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "HOME="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The handler runs on its own goroutine, so the count may come before a pod's line
	// (WaitForSync is about the cache, not the handler): interrupt once all three came.
	want := []string{"2 pods cached", "pod default/web Pending", "pod team-a/web Pending"}
	var lines []string
	for scan := bufio.NewScanner(stdout); scan.Scan(); { // until the program exits
		lines = append(lines, scan.Text())
		if len(lines) == len(want) {
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the program ended with %v after printing %q; stderr:\n%s", err, lines, stderr.String())
	}
	slices.Sort(lines)
	if d := cmp.Diff(want, lines); d != "" {
		t.Errorf("printed (-want +got):\n%s\nstderr:\n%s", d, stderr.String())
	}
}
