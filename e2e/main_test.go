// Package e2e runs kinformer against a real kube-apiserver and etcd started on loopback.
// `make test` builds them and sets KINFORMER_E2E=1, which makes missing binaries a
// failure; a bare `go test ./...` without them skips this package.
package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/kinformer/kinformer/internal/testrig/cluster"
)

// env is the cluster shared by the package's tests (one start costs ~15 s).
type env struct {
	cluster *cluster.Cluster
	bin     string // the kinformer binary, built for the CLI tests
}

var shared env // set once by TestMain before any test runs; read-only afterwards

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := cluster.Start(ctx, cluster.Options{
		// Compaction every 5 s and no watch cache for configmaps: a watch from an old
		// configmap revision then meets etcd's compaction and answers 410.
		EtcdCompactionInterval: 5 * time.Second,
		WatchCacheSizes:        "configmaps#0",
	})
	if errors.Is(err, cluster.ErrNoBinaries) && os.Getenv("KINFORMER_E2E") == "" {
		fmt.Println("e2e: skipped:", err)
		return 0
	}
	if err != nil {
		fmt.Println("e2e: starting the control plane:", err)
		return 1
	}
	defer c.Stop()
	shared.cluster = c
	dir, err := os.MkdirTemp("", "kinformer-e2e-bin-")
	if err != nil {
		fmt.Println("e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	shared.bin = filepath.Join(dir, "kinformer")
	if out, err := exec.Command("go", "build", "-o", shared.bin, "../cmd/kinformer").CombinedOutput(); err != nil {
		fmt.Printf("e2e: building kinformer: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}
