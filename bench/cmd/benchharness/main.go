// Command benchharness runs the end-to-end list/watch benchmark (see package
// bench/internal/harness) and writes bench/results/latest.md and its charts.
//
//	go run ./bench/cmd/benchharness [-plan short|full|sharded] [-runs N] [-only ID,...] [-out DIR] [-before REF]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/kinformer/kinformer/bench/internal/harness"
)

func main() {
	plan := flag.String("plan", "short", "short (make bench, a few minutes), full (make bench-full: 100k pods, 1 MB secrets, the real apiserver) or sharded (one shard of 100k pods split over 1, 2 and 4 shards, kinformer only)")
	runs := flag.Int("runs", 0, "runs per engine and scenario (0: the plan's, 3)")
	only := flag.String("only", "", "comma-separated scenario IDs to run (default: all of the plan)")
	out := flag.String("out", "bench/results/local", "directory for latest.md and the charts (bench/results/local is ignored by git; bench/results, the published results, is make bench-publish's)")
	before := flag.String("before", "", "a commit to hold kinformer against: its kinformer-runner runs beside the checkout's, and the report says which figures got worse")
	rewrite := flag.Bool("rewrite", false, "run nothing: make latest.md and the charts in -out again from the "+harness.ResultsFile+" a run left there, quoting -analysis as it is now")
	analysis := flag.String("analysis", "bench/results/analysis.md", "hand-written account of the missed targets, quoted in latest.md when a target is missed (skipped if absent)")
	flag.Parse()
	if *rewrite {
		if err := rewriteReport(*out, *analysis); err != nil {
			fmt.Fprintln(os.Stderr, "benchharness:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*plan, *runs, *only, *out, *analysis, *before); err != nil {
		fmt.Fprintln(os.Stderr, "benchharness:", err)
		os.Exit(1)
	}
}

func run(planName string, runs int, only, out, analysis, before string) error {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	var p harness.Plan
	switch planName {
	case "short":
		p = harness.Short()
	case "full":
		p = harness.Full()
	case "sharded":
		p = harness.Sharded()
	default:
		return fmt.Errorf("unknown plan %q", planName)
	}
	if runs > 0 {
		p.Runs = runs
	}
	if only != "" {
		ids := strings.Split(only, ",")
		p.Scenarios = slices.DeleteFunc(p.Scenarios, func(s harness.Scenario) bool { return !slices.Contains(ids, s.ID) })
	}
	repo, err := os.Getwd()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "kinformer-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bins, err := harness.Build(ctx, repo, tmp)
	if err != nil {
		return err
	}
	if before != "" {
		if bins.Before, err = harness.BuildBefore(ctx, repo, before, tmp); err != nil {
			return err
		}
	}
	r := &harness.Runner{Bins: bins, Tmp: tmp, Log: os.Stderr, Real: harness.RealCluster}
	rep := r.Run(ctx, p)
	rep.Before = before
	if err := writeReport(rep, out, analysis); err != nil {
		return err
	}
	return ctx.Err()
}

// rewriteReport makes latest.md in out again from the results a run saved there.
func rewriteReport(out, analysis string) error {
	rep, err := harness.ReadReport(out)
	if err != nil {
		return err
	}
	return writeReport(rep, out, analysis)
}

// writeReport writes rep into out, quoting the analysis file if there is one.
func writeReport(rep *harness.Report, out, analysis string) error {
	switch text, err := os.ReadFile(analysis); {
	case err == nil:
		rep.Analysis = string(text)
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if err := rep.Write(out); err != nil {
		return err
	}
	fmt.Println("wrote", filepath.Join(out, "latest.md"))
	return nil
}
