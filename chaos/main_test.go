package chaos

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/kinformer/kinformer/internal/testrig/cluster"
)

var (
	faultsWanted = flag.Int("chaos.faults", 60, "faults to inject")
	timeBudget   = flag.Duration("chaos.duration", 4*time.Minute, "stop injecting faults after this long")
	restartEvery = flag.Int("chaos.restart-every", 40, "one fault in this many is a kube-apiserver restart")
	quietEvery   = flag.Int("chaos.quiet-every", 10, "faults between two quiet points")
	seed         = flag.Int64("chaos.seed", 1, "seed of the fault script")
	reportFile   = flag.String("chaos.report", "", "also write the report to this file")
	leakFaults   = flag.Int("chaos.leak-faults", 16, "faults in each of TestLeak's two bursts")
	// recoveryRounds is how many times TestRecoverySpeed repeats each fault.
	recoveryRounds = flag.Int("chaos.recovery-rounds", 3, "rounds of each recovery scenario")
)

// control is the control plane of this package's tests (its own: restarting it would
// disturb any other test using it).
var control *cluster.Cluster

func TestMain(m *testing.M) {
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	c, err := cluster.Start(ctx, cluster.Options{
		// Compaction every 5 s and no watch cache for configmaps: a configmap watch down
		// for longer meets a compacted revision (410), and so does a slow paged list.
		EtcdCompactionInterval: 5 * time.Second,
		WatchCacheSizes:        "configmaps#0",
	})
	cancel()
	if errors.Is(err, cluster.ErrNoBinaries) && os.Getenv("KINFORMER_E2E") == "" {
		fmt.Println("chaos: skipped:", err)
		os.Exit(0)
	}
	if err != nil {
		fmt.Println("chaos: starting the control plane:", err)
		os.Exit(1)
	}
	control = c
	code := m.Run()
	c.Stop()
	os.Exit(code)
}
