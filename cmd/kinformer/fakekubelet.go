package main

import (
	"context"
	"flag"
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

// runFakeKubelet binds pods to one fake node and reports them running and ready, so
// controllers' rollouts progress on a cluster without nodes (see package fakekubelet).
func runFakeKubelet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fake-kubelet", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	kcontext := fs.String("context", "", "kubeconfig context")
	readyAfter := fs.Duration("ready-after", time.Second, "how long a pod takes from being bound to ready (0: at once)")
	nodeName := fs.String("node-name", "fake-node", "the node pods are bound to")
	workers := fs.Int("workers", 2, "how many pods are handled at once")
	var neverReady patterns
	fs.Var(&neverReady, "never-ready-image", "a pod with an image containing this never becomes ready (repeatable, or comma-separated; default "+defaultNeverReady+")")
	capacity, allocatable := resources{}, resources{}
	fs.Var(capacity, "capacity", "the node's capacity, NAME=QUANTITY (repeatable, or comma-separated); names not given keep their default (cpu=32,memory=256Gi,pods=110)")
	fs.Var(allocatable, "allocatable", "what of the capacity pods may use, NAME=QUANTITY (repeatable, or comma-separated; default: the capacity)")
	deleteNode := fs.Bool("delete-node-on-exit", false, "delete the Node and its Lease on exit (by default they stay, as a stopped kubelet's do)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError{"usage: kinformer fake-kubelet [--kubeconfig FILE] [--context NAME] [--ready-after 1s] [--never-ready-image SUBSTRING] [--node-name fake-node] [--workers 2] [--capacity cpu=32,memory=256Gi,pods=110] [--allocatable NAME=QUANTITY] [--delete-node-on-exit]"}
	}
	if !neverReady.set {
		_ = neverReady.Set(defaultNeverReady)
	}
	if *readyAfter <= 0 {
		*readyAfter = -1 // fakekubelet reads 0 as "the default"; negative is "at once"
	}

	cfg, err := listwatch.LoadKubeconfig(listwatch.LoadOptions{Path: *kubeconfig, Context: *kcontext})
	if err != nil {
		return err
	}
	client, err := listwatch.New(cfg)
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()
	var logMu sync.Mutex // workers log concurrently
	k, err := fakekubelet.New(fakekubelet.Options{
		Client: client, NodeName: *nodeName, ReadyAfter: *readyAfter, NeverReadyImages: neverReady.list, Workers: *workers,
		Capacity: capacity, Allocatable: allocatable, DeleteNodeOnExit: *deleteNode,
		Logf: func(format string, args ...any) {
			logMu.Lock()
			defer logMu.Unlock()
			fmt.Fprintf(stderr, format+"\n", args...)
		},
	})
	if err != nil {
		return usageError{err.Error()}
	}
	fmt.Fprintf(stdout, "fake kubelet: binding pods to node %s at %s, ready after %v, never ready: %q\n",
		*nodeName, cfg.Host, max(*readyAfter, 0), neverReady.list)
	onExit := "left in place on exit"
	if *deleteNode {
		onExit = "deleted on exit"
	}
	fmt.Fprintf(stdout, "fake kubelet: node %s: capacity %s, Lease %s/%s renewed every 10s, %s\n",
		*nodeName, capacity.over(fakekubelet.DefaultCapacity()), "kube-node-lease", *nodeName, onExit)
	if err := k.Run(ctx); err != nil {
		return explain(err, cfg.Host)
	}
	return nil
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
