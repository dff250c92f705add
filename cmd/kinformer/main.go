// Command kinformer is the command line of the kinformer engine: a simulated apiserver,
// a watch printer, and a self-contained demo.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `kinformer: a Kubernetes informer engine.

Usage:
  kinformer demo [--duration 10s]            run a simulated apiserver, churn pods, watch them
  kinformer sim --addr HOST:PORT --kubeconfig-out FILE
                                             serve the simulated apiserver until interrupted
  kinformer watch RESOURCE [-n NS | -A] [-l SELECTOR] [--kubeconfig FILE] [--context NAME] [--websocket] [--streaming-list]
                 [--trace [--trace-every 100]]
                                             run an informer and print its handler events (and,
                                             with --trace, the time sampled events spent in each stage)
  kinformer cache dump RESOURCE [...]        sync an informer, print its cache as sorted JSON lines
  kinformer cache verify RESOURCE [...]      compare the synced cache with a fresh list (exit 1 on any difference)
  kinformer bench sync RESOURCE [...] [--json]
                                             time an informer's sync and weigh its cache, against any cluster
  kinformer controller-manager --kubeconfig FILE [--controllers replicaset] [--workers 5] [--leader-elect] [...]
                                             run the controllers (leader election, /metrics, /healthz, /readyz)
  kinformer fake-kubelet --kubeconfig FILE [--ready-after 1s] [--never-ready-image :nonexistent,:404] [--node-name fake-node]
                         [--capacity cpu=32,memory=256Gi,pods=110] [--allocatable NAME=QUANTITY] [--delete-node-on-exit]
                                             register a fake node, bind pods to it and report them running and ready

Run 'kinformer COMMAND -h' for the flags of a command.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "kinformer:", err)
		}
		os.Exit(exitCode(err))
	}
}

// exitCode is 2 for usage errors and 1 for everything else.
func exitCode(err error) int {
	var ue usageError
	if errors.As(err, &ue) || errors.Is(err, flag.ErrHelp) {
		return 2
	}
	return 1
}

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usageError{"no command given"}
	}
	switch args[0] {
	case "demo":
		return runDemo(ctx, args[1:], stdout, stderr)
	case "sim":
		return runSim(ctx, args[1:], stdout, stderr)
	case "watch":
		return runWatch(ctx, args[1:], stdout, stderr)
	case "cache":
		return runCache(ctx, args[1:], stdout, stderr)
	case "controller-manager":
		return runControllerManager(ctx, args[1:], stdout, stderr)
	case "fake-kubelet":
		return runFakeKubelet(ctx, args[1:], stdout, stderr)
	case "bench":
		return runBench(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return usageError{fmt.Sprintf("unknown command %q", args[0])}
}

// parseInterspersed parses flags that may come before or after positional arguments
// (kubectl style: "watch pods -n default") and returns the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
