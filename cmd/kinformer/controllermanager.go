package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/kinformer/kinformer/controllers/manager"
	"github.com/kinformer/kinformer/listwatch"
)

const controllerManagerUsage = "usage: kinformer controller-manager --kubeconfig FILE [--controllers " +
	"replicaset,deployment] [--workers 5] [--metrics-addr 127.0.0.1:10257] [--leader-elect] " +
	"[--leader-elect-namespace kube-system] [--leader-elect-id NAME] [--lease-duration 15s] " +
	"[--renew-deadline 10s] [--retry-period 2s] [-v]"

// runControllerManager runs the controllers until interrupted. SIGTERM hands leadership
// over and exits 0; a lost lease exits 1, as kube-controller-manager does.
func runControllerManager(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("controller-manager", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	kubeContext := fs.String("context", "", "kubeconfig context")
	names := fs.String("controllers", strings.Join(manager.Known(), ","), "controllers to run")
	workers := fs.Int("workers", 5, "workers per controller")
	metricsAddr := fs.String("metrics-addr", "127.0.0.1:10257", "address of /metrics, /healthz and /readyz (\"\" for none)")
	elect := fs.Bool("leader-elect", false, "contend for the "+manager.LeaseName+" Lease before acting")
	var le manager.LeaderElection
	fs.StringVar(&le.Namespace, "leader-elect-namespace", "kube-system", "namespace of the Lease")
	fs.StringVar(&le.Identity, "leader-elect-id", "", "identity in the Lease (default: hostname and a random suffix)")
	fs.DurationVar(&le.LeaseDuration, "lease-duration", 15*time.Second, "how long a standby waits before taking an unrenewed lease")
	fs.DurationVar(&le.RenewDeadline, "renew-deadline", 10*time.Second, "how long a leader keeps acting without renewing")
	fs.DurationVar(&le.RetryPeriod, "retry-period", 2*time.Second, "time between attempts to acquire or renew")
	verbose := fs.Bool("v", false, "log what the controllers do (to stderr)")
	if pos, err := parseInterspersed(fs, args); err != nil {
		return err
	} else if len(pos) != 0 {
		return usageError{controllerManagerUsage}
	}
	cfg, err := listwatch.LoadKubeconfig(listwatch.LoadOptions{Path: *kubeconfig, Context: *kubeContext})
	if err != nil {
		return err
	}
	c, err := listwatch.New(cfg)
	if err != nil {
		return err
	}
	defer c.CloseIdleConnections()
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	m, err := manager.New(ctx, manager.Options{Client: c, Controllers: splitList(*names), Workers: *workers,
		MetricsAddr: *metricsAddr, LeaderElect: *elect, LeaderElection: le, Logger: logger})
	if err != nil {
		return explain(err, cfg.Host)
	}
	fmt.Fprintf(stdout, "controller-manager: controllers %s", strings.Join(splitList(*names), ","))
	if addr := m.Addr(); addr != "" {
		fmt.Fprintf(stdout, "; http://%s/metrics", addr)
	}
	if *elect {
		fmt.Fprintf(stdout, "; leader election as %s", m.Identity())
	}
	fmt.Fprintln(stdout)
	return m.Run(ctx)
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
