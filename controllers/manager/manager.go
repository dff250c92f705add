package manager

import (
	"context"
	"crypto/rand"
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
	// MetricsAddr serves /metrics, /healthz and /readyz ["": no HTTP server]. Use a
	// loopback address unless the endpoints must be reachable from elsewhere.
	MetricsAddr string
	// LeaderElect contends for the Lease before running workers.
	LeaderElect bool
	// LeaderElection tunes the election [namespace kube-system, identity hostname_random,
	// 15 s / 10 s / 2 s].
	LeaderElection LeaderElection
	// Logger reports what an operator needs (leadership, sync errors); nil is silent.
	Logger *slog.Logger
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
}

// shared is what the manager hands every controller it builds.
type shared struct {
	factory      *informer.Factory
	client       *listwatch.Client
	queueMetrics *workqueue.Metrics
	metrics      *controllers.Metrics
	logger       *slog.Logger
	namespace    string
	resync       time.Duration
}

// constructors build the known controllers, by name, with their event recorder.
var constructors = map[string]func(ctx context.Context, s shared, rec *events.Recorder) (controller, error){
	deployment.Name: func(ctx context.Context, s shared, rec *events.Recorder) (controller, error) {
		return deployment.New(ctx, s.factory, s.client, deployment.Options{Recorder: rec,
			QueueMetrics: s.queueMetrics, Metrics: s.metrics, Logger: s.logger, Namespace: s.namespace, ResyncPeriod: s.resync})
	},
	replicaset.Name: func(ctx context.Context, s shared, rec *events.Recorder) (controller, error) {
		return replicaset.New(ctx, s.factory, s.client, replicaset.Options{Recorder: rec,
			QueueMetrics: s.queueMetrics, Metrics: s.metrics, Logger: s.logger, Namespace: s.namespace, ResyncPeriod: s.resync})
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
	listener net.Listener

	synced atomic.Bool
}

// New builds the manager and its controllers; nothing runs until Run.
func New(ctx context.Context, opts Options) (*Manager, error) {
	if opts.Workers <= 0 {
		opts.Workers = 5
	}
	if opts.ResyncPeriod == 0 {
		opts.ResyncPeriod = 5 * time.Minute
	}
	if len(opts.Controllers) == 0 {
		opts.Controllers = Known()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	m := &Manager{opts: opts, log: opts.Logger, registry: prometheus.NewRegistry(), ctrls: map[string]controller{}}
	m.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	infMetrics, err := informer.NewMetrics(m.registry)
	if err != nil {
		return nil, err
	}
	queueMetrics, err := workqueue.NewMetrics(m.registry)
	if err != nil {
		return nil, err
	}
	syncMetrics, err := controllers.NewMetrics(m.registry)
	if err != nil {
		return nil, err
	}
	m.factory = informer.NewFactory(opts.Client, informer.FactoryOptions{Metrics: infMetrics, Logger: opts.Logger})
	host, _ := os.Hostname()
	s := shared{factory: m.factory, client: opts.Client, queueMetrics: queueMetrics, metrics: syncMetrics, logger: opts.Logger, namespace: opts.Namespace, resync: opts.ResyncPeriod}
	for _, name := range opts.Controllers {
		build, ok := constructors[name]
		if !ok {
			return nil, fmt.Errorf("unknown controller %q (known: %s)", name, strings.Join(Known(), ", "))
		}
		rec, err := events.NewRecorder(opts.Client, events.Options{Component: name + "-controller", Host: host})
		if err != nil {
			return nil, err
		}
		c, err := build(ctx, s, rec)
		if err != nil {
			return nil, fmt.Errorf("%s controller: %w", name, err)
		}
		m.ctrls[name], m.recs = c, append(m.recs, rec)
	}
	if opts.LeaderElect {
		m.leConfig = m.electionConfig()
	}
	if opts.MetricsAddr != "" {
		if m.listener, err = net.Listen("tcp", opts.MetricsAddr); err != nil {
			return nil, fmt.Errorf("metrics address: %w", err)
		}
	}
	return m, nil
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

// Addr is the address the HTTP endpoints listen on ("" without them).
func (m *Manager) Addr() string {
	if m.listener == nil {
		return ""
	}
	return m.listener.Addr().String()
}

// Identity is this manager's identity in the Lease ("" without leader election).
func (m *Manager) Identity() string { return m.opts.LeaderElection.Identity }

// Run runs the informers, the HTTP endpoints and, when leading (or without leader
// election), the controllers' workers, until ctx ends or leadership is lost.
func (m *Manager) Run(ctx context.Context) error {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Syncs in flight finish after a shutdown (SIGTERM) but are aborted when leadership
	// is lost: in-flight writes must stop before another manager may take the lease.
	syncCtx, abort := context.WithCancel(context.WithoutCancel(ctx))
	defer abort()
	if m.leConfig != nil {
		if err := m.buildElector(syncCtx, abort); err != nil {
			return err
		}
	}
	var wg sync.WaitGroup
	var srv *http.Server
	defer func() {
		// Stop everything, then wait: the waits must never come before the cancel.
		cancel()
		m.factory.Shutdown()
		if srv != nil {
			sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			defer scancel()
			_ = srv.Shutdown(sctx)
		}
		wg.Wait()
	}()
	if m.listener != nil {
		srv = &http.Server{Handler: m.mux(), ReadHeaderTimeout: 10 * time.Second}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = srv.Serve(m.listener)
		}()
	}
	for _, rec := range m.recs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec.Run(runCtx)
		}()
	}
	m.factory.Start(runCtx)
	wg.Add(1)
	go func() {
		defer wg.Done()
		if m.waitForSync(runCtx) == nil {
			m.synced.Store(true)
			m.log.Info("caches synced", "controllers", m.opts.Controllers)
		}
	}()
	if m.elector == nil {
		m.runWorkers(runCtx, syncCtx)
		return nil
	}
	err := m.elector.Run(runCtx)
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
