package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
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
	Protobuf     bool    `json:"protobuf,omitempty"`
	Events       int     `json:"events"`
	Objects      int     `json:"objects,omitempty"` // of a list (modes list-*)
	Bytes        int64   `json:"bytes"`
	Seconds      float64 `json:"seconds"`
	EventsPerSec float64 `json:"events_per_sec"`
	MBPerSec     float64 `json:"mb_per_sec"`
	// The ceiling client's own CPU time over Seconds, and per 1,000 watch events.
	CPUSeconds          float64 `json:"cpu_seconds"`
	CPUSecondsPerKEvent float64 `json:"cpu_seconds_per_kevent"`
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
	// APIServerIdleCPU is the real kube-apiserver's CPU seconds per second with no
	// client, measured before its first scenario (0: not measured); each run's apiserver
	// CPU includes that much of its own background work per second the run lasts.
	APIServerIdleCPU float64 `json:",omitempty"`
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
	Real func(ctx context.Context, pods int) (*RealControlPlane, error)

	pbFiles map[string]string // the protobuf objects files made, by the server's flags
}

// Run runs every scenario of plan, engines alternating in order round by round.
func (r *Runner) Run(ctx context.Context, plan Plan) *Report {
	began := time.Now()
	rep := &Report{Plan: plan, Env: CurrentEnv(), Ceilings: map[string][]CeilingResult{}}
	var plane *RealControlPlane
	for _, sc := range plan.Scenarios {
		if sc.RealPods > 0 && plane == nil {
			if r.Real == nil {
				r.logf("skip %s: no real control plane", sc.ID)
				continue
			}
			cp, err := r.Real(ctx, sc.RealPods)
			if err != nil {
				r.logf("skip %s: %v", sc.ID, err)
				continue
			}
			defer cp.Stop()
			plane = cp
			if pid := apiserverPID(cp); pid > 0 {
				rep.APIServerIdleCPU = idleCPU(ctx, pid)
				r.logf("the apiserver (pid %d) at rest: %.3f CPU s per second", pid, rep.APIServerIdleCPU)
			}
		}
		if sc.Kind == KindCeiling {
			r.ceiling(ctx, plan.Runs, sc, rep)
			continue
		}
		sc.Engines = r.engines(sc)
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
				res, err := r.once(ctx, sc, e, plane)
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

// engines are the engines that run sc: its own, and with a build before (Bins.Before)
// that build right after kinformer (JSON) where kinformer runs with no engine-specific
// flags. kinformer-protobuf has no before: an older runner may not read protobuf.
func (r *Runner) engines(sc Scenario) []string {
	if r.Bins.Before == "" || !slices.Contains(sc.Engines, Kinformer) || len(sc.EngineRunner) != 0 || sc.Kind == KindSharded {
		return sc.Engines
	}
	i := slices.Index(sc.Engines, Kinformer)
	return slices.Insert(slices.Clone(sc.Engines), i+1, Before)
}

// runnerCommand is the program and flags that run engine (not a floor), given the
// runner flags of its scenario and server.
func (r *Runner) runnerCommand(engine string, args []string) (string, []string) {
	switch engine {
	case KinformerProtobuf:
		return r.Bins.Kinformer, append(args, "-protobuf")
	case ClientGo:
		return r.Bins.ClientGo, args
	case ClientGoProtobuf:
		return r.Bins.ClientGo, append(args, "-protobuf")
	case Before:
		return r.Bins.Before, args
	}
	return r.Bins.Kinformer, args
}

// once runs engine on scenario sc against a fresh server (or the real apiserver, whose
// CPU time it reads before and after the runner).
func (r *Runner) once(ctx context.Context, sc Scenario, engine string, plane *RealControlPlane) (measure.Result, error) {
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
		if plane == nil {
			return measure.Result{}, fmt.Errorf("%s needs the real apiserver", sc.ID)
		}
		args = append(args, "-kubeconfig", plane.Kubeconfig)
	}
	if isFloor(engine) {
		return r.floor(ctx, sc, engine, args)
	}
	bin, args := r.runnerCommand(engine, args)
	timeout := sc.Timeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	args = append(args, "-timeout", timeout.String())
	var res measure.Result
	cpu := r.apiserverCPU(sc, plane)
	err := runJSON(ctx, timeout+30*time.Second, &res, bin, args...)
	if err == nil {
		res.APIServerCPUSeconds = cpu()
	}
	if err == nil && sc.Kind == KindSharded {
		err = checkShard(sc, res)
	}
	return res, err
}

// apiserverPID is the real apiserver's process id, 0 if unknown.
func apiserverPID(plane *RealControlPlane) int {
	if plane == nil || plane.APIServerPID == nil {
		return 0
	}
	return plane.APIServerPID()
}

// apiserverCPU starts reading the real apiserver's CPU time for a run of sc: the
// function it returns is the CPU seconds the apiserver used since, 0 when sc is not
// against the real apiserver or the time cannot be read (the figure is then missing).
func (r *Runner) apiserverCPU(sc Scenario, plane *RealControlPlane) func() float64 {
	pid := apiserverPID(plane)
	if sc.Server != nil || pid == 0 {
		return func() float64 { return 0 }
	}
	before, err := processCPU(pid)
	if err != nil {
		r.logf("%s: the apiserver's CPU time: %v", sc.ID, err)
		return func() float64 { return 0 }
	}
	return func() float64 {
		after, err := processCPU(pid)
		switch {
		case err != nil:
			r.logf("%s: the apiserver's CPU time: %v", sc.ID, err)
			return 0
		case apiserverPID(plane) != pid || after < before:
			r.logf("%s: the apiserver (pid %d, now %d) restarted during the run: no CPU figure", sc.ID, pid, apiserverPID(plane))
			return 0
		}
		return (after - before).Seconds()
	}
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

// floor measures a floor (Floor, or FloorProtobuf for the protobuf bytes) with the
// ceiling client, given the runners' args (the server's -server and -ca, the scenario's
// -resource, -namespace, -objects and -events), as a result of sc's kind: of a latency
// scenario, the percentiles of the events' waits; of a watch, events/s and CPU per 1k
// events; of a sync, every page of the list read and its items found, the time that
// took as the time to synced (counted from the first request, where the runners' count
// from their process's start).
func (r *Runner) floor(ctx context.Context, sc Scenario, engine string, args []string) (measure.Result, error) {
	res := measure.Result{Engine: engine, Scenario: sc.Kind}
	cargs, err := floorArgs(sc, engine, args)
	if err != nil {
		return res, err
	}
	timeout := sc.Timeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	lines, err := runLines(ctx, timeout+30*time.Second, r.Bins.Ceiling, append(cargs, "-timeout", timeout.String())...)
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
	return floorResult(sc, engine, args, c)
}

// floorArgs are the ceiling client's flags for engine's floor of sc, from the runners'
// args.
func floorArgs(sc Scenario, engine string, args []string) ([]string, error) {
	server := flagValue(args, "-server")
	if server == "" {
		return nil, fmt.Errorf("%s: the floor reads the stream server only", sc.ID)
	}
	resource, ns := flagValue(args, "-resource"), flagValue(args, "-namespace")
	if resource == "" {
		resource = "pods"
	}
	if ns == "" {
		ns = "-" // the runners' "" is every namespace, the ceiling's "-"
	}
	c := []string{"-url", server, "-resource", resource, "-namespace", ns}
	if ca := flagValue(args, "-ca"); ca != "" {
		c = append(c, "-ca", ca)
	}
	if slices.Contains(args, "-metadata-only") {
		c = append(c, "-metadata-only")
	}
	if engine == FloorProtobuf {
		c = append(c, "-protobuf")
	}
	events := flagValue(args, "-events")
	switch sc.Kind {
	case KindLatency:
		c = append(c, "-events", events, "-modes", "frame", "-latency")
	case KindWatch:
		c = append(c, "-events", events, "-modes", "frame")
	case KindSync:
		c = append(c, "-modes", "", "-list", "-list-modes", "frame")
	default:
		return nil, fmt.Errorf("%s: no floor of a %s scenario", sc.ID, sc.Kind)
	}
	return c, nil
}

// floorResult is the ceiling client's line c as engine's result on sc; a sync whose list
// did not hold the runners' -objects fails.
func floorResult(sc Scenario, engine string, args []string, c CeilingResult) (measure.Result, error) {
	res := measure.Result{Engine: engine, Scenario: sc.Kind, Events: c.Events, EventsPerSec: c.EventsPerSec,
		CPUSeconds: c.CPUSeconds, CPUSecondsPerKEvent: c.CPUSecondsPerKEvent,
		LatencyP50US: c.LatencyP50US, LatencyP99US: c.LatencyP99US, LatencyP999US: c.LatencyP999US}
	if sc.Kind == KindSync {
		res.Objects, res.SyncSeconds = c.Objects, c.Seconds
		if want := flagValue(args, "-objects"); want != "" && want != strconv.Itoa(c.Objects) {
			return res, fmt.Errorf("the floor listed %d objects, the runners want %s", c.Objects, want)
		}
	}
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
	if isFloor(res.Engine) && kind == KindSync {
		return fmt.Sprintf("read and framed a list of %d in %.2fs", res.Objects, res.SyncSeconds)
	}
	switch kind {
	case KindSync:
		s := fmt.Sprintf("synced %d in %.2fs, %.0f B/object, peak RSS %.0f MB", res.Objects, res.SyncSeconds, res.HeapPerObjectBytes, float64(res.PeakRSSBytes)/1e6)
		if res.APIServerCPUSeconds > 0 {
			s += fmt.Sprintf(", apiserver CPU %.2fs", res.APIServerCPUSeconds)
		}
		return s
	case KindSharded:
		return fmt.Sprintf("synced %d in %.2fs (filtered by the %s), heap %.0f MB, peak RSS %.0f MB", res.Objects, res.SyncSeconds,
			res.ShardFiltering, float64(res.HeapAfterGCBytes)/1e6, float64(res.PeakRSSBytes)/1e6)
	case KindLatency:
		return fmt.Sprintf("%.0f events/s, p50 %.0fµs p99 %.0fµs p999 %.0fµs", res.EventsPerSec, res.LatencyP50US, res.LatencyP99US, res.LatencyP999US)
	}
	return fmt.Sprintf("%.0f events/s, %.2f CPU s per 1k events", res.EventsPerSec, res.CPUSecondsPerKEvent)
}
