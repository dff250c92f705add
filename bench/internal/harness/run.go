package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/kinformer/kinformer/bench/measure"
)

// Outcome is one engine's runs of one scenario.
type Outcome struct {
	Scenario Scenario
	Engine   string
	Results  []measure.Result
	Errors   []string
}

// CeilingResult is one line of the ceiling client (bench/cmd/ceiling).
type CeilingResult struct {
	Mode         string  `json:"mode"`
	Events       int     `json:"events"`
	Bytes        int64   `json:"bytes"`
	Seconds      float64 `json:"seconds"`
	EventsPerSec float64 `json:"events_per_sec"`
	MBPerSec     float64 `json:"mb_per_sec"`
	// With -latency (the Floor rows of the latency scenarios), in µs.
	LatencyP50US  float64 `json:"latency_p50_us"`
	LatencyP99US  float64 `json:"latency_p99_us"`
	LatencyP999US float64 `json:"latency_p999_us"`
}

// Report is what a harness run measured.
type Report struct {
	Plan     Plan
	Env      Env
	Took     time.Duration
	Outcomes []*Outcome
	Ceilings map[string][]CeilingResult // by mode: frame, tokenize
	// Before is the commit the Before engine was built from ("" when it did not run).
	Before string
	// Analysis is a hand-written account of why targets are missed (what the profiles
	// show), printed after the targets when one is missed. It is written for the runs
	// it names: a later run that misses differently needs it rewritten.
	Analysis string
}

// Runner runs a plan.
type Runner struct {
	Bins Binaries
	Tmp  string
	Log  io.Writer
	// Real starts the real control plane with pods created through the API, for the
	// scenarios that need it; nil skips them.
	Real func(ctx context.Context, pods int) (kubeconfig string, stop func(), err error)

	pbFiles map[string]string // the protobuf objects files made, by the server's flags
}

// Run runs every scenario of plan, engines alternating in order round by round.
func (r *Runner) Run(ctx context.Context, plan Plan) *Report {
	began := time.Now()
	rep := &Report{Plan: plan, Env: CurrentEnv(), Ceilings: map[string][]CeilingResult{}}
	var realKubeconfig string
	for _, sc := range plan.Scenarios {
		if sc.RealPods > 0 && realKubeconfig == "" {
			if r.Real == nil {
				r.logf("skip %s: no real control plane", sc.ID)
				continue
			}
			kc, stop, err := r.Real(ctx, sc.RealPods)
			if err != nil {
				r.logf("skip %s: %v", sc.ID, err)
				continue
			}
			defer stop()
			realKubeconfig = kc
		}
		if sc.Kind == KindCeiling {
			r.ceiling(ctx, plan.Runs, sc, rep)
			continue
		}
		if r.Bins.Before != "" && slices.Contains(sc.Engines, Kinformer) && len(sc.EngineRunner) == 0 && sc.Kind != KindSharded {
			i := slices.Index(sc.Engines, Kinformer)
			sc.Engines = slices.Insert(slices.Clone(sc.Engines), i+1, Before)
		}
		outcomes := map[string]*Outcome{}
		for _, e := range sc.Engines {
			o := &Outcome{Scenario: sc, Engine: e}
			outcomes[e] = o
			rep.Outcomes = append(rep.Outcomes, o)
		}
		for round := range sc.runs(plan.Runs) {
			order := slices.Clone(sc.Engines)
			if round%2 == 1 {
				slices.Reverse(order)
			}
			for _, e := range order {
				res, err := r.once(ctx, sc, e, realKubeconfig)
				o := outcomes[e]
				if err != nil {
					o.Errors = append(o.Errors, err.Error())
					r.logf("%s %s run %d: %v", sc.ID, e, round+1, err)
					continue
				}
				o.Results = append(o.Results, res)
				r.logf("%s %s run %d: %s", sc.ID, e, round+1, brief(sc.Kind, res))
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	rep.Took = time.Since(began)
	return rep
}

// once runs engine on scenario sc against a fresh server (or the real apiserver).
func (r *Runner) once(ctx context.Context, sc Scenario, engine, kubeconfig string) (measure.Result, error) {
	args := append(slices.Clone(sc.Runner), sc.EngineRunner[engine]...)
	if sc.Server != nil {
		serverArgs, err := r.serverArgs(ctx, sc)
		if err != nil {
			return measure.Result{}, err
		}
		srv, err := startServer(ctx, r.Bins.StreamServer, r.Tmp, sc.TLS, serverArgs...)
		if err != nil {
			return measure.Result{}, err
		}
		defer srv.stop()
		args = append(args, "-server", srv.URL)
		if srv.CA != "" {
			args = append(args, "-ca", srv.CA)
		}
	} else {
		args = append(args, "-kubeconfig", kubeconfig)
	}
	if engine == Floor {
		return r.floor(ctx, args)
	}
	bin := r.Bins.Kinformer
	switch engine {
	case ClientGo:
		bin = r.Bins.ClientGo
	case ClientGoProtobuf:
		bin = r.Bins.ClientGo
		args = append(args, "-protobuf")
	case Before:
		bin = r.Bins.Before
	}
	timeout := sc.Timeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	args = append(args, "-timeout", timeout.String())
	var res measure.Result
	err := runJSON(ctx, timeout+30*time.Second, &res, bin, args...)
	if err == nil && sc.Kind == KindSharded {
		err = checkShard(sc, res)
	}
	return res, err
}

// checkShard fails a sharded run whose cache is not exactly the shard, or that was
// filtered by the other side than the scenario's: its figures would be another
// scenario's.
func checkShard(sc Scenario, res measure.Result) error {
	want := "server"
	if sc.ClientFilters {
		want = "client"
	}
	switch {
	case res.Objects != sc.ShardObjects:
		return fmt.Errorf("cached %d objects, the shard holds %d", res.Objects, sc.ShardObjects)
	case res.ShardFiltering != want:
		return fmt.Errorf("the shard was filtered by the %q, want the %s", res.ShardFiltering, want)
	}
	return nil
}

// floor measures the latency floor (see Floor) with the runner's args: the server's
// -server and the scenario's -events.
func (r *Runner) floor(ctx context.Context, args []string) (measure.Result, error) {
	res := measure.Result{Engine: Floor, Scenario: KindLatency}
	server, events := flagValue(args, "-server"), flagValue(args, "-events")
	lines, err := runLines(ctx, 2*time.Minute, r.Bins.Ceiling, "-url", server, "-events", events, "-modes", "frame", "-latency")
	if err != nil {
		return res, err
	}
	var c CeilingResult
	if len(lines) != 1 {
		return res, fmt.Errorf("the ceiling client printed %d lines, want 1", len(lines))
	}
	if err := json.Unmarshal([]byte(lines[0]), &c); err != nil {
		return res, err
	}
	res.Events, res.EventsPerSec = c.Events, c.EventsPerSec
	res.LatencyP50US, res.LatencyP99US, res.LatencyP999US = c.LatencyP50US, c.LatencyP99US, c.LatencyP999US
	return res, nil
}

// flagValue returns the value after name in args, "" if there is none.
func flagValue(args []string, name string) string {
	if i := slices.Index(args, name); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

func (r *Runner) ceiling(ctx context.Context, runs int, sc Scenario, rep *Report) {
	for round := range runs {
		srv, err := startServer(ctx, r.Bins.StreamServer, r.Tmp, sc.TLS, sc.Server...)
		if err != nil {
			r.logf("%s: %v", sc.ID, err)
			return
		}
		lines, err := runLines(ctx, 2*time.Minute, r.Bins.Ceiling, append([]string{"-url", srv.URL}, sc.Runner...)...)
		srv.stop()
		if err != nil {
			r.logf("%s run %d: %v", sc.ID, round+1, err)
			continue
		}
		for _, l := range lines {
			var c CeilingResult
			if json.Unmarshal([]byte(l), &c) == nil && c.Mode != "" {
				rep.Ceilings[c.Mode] = append(rep.Ceilings[c.Mode], c)
				r.logf("%s %s run %d: %.0f events/s, %.0f MB/s", sc.ID, c.Mode, round+1, c.EventsPerSec, c.MBPerSec)
			}
		}
	}
}

func (r *Runner) logf(format string, args ...any) {
	w := r.Log
	if w == nil {
		w = os.Stderr
	}
	fmt.Fprintf(w, "bench: "+format+"\n", args...)
}

// brief is one run's headline, for the progress log.
func brief(kind string, res measure.Result) string {
	switch kind {
	case KindSync:
		return fmt.Sprintf("synced %d in %.2fs, %.0f B/object, peak RSS %.0f MB", res.Objects, res.SyncSeconds, res.HeapPerObjectBytes, float64(res.PeakRSSBytes)/1e6)
	case KindSharded:
		return fmt.Sprintf("synced %d in %.2fs (filtered by the %s), heap %.0f MB, peak RSS %.0f MB", res.Objects, res.SyncSeconds,
			res.ShardFiltering, float64(res.HeapAfterGCBytes)/1e6, float64(res.PeakRSSBytes)/1e6)
	case KindLatency:
		return fmt.Sprintf("%.0f events/s, p50 %.0fµs p99 %.0fµs p999 %.0fµs", res.EventsPerSec, res.LatencyP50US, res.LatencyP99US, res.LatencyP999US)
	}
	return fmt.Sprintf("%.0f events/s, %.2f CPU s per 1k events", res.EventsPerSec, res.CPUSecondsPerKEvent)
}
