package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kinformer/kinformer/fakekubelet"
	"github.com/kinformer/kinformer/listwatch"
)

// defaultNeverReady are the image tags the end-to-end tests use for pods that must never
// become ready: images no registry has.
const defaultNeverReady = ":nonexistent,:404"

func fakeKubeletCommand() command {
	return command{name: "fake-kubelet",
		synopsis: "[--kubeconfig FILE] [--context NAME] " + encodingSynopsis + " [--ready-after 1s] [--never-ready-image SUBSTRING ...] " +
			"[--node-name fake-node] [--workers 2] [--capacity NAME=QUANTITY ...] [--allocatable NAME=QUANTITY ...] " +
			"[--delete-node-on-exit]",
		does: "register a fake Node, bind pods to it and report them running and ready (never ready for the " +
			"--never-ready-image ones), so that rollouts progress on a cluster without nodes",
		run: runFakeKubelet}
}

// runFakeKubelet binds pods to one fake node and reports them running and ready, so
// controllers' rollouts progress on a cluster without nodes (see package fakekubelet).
func runFakeKubelet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f fakeKubeletFlags
	if err := f.parse(args, stderr); err != nil {
		return err
	}
	cfg, err := loadConfig(f.kubeconfig, f.context, f.encoding.enc)
	if err != nil {
		return err
	}
	client, err := newClient(cfg)
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()
	k, err := fakekubelet.New(f.options(client, stderr))
	if err != nil {
		return usageError{err.Error()}
	}
	f.announce(stdout, cfg.Host)
	if err := k.Run(ctx); err != nil {
		return explain(err, cfg.Host)
	}
	return nil
}

// fakeKubeletFlags are the command line of fake-kubelet.
type fakeKubeletFlags struct {
	kubeconfig, context   string
	encoding              encodingFlag
	readyAfter            time.Duration
	nodeName              string
	workers               int
	neverReady            patterns
	capacity, allocatable resources
	deleteNode            bool
}

// parse reads args into f, with the defaults in the terms of package fakekubelet; it
// returns a usage error for positional arguments.
func (f *fakeKubeletFlags) parse(args []string, stderr io.Writer) error {
	fs := fakeKubeletCommand().flagSet(stderr)
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else the pod's ServiceAccount)")
	fs.StringVar(&f.context, "context", "", "kubeconfig context")
	f.encoding.register(fs)
	fs.DurationVar(&f.readyAfter, "ready-after", time.Second, "how long a pod takes from being bound to ready (0: at once)")
	fs.StringVar(&f.nodeName, "node-name", "fake-node", "the node pods are bound to")
	fs.IntVar(&f.workers, "workers", 2, "how many pods are handled at once")
	fs.Var(&f.neverReady, "never-ready-image", "a pod with an image containing this never becomes ready (repeatable, or comma-separated; default "+defaultNeverReady+")")
	f.capacity, f.allocatable = resources{}, resources{}
	fs.Var(f.capacity, "capacity", "the node's capacity, NAME=QUANTITY (repeatable, or comma-separated); names not given keep their default (cpu=32,memory=256Gi,pods=110)")
	fs.Var(f.allocatable, "allocatable", "what of the capacity pods may use, NAME=QUANTITY (repeatable, or comma-separated; default: the capacity)")
	fs.BoolVar(&f.deleteNode, "delete-node-on-exit", false, "delete the Node and its Lease on exit (by default they stay, as a stopped kubelet's do)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fakeKubeletCommand().usageError()
	}
	if err := f.encoding.check(); err != nil {
		return err
	}
	if !f.neverReady.set {
		_ = f.neverReady.Set(defaultNeverReady)
	}
	if f.readyAfter <= 0 {
		f.readyAfter = -1 // fakekubelet reads 0 as "the default"; negative is "at once"
	}
	return nil
}

// options are the fake kubelet's options from f, on client, logging to stderr.
func (f *fakeKubeletFlags) options(client *listwatch.Client, stderr io.Writer) fakekubelet.Options {
	return fakekubelet.Options{
		Client: client, NodeName: f.nodeName, ReadyAfter: f.readyAfter, NeverReadyImages: f.neverReady.list, Workers: f.workers,
		Capacity: f.capacity, Allocatable: f.allocatable, DeleteNodeOnExit: f.deleteNode,
		Logf: lineLogger(stderr),
	}
}

// lineLogger writes each message on a line of its own to w. The fake kubelet's workers
// log concurrently: a lock keeps their lines whole.
func lineLogger(w io.Writer) func(format string, args ...any) {
	var mu sync.Mutex
	return func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, format+"\n", args...)
	}
}

// announce tells what the fake kubelet does on host: which node it binds pods to, when
// they become ready, and what becomes of the node on exit.
func (f *fakeKubeletFlags) announce(stdout io.Writer, host string) {
	fmt.Fprintf(stdout, "fake kubelet: binding pods to node %s at %s, ready after %v, never ready: %q\n",
		f.nodeName, host, max(f.readyAfter, 0), f.neverReady.list)
	onExit := "left in place on exit"
	if f.deleteNode {
		onExit = "deleted on exit"
	}
	fmt.Fprintf(stdout, "fake kubelet: node %s: capacity %s, Lease %s/%s renewed every 10s, %s\n",
		f.nodeName, f.capacity.over(fakekubelet.DefaultCapacity()), "kube-node-lease", f.nodeName, onExit)
}

// patterns is a repeatable flag whose values may also be comma-separated lists.
type patterns struct {
	list []string
	set  bool // given at least once: replaces the default
}

func (p *patterns) String() string {
	if p == nil {
		return ""
	}
	return strings.Join(p.list, ",")
}

func (p *patterns) Set(v string) error {
	p.set = true
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			p.list = append(p.list, s)
		}
	}
	return nil
}

// resources is a repeatable flag of NAME=QUANTITY pairs, also comma-separated. The
// quantities are checked by fakekubelet.New.
type resources map[string]string

func (r resources) String() string { return r.over(nil) }

func (r resources) Set(v string) error {
	for pair := range strings.SplitSeq(v, ",") {
		if pair = strings.TrimSpace(pair); pair == "" {
			continue
		}
		name, q, ok := strings.Cut(pair, "=")
		if !ok || strings.TrimSpace(name) == "" {
			return fmt.Errorf("%q: want NAME=QUANTITY, such as cpu=4", pair)
		}
		r[strings.TrimSpace(name)] = strings.TrimSpace(q)
	}
	return nil
}

// over lists base with r's entries on top, sorted by name: NAME=QUANTITY,...
func (r resources) over(base map[string]string) string {
	all := maps.Clone(base)
	if all == nil {
		all = map[string]string{}
	}
	maps.Copy(all, r)
	var out []string
	for _, name := range slices.Sorted(maps.Keys(all)) {
		out = append(out, name+"="+all[name])
	}
	return strings.Join(out, ",")
}
