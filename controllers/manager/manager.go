package manager

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/kinformer/kinformer/controllers"
	"github.com/kinformer/kinformer/controllers/deployment"
	"github.com/kinformer/kinformer/controllers/events"
	"github.com/kinformer/kinformer/controllers/replicaset"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/leaderelection"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/workqueue"
)

// LeaseName is the Lease the controller managers of one cluster contend for.
const LeaseName = "kinformer-controller-manager"

// Options configure a Manager. Zero values pick the defaults in brackets.
type Options struct {
	Client *listwatch.Client
	// Controllers to run, by name [all of Known()].
	Controllers []string
	// Workers per controller [5].
	Workers int
	// Namespace limits every controller to one namespace ("": all, as a cluster's
	// controller manager runs).
	Namespace string
	// ResyncPeriod has each controller look at every object again that often [5 min]:
	// a key dropped after its retry cap is not forgotten. Syncs that change nothing
	// write nothing.
	ResyncPeriod time.Duration
	// MetricsAddr serves /metrics, /healthz and /readyz over plain HTTP, to anyone who
	// reaches it ["": none]. For development: use a loopback address, and SecureServing
	// where the endpoints must be reachable from elsewhere. Both may be set: the same
	// endpoints are then served on both.
	MetricsAddr string
	// SecureServing serves the endpoints over HTTPS, each caller checked with the
	// apiserver, as kube-controller-manager's secure port [Addr "": none].
	SecureServing SecureServing
	// LeaderElect contends for the Lease before running workers.
	LeaderElect bool
	// LeaderElection tunes the election [namespace kube-system, identity hostname_random,
	// 15 s / 10 s / 2 s].
	LeaderElection LeaderElection
	// Sharding, when set, makes this manager one member of a shard group that divides
	// the cluster's namespaces between its members (see Sharding); it excludes
	// LeaderElect, which has one process do everything.
	Sharding *Sharding
	// Logger reports what an operator needs (leadership, sync errors); nil is silent.
	Logger *slog.Logger
	// CrashOnPanic lets a panic in a sync crash the process (after it is logged and
	// counted) instead of being recovered and the key retried (controllers.Options).
	CrashOnPanic bool
}

// LeaderElection configures the Lease contest.
type LeaderElection struct {
	Namespace, Identity                       string
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// controller is what the manager runs; each controller package provides one.
type controller interface {
	Syncers() []informer.Syncer
	Run(ctx, syncCtx context.Context, workers int)
	Queue() *workqueue.Queue[string]
}

// constructor builds one controller on the manager's shared factory and client, with
// the options every controller gets (and its own event recorder in them).
type constructor func(ctx context.Context, f *informer.Factory, c *listwatch.Client, opts controllers.Options) (controller, error)

// constructors are the known controllers, by name.
var constructors = map[string]constructor{
	deployment.Name: func(ctx context.Context, f *informer.Factory, c *listwatch.Client, opts controllers.Options) (controller, error) {
		return deployment.New(ctx, f, c, opts)
	},
	replicaset.Name: func(ctx context.Context, f *informer.Factory, c *listwatch.Client, opts controllers.Options) (controller, error) {
		return replicaset.New(ctx, f, c, opts)
	},
}

// Known returns the names of the controllers the manager can run.
func Known() []string {
	var names []string
	for n := range constructors {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Manager runs controllers; see the package doc.
type Manager struct {
	opts     Options
	log      *slog.Logger
	registry *prometheus.Registry
	factory  *informer.Factory
	ctrls    map[string]controller
	recs     []*events.Recorder
	leConfig *leaderelection.Config // set with LeaderElect; the elector is built by Run
	elector  *leaderelection.Elector
	shards   *sharded // set with Sharding

	// The HTTP endpoints: plain (MetricsAddr) and secure (SecureServing), each nil when
	// not asked for.
	plain, secure   net.Listener
	cert            tls.Certificate
	selfSignedPEM   []byte // the certificate when New made it
	reviewer        *reviewer
	ownReviewClient *listwatch.Client // closed by Run; nil when the options gave one

	synced atomic.Bool
}

// ListenError is an address of the HTTP endpoints that cannot be listened on: taken by
// another process, or not this machine's. It is no fault of the apiserver; a command
// line reports it with the flag that set Option ("MetricsAddr" or "SecureServing.Addr").
type ListenError struct {
	Option, Addr string
	Err          error // the cause, such as bind: address already in use
}

func (e *ListenError) Error() string {
	return fmt.Sprintf("cannot listen on %s (%s): %v", e.Addr, e.Option, e.Err)
}

func (e *ListenError) Unwrap() error { return e.Err }

// New builds the manager and its controllers; nothing runs until Run. It listens on the
// endpoints' addresses first, so that a taken port fails before anything else is done.
func New(ctx context.Context, opts Options) (_ *Manager, err error) {
	opts = opts.withDefaults()
	m := &Manager{opts: opts, log: opts.Logger, registry: prometheus.NewRegistry(), ctrls: map[string]controller{}}
	if err := m.listen(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			m.closeEndpoints()
		}
	}()
	if opts.SecureServing.Addr != "" {
		if err := m.setUpSecure(); err != nil {
			return nil, err
		}
	}
	if opts.LeaderElect && opts.Sharding != nil {
		return nil, errors.New("leader election and sharding exclude each other: a shard group's members all act, each in its part")
	}
	common, err := m.setUpShared()
	if err != nil {
		return nil, err
	}
	// The controllers and their event recorders write through writer: with sharding, a
	// client that the member's Guard fences, so that no write leaves this process where
	// the member no longer acts, or once its renew deadline has passed.
	writer := opts.Client
	if opts.Sharding != nil {
		if m.shards, writer, err = m.newSharded(); err != nil {
			return nil, err
		}
		common.Gate = m.shards.gate
	}
	if err := m.buildControllers(ctx, common, writer); err != nil {
		return nil, err
	}
	if opts.LeaderElect {
		m.leConfig = m.electionConfig()
	}
	return m, nil
}

// withDefaults returns o with its zero fields set to the defaults in brackets.
func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = 5
	}
	if o.ResyncPeriod == 0 {
		o.ResyncPeriod = 5 * time.Minute
	}
	if len(o.Controllers) == 0 {
		o.Controllers = Known()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// setUpShared registers the metrics and builds the informer factory the controllers
// share, and returns the options every controller gets.
func (m *Manager) setUpShared() (controllers.Options, error) {
	m.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	infMetrics, err := informer.NewMetrics(m.registry)
	if err != nil {
		return controllers.Options{}, err
	}
	queueMetrics, err := workqueue.NewMetrics(m.registry)
	if err != nil {
		return controllers.Options{}, err
	}
	syncMetrics, err := controllers.NewMetrics(m.registry)
	if err != nil {
		return controllers.Options{}, err
	}
	m.factory = informer.NewFactory(m.opts.Client, informer.FactoryOptions{Metrics: infMetrics, Logger: m.opts.Logger, ConsistentLists: m.opts.Sharding != nil})
	return controllers.Options{QueueMetrics: queueMetrics, Metrics: syncMetrics, Logger: m.opts.Logger,
		Namespace: m.opts.Namespace, ResyncPeriod: m.opts.ResyncPeriod, CrashOnPanic: m.opts.CrashOnPanic}, nil
}

// buildControllers builds the controllers the options name, each with common and an
// event recorder of its own, writing through writer, which Run runs.
func (m *Manager) buildControllers(ctx context.Context, common controllers.Options, writer *listwatch.Client) error {
	host, _ := os.Hostname()
	for _, name := range m.opts.Controllers {
		build, ok := constructors[name]
		if !ok {
			return fmt.Errorf("unknown controller %q (known: %s)", name, strings.Join(Known(), ", "))
		}
		rec, err := events.NewRecorder(writer, events.Options{Component: name + "-controller", Host: host})
		if err != nil {
			return err
		}
		copts := common
		copts.Recorder = rec
		c, err := build(ctx, m.factory, writer, copts)
		if err != nil {
			return fmt.Errorf("%s controller: %w", name, err)
		}
		m.ctrls[name], m.recs = c, append(m.recs, rec)
	}
	return nil
}

// listen opens the endpoints' listeners, the secure one first: of two addresses on one
// port, the plain one, for development, is the one reported.
func (m *Manager) listen() error {
	for _, l := range []struct {
		option, addr string
		into         *net.Listener
	}{
		{"SecureServing.Addr", m.opts.SecureServing.Addr, &m.secure},
		{"MetricsAddr", m.opts.MetricsAddr, &m.plain},
	} {
		if l.addr == "" {
			continue
		}
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			m.closeEndpoints()
			var op *net.OpError
			if errors.As(err, &op) {
				err = op.Err // the OpError repeats the address
			}
			return &ListenError{Option: l.option, Addr: l.addr, Err: err}
		}
		*l.into = ln
	}
	return nil
}

// closeEndpoints releases what New opened for the endpoints, when Run will not.
func (m *Manager) closeEndpoints() {
	for _, l := range []net.Listener{m.plain, m.secure} {
		if l != nil {
			_ = l.Close()
		}
	}
	if m.ownReviewClient != nil {
		m.ownReviewClient.CloseIdleConnections()
	}
}

func (m *Manager) electionConfig() *leaderelection.Config {
	le := &m.opts.LeaderElection
	if le.Namespace == "" {
		le.Namespace = "kube-system"
	}
	if le.Identity == "" {
		le.Identity = defaultIdentity()
	}
	return &leaderelection.Config{
		Client: m.opts.Client, Namespace: le.Namespace, Name: LeaseName, Identity: le.Identity,
		LeaseDuration: le.LeaseDuration, RenewDeadline: le.RenewDeadline, RetryPeriod: le.RetryPeriod,
		ReleaseOnCancel: true, Registerer: m.registry,
	}
}

// defaultIdentity is the hostname plus a random suffix, as kube-controller-manager
// makes it: two managers on one host must never share an identity.
func defaultIdentity() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "kinformer"
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return host + "_" + hex.EncodeToString(b[:])
}

// Factory is the informer factory the controllers share: more informers from it (a
// live view's) cost no extra list or watch.
func (m *Manager) Factory() *informer.Factory { return m.factory }

// Gatherer reads the manager's metrics, as /metrics serves them.
func (m *Manager) Gatherer() prometheus.Gatherer { return m.registry }

// Queue is the work queue of the controller name, if the manager runs it.
func (m *Manager) Queue(name string) (*workqueue.Queue[string], bool) {
	c, ok := m.ctrls[name]
	if !ok {
		return nil, false
	}
	return c.Queue(), true
}

// Addr is the address the plain HTTP endpoints listen on ("" without them).
func (m *Manager) Addr() string { return addrOf(m.plain) }

// SecureAddr is the address the HTTPS endpoints listen on ("" without them).
func (m *Manager) SecureAddr() string { return addrOf(m.secure) }

func addrOf(l net.Listener) string {
	if l == nil {
		return ""
	}
	return l.Addr().String()
}

// Identity is this manager's identity in the Lease ("" without leader election).
func (m *Manager) Identity() string { return m.opts.LeaderElection.Identity }

// Run runs the informers, the HTTP endpoints and, when leading (or without leader
// election), the controllers' workers, until ctx ends or leadership is lost. An endpoint
// that stops serving stops the manager too (a leader hands its Lease over), and Run
// returns why: a manager must not go on without the /healthz its probes read.
func (m *Manager) Run(ctx context.Context) error {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Syncs in flight finish after a shutdown (SIGTERM) but are aborted when leadership
	// is lost: in-flight writes must stop before another manager may take the lease.
	syncCtx, abort := context.WithCancel(context.WithoutCancel(ctx))
	defer abort()
	if m.leConfig != nil {
		if err := m.buildElector(syncCtx, abort); err != nil {
			m.closeEndpoints()
			return err
		}
	}
	var wg sync.WaitGroup
	// Each server that fails sends its error, then stops the manager.
	serveErrs := make(chan error, 2)
	servers := m.serve(&wg, func(err error) {
		serveErrs <- err
		cancel()
	})
	defer m.shutdown(ctx, cancel, servers, &wg)
	m.startBackground(runCtx, &wg)
	err := m.runControllers(runCtx, syncCtx)
	select {
	case serveErr := <-serveErrs:
		return errors.Join(err, serveErr)
	default:
		return err
	}
}

// shutdown stops everything Run started, then waits for it: the waits must never come
// before the cancel.
func (m *Manager) shutdown(ctx context.Context, cancel context.CancelFunc, servers []*http.Server, wg *sync.WaitGroup) {
	cancel()
	m.factory.Shutdown()
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer scancel()
	for _, srv := range servers {
		_ = srv.Shutdown(sctx)
	}
	wg.Wait()
	if m.ownReviewClient != nil {
		m.ownReviewClient.CloseIdleConnections()
	}
}

// startBackground starts, counted in wg, what runs whether this manager leads or stands
// by, so that a standby is warm: the event recorders, the informers, and the wait for
// their sync that /readyz reports.
func (m *Manager) startBackground(ctx context.Context, wg *sync.WaitGroup) {
	for _, rec := range m.recs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec.Run(ctx)
		}()
	}
	if m.shards != nil {
		return // the informers start with the first namespaces the group gives this member
	}
	m.factory.Start(ctx)
	wg.Add(1)
	go func() {
		defer wg.Done()
		if m.waitForSync(ctx) == nil {
			m.synced.Store(true)
			m.log.Info("caches synced", "controllers", m.opts.Controllers)
		}
	}()
}

// runControllers runs the controllers' workers until ctx ends: at once without leader
// election, else whenever this manager leads, until it loses the Lease.
func (m *Manager) runControllers(ctx, syncCtx context.Context) error {
	if m.shards != nil {
		return m.shards.run(ctx, syncCtx)
	}
	if m.elector == nil {
		m.runWorkers(ctx, syncCtx)
		return nil
	}
	err := m.elector.Run(ctx)
	if errors.Is(err, leaderelection.ErrLeadershipLost) {
		m.log.Error("leader election lost", "identity", m.Identity())
	}
	return err
}

// buildElector makes the elector whose leadership runs the workers under syncCtx.
func (m *Manager) buildElector(syncCtx context.Context, abort context.CancelFunc) error {
	cfg := *m.leConfig
	cfg.Callbacks = leaderelection.Callbacks{
		OnStartedLeading: func(leaderCtx context.Context) {
			m.log.Info("became the leader", "identity", m.Identity())
			m.runWorkers(leaderCtx, syncCtx)
		},
		// Called at once when leadership is lost, and after a graceful hand-over.
		OnStoppedLeading: abort,
		OnNewLeader: func(id string) {
			if id != m.Identity() {
				m.log.Info("standing by", "leader", id)
			}
		},
	}
	e, err := leaderelection.New(cfg)
	if err != nil {
		return err
	}
	m.elector = e
	return nil
}

// runWorkers waits for the caches, then runs every controller's workers until ctx ends.
func (m *Manager) runWorkers(ctx, syncCtx context.Context) {
	if m.waitForSync(ctx) != nil {
		return
	}
	var wg sync.WaitGroup
	for name, c := range m.ctrls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.log.Info("starting workers", "controller", name, "workers", m.opts.Workers)
			c.Run(ctx, syncCtx, m.opts.Workers)
		}()
	}
	wg.Wait()
}

func (m *Manager) waitForSync(ctx context.Context) error {
	var syncers []informer.Syncer
	for _, c := range m.ctrls {
		syncers = append(syncers, c.Syncers()...)
	}
	return informer.WaitForSync(ctx, syncers...)
}
