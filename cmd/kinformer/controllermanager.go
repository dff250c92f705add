package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/kinformer/kinformer/controllers/manager"
	"github.com/kinformer/kinformer/listwatch"
)

const controllerManagerUsage = "usage: kinformer controller-manager --kubeconfig FILE [--controllers " +
	"replicaset,deployment] [--workers 5] [--resync-period 5m] [--metrics-addr 127.0.0.1:10257] [--leader-elect] " +
	"[--leader-elect-namespace kube-system] [--leader-elect-id NAME] [--lease-duration 15s] " +
	"[--renew-deadline 10s] [--retry-period 2s] [-v]"

// defaultMetricsAddr is where /metrics, /healthz and /readyz listen unless told
// otherwise: loopback, because they answer without authentication. Serving them on
// other interfaces takes an explicit --metrics-addr.
const defaultMetricsAddr = "127.0.0.1:10257"

// controllerManagerFlags are the command line of controller-manager.
type controllerManagerFlags struct {
	kubeconfig, context string
	controllers         string
	workers             int
	resync              time.Duration
	metricsAddr         string
	elect               bool
	le                  manager.LeaderElection
	verbose             bool
}

// parse reads args into f; it returns a usage error for positional arguments.
func (f *controllerManagerFlags) parse(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("controller-manager", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&f.context, "context", "", "kubeconfig context")
	fs.StringVar(&f.controllers, "controllers", strings.Join(manager.Known(), ","), "controllers to run")
	fs.IntVar(&f.workers, "workers", 5, "workers per controller")
	fs.DurationVar(&f.resync, "resync-period", 5*time.Minute, "look at every object again this often, changed or not")
	fs.StringVar(&f.metricsAddr, "metrics-addr", defaultMetricsAddr, "address of /metrics, /healthz and /readyz, served without authentication (\"\" for none)")
	fs.BoolVar(&f.elect, "leader-elect", false, "contend for the "+manager.LeaseName+" Lease before acting")
	fs.StringVar(&f.le.Namespace, "leader-elect-namespace", "kube-system", "namespace of the Lease")
	fs.StringVar(&f.le.Identity, "leader-elect-id", "", "identity in the Lease (default: hostname and a random suffix)")
	fs.DurationVar(&f.le.LeaseDuration, "lease-duration", 15*time.Second, "how long a standby waits before taking an unrenewed lease")
	fs.DurationVar(&f.le.RenewDeadline, "renew-deadline", 10*time.Second, "how long a leader keeps acting without renewing")
	fs.DurationVar(&f.le.RetryPeriod, "retry-period", 2*time.Second, "time between attempts to acquire or renew")
	fs.BoolVar(&f.verbose, "v", false, "log what the controllers do (to stderr)")
	if pos, err := parseInterspersed(fs, args); err != nil {
		return err
	} else if len(pos) != 0 {
		return usageError{controllerManagerUsage}
	}
	return nil
}

// exposure warns when addr is reachable from other machines: the endpoints have no
// authentication, so that should be a decision, and a visible one. It returns "" for a
// loopback address or none.
func exposure(addr string) string {
	if addr == "" {
		return ""
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "" // net.Listen will say what is wrong with it
	}
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		return ""
	}
	return fmt.Sprintf("/metrics, /healthz and /readyz are served without authentication on %s, which other machines may reach", addr)
}

// runControllerManager runs the controllers until interrupted. SIGTERM hands leadership
// over and exits 0; a lost lease exits 1, as kube-controller-manager does.
func runControllerManager(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f controllerManagerFlags
	if err := f.parse(args, stderr); err != nil {
		return err
	}
	if w := exposure(f.metricsAddr); w != "" {
		fmt.Fprintln(stderr, "kinformer: warning:", w)
	}
	cfg, err := listwatch.LoadKubeconfig(listwatch.LoadOptions{Path: f.kubeconfig, Context: f.context})
	if err != nil {
		return err
	}
	c, err := listwatch.New(cfg)
	if err != nil {
		return err
	}
	defer c.CloseIdleConnections()
	level := slog.LevelWarn
	if f.verbose {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	m, err := manager.New(ctx, manager.Options{Client: c, Controllers: splitList(f.controllers), Workers: f.workers, ResyncPeriod: f.resync,
		MetricsAddr: f.metricsAddr, LeaderElect: f.elect, LeaderElection: f.le, Logger: logger})
	if err != nil {
		return explain(err, cfg.Host)
	}
	fmt.Fprintf(stdout, "controller-manager: controllers %s", strings.Join(splitList(f.controllers), ","))
	if addr := m.Addr(); addr != "" {
		fmt.Fprintf(stdout, "; http://%s/metrics", addr)
	}
	if f.elect {
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
