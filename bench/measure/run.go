package measure

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"
)

// EventFunc is one handler of the benchmark, called by the engine for each notification
// it delivers to that handler: initial is true for the adds of the initial state,
// annotations are the notified object's (for a delete, the deleted object's). The
// engine calls each EventFunc from that handler's own goroutine, one call at a time, as
// both engines do for their handlers.
type EventFunc func(initial bool, annotations map[string]string)

// Engine is the one thing a runner writes: its informer, built to the Config.
type Engine interface {
	// Name is the engine as results name it: "kinformer", "client-go",
	// "client-go-protobuf".
	Name(cfg *Config) string
	// Build creates the client and the informer of cfg.Resource and registers one
	// handler per EventFunc, each on its own goroutine; it starts nothing.
	Build(ctx context.Context, cfg *Config, handlers []EventFunc) error
	// Start starts the informer and returns.
	Start(ctx context.Context) error
	// WaitForSync returns once the informer and every handler registration have synced,
	// or with an error saying why not when ctx ends.
	WaitForSync(ctx context.Context) error
	// Len is the number of objects in the cache.
	Len() int
	// Mode is the initial-state mode the informer used (ModeListWatch or
	// ModeStreamingList), asked once it has synced.
	Mode() string
}

// ShardedEngine is an Engine that can cache one shard of its resource (Config.Shards,
// Config.Shard): Measure refuses -shards to the others.
type ShardedEngine interface {
	Engine
	// ShardFiltering says, once synced, who kept the objects outside the shard out of
	// the cache: "server" (the server honoured the shard selector), "client" (it sent
	// everything, the engine dropped the rest) or "" if it cannot tell.
	ShardFiltering() string
}

// Run is one runner process's measurement. Begin it on the first line of main.
type Run struct {
	start time.Time
}

// Begin starts the clock of sync_seconds.
func Begin() *Run { return &Run{start: time.Now()} }

// Main parses the flags, measures eng, writes the Result line to stdout and exits: 0 on
// success, 1 if the measurement failed, 2 on bad flags.
func (r *Run) Main(eng Engine) {
	cfg, err := ParseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		if cfg == nil {
			cfg = &Config{}
		}
		res := baseResult(cfg, eng)
		res.Error = err.Error()
		r.exit(res, 2)
	}
	res, err := r.Measure(cfg, eng)
	if err != nil {
		res.Error = err.Error()
		fmt.Fprintf(os.Stderr, "%s: %v\n", res.Engine, err)
		r.exit(res, 1)
	}
	r.exit(res, 0)
}

func (r *Run) exit(res Result, code int) {
	if err := res.WriteJSON(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

func baseResult(cfg *Config, eng Engine) Result {
	res := Result{Engine: eng.Name(cfg), Scenario: cfg.Scenario, Resource: cfg.Resource, Objects: cfg.Objects,
		Events: cfg.Events, Mode: cfg.Mode(), ManagedFields: cfg.KeepManagedFields, MetadataOnly: cfg.MetadataOnly, Projection: cfg.Projection,
		Handlers: cfg.Handlers, Shards: cfg.Shards, Shard: cfg.Shard, MemoryLimitBytes: int64(cfg.MemoryLimit),
		GoVersion: runtime.Version()}
	if cfg.Scenario == ScenarioSync {
		res.Events = 0
	}
	return res
}

// Measure runs cfg's scenario on eng and returns its result; on error the result holds
// what was measured before it.
func (r *Run) Measure(cfg *Config, eng Engine) (res Result, err error) {
	res = baseResult(cfg, eng)
	// The limit is the benchmark's choice, not the engine's: a library never sets it.
	if cfg.MemoryLimit.Apply() {
		defer debug.SetMemoryLimit(math.MaxInt64)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	defer cancel()
	defer func() { res.PeakRSSBytes, _ = PeakRSS() }()

	sharded, canShard := eng.(ShardedEngine)
	if cfg.Shards > 0 && !canShard {
		return res, fmt.Errorf("-shards: %s cannot cache a shard", res.Engine)
	}
	w := newWindow(cfg)
	if err := eng.Build(ctx, cfg, w.handlers); err != nil {
		return res, fmt.Errorf("building the informer: %w", err)
	}
	paused := time.Now()
	baseline := HeapAfterGC()
	pause := time.Since(paused)
	stopProfile, err := startProfile(cfg.CPUProfile)
	if err != nil {
		return res, err
	}
	defer stopProfile()
	if err := eng.Start(ctx); err != nil {
		return res, fmt.Errorf("starting the informer: %w", err)
	}
	if err := eng.WaitForSync(ctx); err != nil {
		return res, fmt.Errorf("timed out after %v: %w", cfg.Timeout, err)
	}
	synced := time.Now() // before Len, which client-go's informer can only answer by listing keys
	for eng.Len() < cfg.Objects {
		select {
		case <-ctx.Done():
			return res, fmt.Errorf("timed out after %v: synced with %d objects, waiting for %d", cfg.Timeout, eng.Len(), cfg.Objects)
		case <-time.After(time.Millisecond):
		}
		synced = time.Now()
	}
	res.SyncSeconds = (synced.Sub(r.start) - pause).Seconds()
	res.Objects = eng.Len()
	if mode := eng.Mode(); mode != cfg.Mode() {
		res.Mode = mode
		return res, fmt.Errorf("asked for %s, the engine used %q", cfg.Mode(), mode)
	}
	shardNote := ""
	if cfg.Shards > 0 {
		res.ShardFiltering = sharded.ShardFiltering()
		shardNote = fmt.Sprintf(", shard %d of %d filtered by the %s", cfg.Shard, cfg.Shards, orUnknown(res.ShardFiltering))
	}
	fmt.Fprintf(os.Stderr, "%s: synced %d %s in %.3fs (%s%s)\n", res.Engine, res.Objects, cfg.Resource, res.SyncSeconds, res.Mode, shardNote)

	if cfg.Scenario == ScenarioSync {
		stopProfile()
		heap := HeapAfterGC()
		res.HeapAfterGCBytes, res.HeapInuseBytes = heap.Alloc, heap.Inuse
		if err := writeHeapProfile(cfg.MemProfile); err != nil {
			return res, err
		}
		if res.Objects > 0 {
			res.HeapPerObjectBytes = (float64(heap.Alloc) - float64(baseline.Alloc)) / float64(res.Objects)
		}
		return res, nil
	}

	select {
	case <-w.done:
	case <-ctx.Done():
		return res, fmt.Errorf("timed out after %v: %s", cfg.Timeout, w.progress())
	}
	stopProfile()
	w.report(&res)
	if cfg.Scenario == ScenarioLatency && w.stamped() == 0 {
		return res, fmt.Errorf("no event carried the %s annotation", SentAnnotation)
	}
	heap := HeapAfterGC()
	res.HeapAfterGCBytes, res.HeapInuseBytes = heap.Alloc, heap.Inuse
	// The profile's allocation samples count from the start: the watch's dominate.
	return res, writeHeapProfile(cfg.MemProfile)
}

// window counts the watch notifications of the fast handlers and takes the usage
// snapshots at the first one and at the last awaited one.
type window struct {
	target  int64
	fast    []*counter
	slow    *counter // nil without -slow-handler
	latency bool

	handlers  []EventFunc
	begin     sync.Once
	first     Usage
	last      Usage
	remaining atomic.Int64 // fast handlers still short of target
	slowSeen  int64        // slow.n when the window closed
	done      chan struct{}
}

// counter is one handler's: n is read by progress while the handler runs; the samples
// only after done.
type counter struct {
	n         atomic.Int64
	samples   []int64 // latency in ns, preallocated to target
	unstamped int64
	_         [64]byte // keep the counters of concurrent handlers off one cache line
}

func newWindow(cfg *Config) *window {
	w := &window{target: int64(cfg.Events), done: make(chan struct{})}
	switch cfg.Scenario {
	case ScenarioSync:
		w.handlers = []EventFunc{func(bool, map[string]string) {}}
		return w
	case ScenarioLatency, ScenarioFanout:
		w.latency = true
	}
	fast := cfg.Handlers
	if cfg.SlowHandler > 0 {
		w.slow = &counter{}
		w.handlers = append(w.handlers, w.slowHandler(cfg.SlowHandler))
		fast--
	}
	for range fast {
		c := &counter{}
		if w.latency {
			c.samples = make([]int64, 0, w.target)
		}
		w.fast = append(w.fast, c)
		w.handlers = append(w.handlers, w.fastHandler(c))
	}
	w.remaining.Store(int64(len(w.fast)))
	return w
}

func (w *window) fastHandler(c *counter) EventFunc {
	return func(initial bool, annotations map[string]string) {
		if initial {
			return
		}
		var now int64
		if w.latency {
			now = time.Now().UnixNano()
		}
		n := c.n.Load()
		if n >= w.target {
			return
		}
		n++
		c.n.Store(n)
		if n == 1 {
			w.begin.Do(func() { w.first = TakeUsage() })
		}
		if w.latency {
			if sent, ok := SentUnixNano(annotations); ok {
				c.samples = append(c.samples, now-sent)
			} else {
				c.unstamped++
			}
		}
		if n == w.target && w.remaining.Add(-1) == 0 {
			w.last = TakeUsage()
			if w.slow != nil {
				w.slowSeen = w.slow.n.Load()
			}
			close(w.done)
		}
	}
}

func (w *window) slowHandler(d time.Duration) EventFunc {
	return func(initial bool, _ map[string]string) {
		if initial {
			return
		}
		w.slow.n.Add(1)
		time.Sleep(d)
	}
}

// progress says how far the handlers got, for a timeout.
func (w *window) progress() string {
	least := w.target
	for _, c := range w.fast {
		least = min(least, c.n.Load())
	}
	s := fmt.Sprintf("the slowest of %d fast handler(s) saw %d of %d watch events", len(w.fast), least, w.target)
	if w.slow != nil {
		s += fmt.Sprintf(", the slow one %d", w.slow.n.Load())
	}
	return s
}

func (w *window) stamped() (n int) {
	for _, c := range w.fast {
		n += len(c.samples)
	}
	return n
}

// report fills the window's figures in; called after done.
func (w *window) report(res *Result) {
	events := float64(w.target - 1) // the window opens at the first event: it holds the others
	secs := w.last.At.Sub(w.first.At).Seconds()
	cpu := (w.last.CPU - w.first.CPU).Seconds()
	res.EventsPerSec = events / secs
	res.CPUSeconds = cpu
	res.CPUSecondsPerKEvent = cpu / (events / 1000)
	res.AllocsPerEvent = float64(w.last.Mallocs-w.first.Mallocs) / events
	res.BytesAllocPerEvent = float64(w.last.Bytes-w.first.Bytes) / events
	res.GCCycles = int64(w.last.GCs - w.first.GCs)
	res.SlowHandlerEvents = w.slowSeen
	if !w.latency {
		return
	}
	var all []int64
	if len(w.fast) == 1 {
		all = w.fast[0].samples
	} else {
		all = make([]int64, 0, w.stamped())
		for _, c := range w.fast {
			all = append(all, c.samples...)
		}
	}
	p := Percentiles(all, 0.50, 0.99, 0.999)
	res.LatencyP50US = float64(p[0]) / 1e3
	res.LatencyP99US = float64(p[1]) / 1e3
	res.LatencyP999US = float64(p[2]) / 1e3
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// startProfile starts a CPU profile into file ("" profiles nothing); the function it
// returns stops it, and may be called more than once.
func startProfile(file string) (stop func(), err error) {
	if file == "" {
		return func() {}, nil
	}
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			pprof.StopCPUProfile()
			f.Close()
		})
	}, nil
}

// writeHeapProfile writes the heap profile to file ("" writes nothing).
func writeHeapProfile(file string) error {
	if file == "" {
		return nil
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.WriteHeapProfile(f)
}
