package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/kinformer/kinformer/bench/measure"
)

func benchSyncCommand() command {
	return command{name: "bench sync", synopsis: "RESOURCE " + targetFlags + " [--json]",
		does: "time an informer's sync of RESOURCE and weigh its cache (heap per object after GC, peak RSS), " +
			"against any cluster",
		run: runBench}
}

// runBench measures, against any cluster, what `make bench` measures against the stream
// server: how long an informer of RESOURCE takes to sync, and what its cache costs.
// Objects are cached as object.Raw (any resource), managedFields stripped.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	began := time.Now()
	cmd := benchSyncCommand()
	if len(args) == 0 || args[0] != "sync" {
		return cmd.usageError()
	}
	fs := cmd.flagSet(stderr)
	var t target
	t.flags(fs)
	asJSON := fs.Bool("json", false, "print the result as one JSON line (bench/measure.Result)")
	before := measure.HeapAfterGC()
	cpu := measure.CPUTime()
	s, err := t.open(ctx, fs, args[1:], cmd.usageError())
	if err != nil {
		return err
	}
	stop, err := s.start(ctx, stderr)
	defer stop()
	if err != nil || ctx.Err() != nil {
		return err
	}
	synced := time.Since(began)
	n := s.inf.Cache().Len()
	after := measure.HeapAfterGC()
	rss, _ := measure.PeakRSS()
	res := measure.Result{Engine: "kinformer", Scenario: "sync", Resource: s.inf.Name(), Objects: n,
		Mode: measure.ModeListWatch, SyncSeconds: synced.Seconds(), PeakRSSBytes: rss,
		HeapAfterGCBytes: after.Alloc, HeapInuseBytes: after.Inuse, CPUSeconds: (measure.CPUTime() - cpu).Seconds(),
		GoVersion: runtime.Version()}
	if t.streaming {
		res.Mode = measure.ModeStreamingList
	}
	if n > 0 && after.Alloc > before.Alloc {
		res.HeapPerObjectBytes = float64(after.Alloc-before.Alloc) / float64(n)
	}
	runtime.KeepAlive(s)
	if *asJSON {
		return res.WriteJSON(stdout)
	}
	fmt.Fprintf(stdout, "synced %d %s in %.2f s (%s, encoding=%s), %.2f CPU s\n", n, res.Resource, res.SyncSeconds, res.Mode,
		s.inf.Status().Encoding, res.CPUSeconds)
	fmt.Fprintf(stdout, "heap after GC: %.1f MB, %.0f B per cached object; peak RSS %.0f MB\n",
		float64(after.Alloc)/1e6, res.HeapPerObjectBytes, float64(rss)/1e6)
	return nil
}
