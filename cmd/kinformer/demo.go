package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/controllers/manager"
	"github.com/kinformer/kinformer/fakekubelet"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

func demoCommand() command {
	return command{name: "demo", synopsis: "[--kubeconfig FILE] [--context NAME] " + encodingSynopsis + " [--ready-after 400ms] [--timeout 2m] [--plain] [-v]",
		does: "tell a rollout story (create a Deployment, scale it, roll out, pause, resume, roll back, delete it) " +
			"with this engine's controllers and a fake kubelet doing the work, and a live view of the informers, " +
			"queues and ReplicaSets; on a simulated apiserver in this process, or with --kubeconfig in a namespace " +
			"of a cluster that it creates and deletes",
		run: runDemo}
}

// runDemo tells the demo's story: a Deployment created, scaled, rolled out, paused and
// resumed, rolled back and deleted, with the controllers of this engine doing the work
// and a live view of what flows through it. Without --kubeconfig everything runs in this
// process: the simulated apiserver, the controller manager and the fake kubelet.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f demoFlags
	if err := f.parse(args, stderr); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()

	env, err := demoEnvironment(ctx, f.kubeconfig, f.context, f.encoding.enc)
	if err != nil {
		return err
	}
	defer env.close()
	fmt.Fprintf(stdout, "kinformer demo: %s, namespace %s\n", env.where, env.namespace)

	runCtx, stopRun := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stopRun(); wg.Wait() }()
	m, err := startDemoManager(runCtx, &wg, env, f.verbose, stdout, stderr)
	if err != nil {
		return err
	}
	if err := startDemoKubelet(runCtx, &wg, env, f.readyAfter, stderr); err != nil {
		return err
	}
	data, stopData, err := newEngineData(runCtx, env, m, clock.Real{})
	if err != nil {
		return err
	}
	defer stopData()
	v := newView(stdout, !f.plain && isTerminal(stdout), clock.Real{}, data.sample)
	wg.Add(1)
	go func() { defer wg.Done(); v.run(runCtx) }()
	if err := data.caches.waitForSync(ctx); err != nil {
		return err
	}
	err = tellStory(ctx, env, data.caches, v)
	v.stop()
	if err != nil {
		return fmt.Errorf("the story stopped: %w", err)
	}
	if missing := data.counters.missing(); len(missing) > 0 {
		return fmt.Errorf("the view found no %s in the engine's metrics, although the story made the engine count them: "+
			"renamed?", strings.Join(missing, ", "))
	}
	fmt.Fprintln(stdout, "kinformer demo: done")
	return nil
}

// demoFlags are the command line of demo.
type demoFlags struct {
	kubeconfig, context string
	encoding            encodingFlag
	readyAfter, timeout time.Duration
	plain, verbose      bool
}

// parse reads args into f; it returns a usage error for positional arguments.
func (f *demoFlags) parse(args []string, stderr io.Writer) error {
	cmd := demoCommand()
	fs := cmd.flagSet(stderr)
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "run the story against this cluster, in a namespace it creates and deletes")
	fs.StringVar(&f.context, "context", "", "kubeconfig context")
	f.encoding.register(fs)
	fs.Lookup("encoding").Usage += "; only with --kubeconfig: the simulated apiserver is read in the default, auto"
	fs.DurationVar(&f.readyAfter, "ready-after", 400*time.Millisecond, "how long a pod takes to become ready (fake kubelet)")
	fs.DurationVar(&f.timeout, "timeout", 2*time.Minute, "give up when the story takes longer")
	fs.BoolVar(&f.plain, "plain", false, "print periodic lines even on a terminal")
	fs.BoolVar(&f.verbose, "v", false, "log what the controllers do (to stderr)")
	if pos, err := parseInterspersed(fs, args); err != nil {
		return err
	} else if len(pos) != 0 {
		return cmd.usageError()
	}
	if err := f.encoding.check(); err != nil {
		return err
	}
	if f.kubeconfig == "" && f.encoding.enc != listwatch.EncodingAuto {
		return usageError{"--encoding goes with --kubeconfig: the simulated apiserver is read in the default, auto"}
	}
	return nil
}

// startDemoManager runs this engine's controller manager, counted in wg, and returns
// it; when the cluster's own controller manager does the work, it says so and returns
// nil.
func startDemoManager(ctx context.Context, wg *sync.WaitGroup, env *demoEnv, verbose bool, stdout, stderr io.Writer) (*manager.Manager, error) {
	if !env.runControllers {
		fmt.Fprintln(stdout, "kinformer demo: a kube-controller-manager runs in this cluster: it does the work, and the view shows it through this engine's informers")
		return nil, nil
	}
	opts := manager.Options{Client: env.client, Namespace: env.namespace, Workers: 2}
	if verbose {
		opts.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	m, err := manager.New(ctx, opts)
	if err != nil {
		return nil, err
	}
	wg.Add(1)
	go func() { defer wg.Done(); _ = m.Run(ctx) }()
	return m, nil
}

// startDemoKubelet runs the fake kubelet, counted in wg, unless the cluster has nodes of
// its own.
func startDemoKubelet(ctx context.Context, wg *sync.WaitGroup, env *demoEnv, readyAfter time.Duration, stderr io.Writer) error {
	if !env.runKubelet {
		return nil
	}
	// The demo's node is its own, named after its namespace, and goes with it: left
	// behind, it would be taken for a node by the next demo's hasNodes.
	k, err := fakekubelet.New(fakekubelet.Options{Client: env.client, Namespace: env.namespace, ReadyAfter: readyAfter,
		NodeName: env.namespace, DeleteNodeOnExit: true})
	if err != nil {
		return err
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := k.Run(ctx); err != nil {
			fmt.Fprintln(stderr, "kinformer demo: fake kubelet:", err)
		}
	}()
	return nil
}

// demoEnv is where the story happens.
type demoEnv struct {
	client         *listwatch.Client
	namespace      string
	where          string
	runControllers bool // false when the cluster's own controller manager does the work
	runKubelet     bool // false when the cluster has nodes of its own
	// collects: a garbage collector deletes dependents (the simulator's, or the one of
	// a cluster's kube-controller-manager); a bare apiserver has none.
	collects bool
	close    func()
}

// demoEnvironment is the simulated apiserver without kubeconfig, in the default
// encoding; else the cluster it names, read in enc.
func demoEnvironment(ctx context.Context, kubeconfig, kubeContext string, enc listwatch.Encoding) (*demoEnv, error) {
	if kubeconfig == "" {
		sim := apisim.New(apisim.Options{})
		url, err := sim.Start("127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		c, err := newClient(&listwatch.Config{Host: url, QPS: -1})
		if err != nil {
			sim.Close()
			return nil, err
		}
		return &demoEnv{client: c, namespace: "demo", where: "simulated apiserver at " + url, runControllers: true, runKubelet: true,
			collects: true, close: func() { c.CloseIdleConnections(); sim.Close() }}, nil
	}
	cfg, err := loadConfig(kubeconfig, kubeContext, enc)
	if err != nil {
		return nil, err
	}
	c, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	env := &demoEnv{client: c, where: "cluster at " + cfg.Host, namespace: fmt.Sprintf("kinformer-demo-%d", time.Now().Unix()%100000)}
	nsInfo, err := c.Discover(ctx, "namespaces")
	if err != nil {
		return nil, explain(err, cfg.Host)
	}
	namespaces := listwatch.For[*object.Raw](c, nsInfo, "")
	if _, err := namespaces.Create(ctx, &object.Raw{TypeMeta: object.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: object.ObjectMeta{Name: env.namespace}}); err != nil {
		return nil, explain(err, cfg.Host)
	}
	env.close = func() {
		// Deleting the namespace deletes what the story left.
		dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = namespaces.Delete(dctx, env.namespace, listwatch.DeleteOptions{})
		c.CloseIdleConnections()
	}
	env.runControllers = !kubeControllerManagerRuns(ctx, c)
	env.collects = !env.runControllers
	env.runKubelet = !hasNodes(ctx, c)
	return env, nil
}

// kubeControllerManagerRuns: its Lease was renewed in the last minute.
func kubeControllerManagerRuns(ctx context.Context, c *listwatch.Client) bool {
	info, err := c.Discover(ctx, "leases.coordination.k8s.io")
	if err != nil {
		return false
	}
	l, err := listwatch.For[*object.Lease](c, info, "kube-system").Get(ctx, "kube-controller-manager")
	return err == nil && l.Spec.RenewTime != nil && time.Since(l.Spec.RenewTime.Time) < time.Minute
}

// hasNodes: real kubelets run the pods, so the fake one must not. Fake kubelets' nodes
// do not count: one left registered by a stopped fake kubelet runs nothing.
func hasNodes(ctx context.Context, c *listwatch.Client) bool {
	info, err := c.Discover(ctx, "nodes")
	if err != nil {
		return false
	}
	l, err := listwatch.For[*object.Raw](c, info, "").List(ctx, listwatch.ListOptions{Limit: 1, LabelSelector: "!" + fakekubelet.NodeLabel})
	return err == nil && len(l.Items) > 0
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

var errStoryTimeout = errors.New("timed out")
