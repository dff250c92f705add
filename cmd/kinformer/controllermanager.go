package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kinformer/kinformer/controllers/manager"
	"github.com/kinformer/kinformer/internal/memlimit"
	"github.com/kinformer/kinformer/shardgroup"
)

const controllerManagerUsage = "usage: kinformer controller-manager --kubeconfig FILE [--context NAME] " + encodingSynopsis + " [--controllers " +
	"replicaset,deployment] [--workers 5] [--resync-period 5m] [--secure-port 10257] [--bind-address 0.0.0.0] " +
	"[--tls-cert-file FILE --tls-private-key-file FILE] [--metrics-addr 127.0.0.1:10258] [--leader-elect=true] " +
	"[--leader-elect-namespace kube-system] [--leader-elect-id NAME] [--lease-duration 15s] " +
	"[--renew-deadline 10s] [--retry-period 2s] [--shard-group NAME] [--shard-id ID] [--shard-namespace kube-system] [--handover-timeout 2m0s] " +
	"[--crash-on-panic] [--memory-limit SIZE] [-v] [--log-level warn]"

// The endpoints are served as kube-controller-manager serves them: over HTTPS on port
// 10257 of every interface, each caller checked with the apiserver. The plain port
// answers anyone, so it is off unless --metrics-addr names it (for development, on
// loopback).
const (
	defaultSecurePort  = 10257
	defaultBindAddress = "0.0.0.0"
)

// controllerManagerFlags are the command line of controller-manager.
type controllerManagerFlags struct {
	kubeconfig, context string
	encoding            encodingFlag
	controllers         string
	workers             int
	resync              time.Duration
	metricsAddr         string
	securePort          int
	bindAddress         string
	certFile, keyFile   string
	elect               bool
	le                  manager.LeaderElection
	shardGroup          string
	shardID             string
	shardNamespace      string
	handoverTimeout     time.Duration
	crashOnPanic        bool
	memoryLimit         memlimit.Bytes
	verbose             bool
	logLevel            string
}

// parse reads args into f; it returns a usage error for positional arguments.
func (f *controllerManagerFlags) parse(args []string, stderr io.Writer) error {
	fs := controllerManagerCommand().flagSet(stderr)
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else the pod's ServiceAccount)")
	fs.StringVar(&f.context, "context", "", "kubeconfig context")
	f.encoding.register(fs)
	fs.StringVar(&f.controllers, "controllers", strings.Join(manager.Known(), ","), "controllers to run")
	fs.IntVar(&f.workers, "workers", 5, "workers per controller")
	fs.DurationVar(&f.resync, "resync-period", 5*time.Minute, "look at every object again this often, changed or not")
	fs.IntVar(&f.securePort, "secure-port", defaultSecurePort, "port of /metrics, /healthz and /readyz over HTTPS, /metrics only for callers "+
		"the apiserver authenticates and authorizes (TokenReview, SubjectAccessReview) (0: none)")
	fs.StringVar(&f.bindAddress, "bind-address", defaultBindAddress, "address of --secure-port (0.0.0.0: every interface)")
	fs.StringVar(&f.certFile, "tls-cert-file", "", "certificate of --secure-port, PEM (default: a self-signed one made at start)")
	fs.StringVar(&f.keyFile, "tls-private-key-file", "", "private key of --tls-cert-file, PEM")
	fs.StringVar(&f.metricsAddr, "metrics-addr", "", "address of /metrics, /healthz and /readyz over plain HTTP, without authentication, "+
		"for development (e.g. 127.0.0.1:10258; default: none)")
	fs.BoolVar(&f.elect, "leader-elect", true, "contend for the "+manager.LeaseName+" Lease before acting, as kube-controller-manager does "+
		"(off with --shard-group, whose members all act; --leader-elect=false for one manager that acts at once)")
	fs.StringVar(&f.le.Namespace, "leader-elect-namespace", "kube-system", "namespace of the Lease")
	fs.StringVar(&f.le.Identity, "leader-elect-id", "", "identity in the Lease (default: hostname and a random suffix)")
	fs.DurationVar(&f.le.LeaseDuration, "lease-duration", 15*time.Second, "how long a standby waits before taking an unrenewed lease")
	fs.DurationVar(&f.le.RenewDeadline, "renew-deadline", 10*time.Second, "how long a leader keeps acting without renewing")
	fs.DurationVar(&f.le.RetryPeriod, "retry-period", 2*time.Second, "time between attempts to acquire or renew")
	fs.StringVar(&f.shardGroup, "shard-group", "", "join this shard group: its members divide the namespaces between them, each caching and reconciling its part (excludes --leader-elect)")
	fs.StringVar(&f.shardID, "shard-id", "", "this member's name in the group, unique and lower case (default: hostname and a random suffix)")
	fs.StringVar(&f.shardNamespace, "shard-namespace", "kube-system", "namespace of the shard group's Leases")
	fs.DurationVar(&f.handoverTimeout, "handover-timeout", shardgroup.DefaultHandoverTimeout, "bound of each hand-over of namespaces "+
		"(taking them over, giving them away): a member stuck past it gives everything up, and /healthz fails")
	fs.BoolVar(&f.crashOnPanic, "crash-on-panic", false, "let a panic in a sync crash the process (default: log it with its stack, count it, retry the key)")
	fs.Var(&f.memoryLimit, "memory-limit", "soft memory limit of the process, in bytes or as 2.5Gi, 3GB: the garbage collector works harder near it "+
		"rather than let the heap grow past it (runtime/debug.SetMemoryLimit, as GOMEMLIMIT; default: none, or GOMEMLIMIT's)")
	fs.BoolVar(&f.verbose, "v", false, "log at level info (to stderr): relists and why, leadership, hand-overs, failed syncs; --log-level debug adds a line per sync")
	fs.StringVar(&f.logLevel, "log-level", "", "debug (a line per sync, with its key and time), info (as -v), warn (the default) or error")
	if pos, err := parseInterspersed(fs, args); err != nil {
		return err
	} else if len(pos) != 0 {
		return usageError{controllerManagerUsage}
	}
	if err := f.encoding.check(); err != nil {
		return err
	}
	explicitElect := false
	fs.Visit(func(fl *flag.Flag) { explicitElect = explicitElect || fl.Name == "leader-elect" })
	if f.shardGroup != "" && !explicitElect {
		f.elect = false // a shard group's members all act, each in its part
	}
	switch {
	case f.securePort < 0 || f.securePort > 65535:
		return usageError{fmt.Sprintf("--secure-port %d: not a port (0 serves no HTTPS)", f.securePort)}
	case (f.certFile == "") != (f.keyFile == ""):
		return usageError{"--tls-cert-file and --tls-private-key-file go together"}
	case f.certFile != "" && f.securePort == 0:
		return usageError{"--tls-cert-file is for --secure-port, which is 0"}
	case f.shardGroup != "" && f.elect:
		return usageError{"--shard-group and --leader-elect exclude each other: a shard group's members all act, each in its part"}
	case f.logLevel != "" && !slices.Contains([]string{"debug", "info", "warn", "error"}, f.logLevel):
		return usageError{fmt.Sprintf("--log-level %q: debug, info, warn or error", f.logLevel)}
	case f.shardGroup == "" && (f.shardID != "" || f.shardNamespace != "kube-system" || f.handoverTimeout != shardgroup.DefaultHandoverTimeout):
		return usageError{"--shard-id, --shard-namespace and --handover-timeout go with --shard-group"}
	}
	return nil
}

// secureAddr is where the HTTPS endpoints listen ("" for none).
func (f *controllerManagerFlags) secureAddr() string {
	if f.securePort == 0 {
		return ""
	}
	return net.JoinHostPort(f.bindAddress, strconv.Itoa(f.securePort))
}

// listenFailure reports an address of the endpoints that cannot be listened on with the
// flag that set it: it is no fault of the apiserver, whatever net error it is.
func (f *controllerManagerFlags) listenFailure(le *manager.ListenError) error {
	flagName, how := "--metrics-addr", `choose another address with --metrics-addr ("" serves none)`
	if le.Option == "SecureServing.Addr" {
		flagName, how = "--secure-port", "choose another port with --secure-port (0 serves no HTTPS)"
		if errors.Is(le, syscall.EADDRNOTAVAIL) { // the port is fine: the address is not this machine's
			flagName = "--bind-address"
		}
	}
	msg := fmt.Sprintf("cannot listen on %s (%s): %v", le.Addr, flagName, le.Err)
	if errors.Is(le, syscall.EADDRINUSE) {
		msg += "; another process listens there"
		if _, port, _ := net.SplitHostPort(f.metricsAddr); flagName == "--metrics-addr" && port == strconv.Itoa(f.securePort) {
			msg += " (this one's --secure-port, maybe)"
		}
		msg += ": stop it or " + how
	}
	return errors.New(msg)
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
	// The program's choice, made before the caches fill; the library never sets it.
	f.memoryLimit.Apply()
	var secure manager.SecureServing
	if secure.Addr = f.secureAddr(); f.certFile != "" {
		cert, err := tls.LoadX509KeyPair(f.certFile, f.keyFile)
		if err != nil {
			return fmt.Errorf("--tls-cert-file, --tls-private-key-file: %w", err)
		}
		secure.Certificate = &cert
	}
	cfg, err := loadConfig(f.kubeconfig, f.context, f.encoding.enc)
	if err != nil {
		return err
	}
	c, err := newClient(cfg)
	if err != nil {
		return err
	}
	defer c.CloseIdleConnections()
	level := slog.LevelWarn
	if f.verbose {
		level = slog.LevelInfo
	}
	if f.logLevel != "" {
		_ = level.UnmarshalText([]byte(f.logLevel)) // checked by the flags' validation
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	sharding := f.sharding()
	m, err := manager.New(ctx, manager.Options{Client: c, Controllers: splitList(f.controllers), Workers: f.workers, ResyncPeriod: f.resync,
		MetricsAddr: f.metricsAddr, SecureServing: secure, LeaderElect: f.elect, LeaderElection: f.le, Logger: logger,
		CrashOnPanic: f.crashOnPanic, Sharding: sharding})
	var le *manager.ListenError
	switch {
	case errors.As(err, &le):
		return f.listenFailure(le)
	case err != nil:
		return explain(err, cfg.Host)
	}
	fmt.Fprintf(stdout, "controller-manager: controllers %s", strings.Join(splitList(f.controllers), ","))
	if addr := m.SecureAddr(); addr != "" {
		fmt.Fprintf(stdout, "; https://%s/metrics (callers checked with the apiserver)", addr)
	}
	if addr := m.Addr(); addr != "" {
		fmt.Fprintf(stdout, "; http://%s/metrics", addr)
	}
	if m.SecureAddr() == "" && m.Addr() == "" {
		fmt.Fprint(stdout, "; no /metrics, /healthz or /readyz")
	}
	if f.elect {
		fmt.Fprintf(stdout, "; leader election as %s", m.Identity())
	}
	if sharding != nil {
		fmt.Fprintf(stdout, "; shard group %s as %s", sharding.Group, sharding.ID)
	}
	fmt.Fprintln(stdout)
	return m.Run(ctx)
}

// sharding is the manager's Sharding for --shard-group, nil without it. The Leases are
// timed by the same flags as leader election's.
func (f *controllerManagerFlags) sharding() *manager.Sharding {
	if f.shardGroup == "" {
		return nil
	}
	id := f.shardID
	if id == "" {
		id = defaultShardID()
	}
	return &manager.Sharding{Group: f.shardGroup, ID: id, Namespace: f.shardNamespace,
		LeaseDuration: f.le.LeaseDuration, RenewDeadline: f.le.RenewDeadline, RetryPeriod: f.le.RetryPeriod,
		HandoverTimeout: f.handoverTimeout}
}

// defaultShardID is the lower-case host name and a random suffix: a member's ID is part
// of its Lease's name, which must be a lower-case DNS name.
func defaultShardID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "kinformer"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return strings.ToLower(host) + "-" + hex.EncodeToString(b[:])
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
