package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/controllers/manager"
	"github.com/kinformer/kinformer/fakekubelet"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// runDemo tells the demo's story: a Deployment created, scaled, rolled out, paused and
// resumed, rolled back and deleted, with the controllers of this engine doing the work
// and a live view of what flows through it. Without --kubeconfig everything runs in this
// process: the simulated apiserver, the controller manager and the fake kubelet.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "run the story against this cluster, in a namespace it creates and deletes")
	kubeContext := fs.String("context", "", "kubeconfig context")
	readyAfter := fs.Duration("ready-after", 400*time.Millisecond, "how long a pod takes to become ready (fake kubelet)")
	timeout := fs.Duration("timeout", 2*time.Minute, "give up when the story takes longer")
	plain := fs.Bool("plain", false, "print periodic lines even on a terminal")
	verbose := fs.Bool("v", false, "log what the controllers do (to stderr)")
	if pos, err := parseInterspersed(fs, args); err != nil {
		return err
	} else if len(pos) != 0 {
		return usageError{"usage: kinformer demo [--kubeconfig FILE] [--ready-after 400ms] [--plain]"}
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	env, err := demoEnvironment(ctx, *kubeconfig, *kubeContext)
	if err != nil {
		return err
	}
	defer env.close()
	fmt.Fprintf(stdout, "kinformer demo: %s, namespace %s\n", env.where, env.namespace)

	runCtx, stopRun := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stopRun(); wg.Wait() }()
	var m *manager.Manager
	if env.runControllers {
		opts := manager.Options{Client: env.client, Namespace: env.namespace, Workers: 2}
		if *verbose {
			opts.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
		}
		if m, err = manager.New(runCtx, opts); err != nil {
			return err
		}
		wg.Add(1)
		go func() { defer wg.Done(); _ = m.Run(runCtx) }()
	} else {
		fmt.Fprintln(stdout, "kinformer demo: a kube-controller-manager runs in this cluster: it does the work, and the view shows it through this engine's informers")
	}
	if env.runKubelet {
		// The demo's node is its own, named after its namespace, and goes with it: left
		// behind, it would be taken for a node by the next demo's hasNodes.
		k, err := fakekubelet.New(fakekubelet.Options{Client: env.client, Namespace: env.namespace, ReadyAfter: *readyAfter,
			NodeName: env.namespace, DeleteNodeOnExit: true})
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := k.Run(runCtx); err != nil {
				fmt.Fprintln(stderr, "kinformer demo: fake kubelet:", err)
			}
		}()
	}
	v, err := newView(runCtx, env, m, stdout, !*plain && isTerminal(stdout))
	if err != nil {
		return err
	}
	wg.Add(1)
	go func() { defer wg.Done(); v.run(runCtx) }()
	if err := v.waitForSync(ctx); err != nil {
		return err
	}
	err = tellStory(ctx, env, v)
	v.stop()
	if err != nil {
		return fmt.Errorf("the story stopped: %w", err)
	}
	fmt.Fprintln(stdout, "kinformer demo: done")
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

func demoEnvironment(ctx context.Context, kubeconfig, kubeContext string) (*demoEnv, error) {
	if kubeconfig == "" {
		sim := apisim.New(apisim.Options{})
		url, err := sim.Start("127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		c, err := listwatch.New(&listwatch.Config{Host: url, QPS: -1})
		if err != nil {
			sim.Close()
			return nil, err
		}
		return &demoEnv{client: c, namespace: "demo", where: "simulated apiserver at " + url, runControllers: true, runKubelet: true,
			collects: true, close: func() { c.CloseIdleConnections(); sim.Close() }}, nil
	}
	cfg, err := listwatch.LoadKubeconfig(listwatch.LoadOptions{Path: kubeconfig, Context: kubeContext})
	if err != nil {
		return nil, err
	}
	c, err := listwatch.New(cfg)
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
