package main

import (
	"context"
	"flag"
	"fmt"
	"io"
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
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError{"usage: kinformer fake-kubelet [--kubeconfig FILE] [--context NAME] [--ready-after 1s] [--never-ready-image SUBSTRING] [--node-name fake-node] [--workers 2]"}
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
		Logf: func(format string, args ...any) {
			logMu.Lock()
			defer logMu.Unlock()
			fmt.Fprintf(stderr, format+"\n", args...)
		},
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "fake kubelet: binding pods to node %s at %s, ready after %v, never ready: %q\n",
		*nodeName, cfg.Host, max(*readyAfter, 0), neverReady.list)
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
