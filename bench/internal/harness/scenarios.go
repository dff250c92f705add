package harness

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/kinformer/kinformer/bench/internal/streamserver"
	"github.com/kinformer/kinformer/shard"
)

// Kinds of scenario; each reports its own metrics (see metricsOf).
const (
	KindSync    = "sync"
	KindWatch   = "watch"
	KindLatency = "latency"
	KindFanout  = "fanout"
	KindCeiling = "ceiling"
	// KindSharded is the sync of one shard of a resource split among processes
	// (kinformer-runner -scenario sync -shards N -shard 0). The report gives these
	// scenarios one table together (see shardedTable).
	KindSharded = "sharded"
)

// The engines, as the runners name themselves in their results.
const (
	Kinformer = "kinformer"
	// KinformerProtobuf is kinformer-runner -protobuf: kinformer reading protobuf
	// (listwatch.EncodingProtobuf), held against ClientGoProtobuf.
	KinformerProtobuf = "kinformer-protobuf"
	ClientGo          = "client-go"
	ClientGoProtobuf  = "client-go-protobuf"
	// Before is kinformer at an earlier commit (benchharness -before REF), run where
	// kinformer runs with no engine-specific flags (an older runner may not know them).
	// It runs beside Kinformer (JSON) only: KinformerProtobuf has no before.
	Before = "kinformer-before"
	// Floor is no engine: the ceiling client (bench/cmd/ceiling) reading and framing the
	// same watch, timing each event as the runners do. Its latency is what this machine
	// and the server cost any client, before decoding.
	Floor = "read+frame"
	// FloorProtobuf is Floor for the protobuf bytes (bench/cmd/ceiling -protobuf): the
	// watch's frames found by their 4-byte lengths, the list's items by theirs, nothing
	// decoded. It runs where KinformerProtobuf does against the stream server: in the
	// latency scenarios (the p99 floor), the watch ones (events/s and CPU per event) and
	// the syncs (the time to read every list page).
	FloorProtobuf = "read+frame-protobuf"
)

// isFloor reports whether engine is a floor (Floor, FloorProtobuf), run by the ceiling
// client rather than a runner.
func isFloor(engine string) bool { return engine == Floor || engine == FloorProtobuf }

// readsProtobuf reports whether engine asks the server for protobuf.
func readsProtobuf(engine string) bool {
	return engine == ClientGoProtobuf || engine == KinformerProtobuf || engine == FloorProtobuf
}

// Scenario is one measurement, run by every engine in Engines, Runs times each.
type Scenario struct {
	ID, Title string
	Kind      string
	// Server are the stream server's flags; nil means the real kube-apiserver (RealPods
	// pods created through the API first).
	Server   []string
	TLS      bool
	RealPods int
	// Runner are the runners' flags, besides where the server is; EngineRunner adds
	// flags for one engine only (a memory limit one engine needs to fit, say).
	Runner       []string
	EngineRunner map[string][]string
	Engines      []string
	Timeout      time.Duration
	// Rate (events/s, 0 = full speed) and Handlers label the charts.
	Rate, Handlers int
	// Shards, for KindSharded, is how many shards the resource is split into; the runner
	// caches shard 0, which holds ShardObjects objects, kept out of the others by the
	// server or, with ClientFilters (a server ignoring shardSelector), by the informer.
	// A run that caches another number, or is filtered by the other side, fails.
	Shards, ShardObjects int
	ClientFilters        bool
	// MaxRuns, if positive, caps the plan's runs for a scenario too long to repeat;
	// MinRuns raises them for one whose figure is a tail, which moves from run to run
	// more than a median does (the latency scenarios: their p99 is the median of at
	// least five paired runs).
	MaxRuns, MinRuns int
}

// runs is how many times each engine runs sc in a plan of planRuns.
func (sc *Scenario) runs(planRuns int) int {
	if sc.MaxRuns > 0 {
		return min(planRuns, sc.MaxRuns)
	}
	return max(planRuns, sc.MinRuns)
}

// Plan is the scenarios of one harness run.
type Plan struct {
	Mode      string
	Runs      int
	Scenarios []Scenario
}

// podsServer is the stream server of pods; events 0 sends none (a sync is weighed on a
// quiet cache), else that many per watch.
func podsServer(objects, events, rate int) []string {
	if events == 0 {
		events = -1
	}
	return []string{"-profile", "pods", "-objects", strconv.Itoa(objects), "-namespace", "bench",
		"-watch-events", strconv.Itoa(events), "-rate", strconv.Itoa(rate)}
}

// realisticServer is podsServer for the realistic corpus (streamserver.RealisticPods):
// pods as a multi-tenant cluster's, in 60 namespaces of their own, whose watch events
// change what a kubelet changes.
func realisticServer(objects, events, rate int) []string {
	if events == 0 {
		events = -1
	}
	return []string{"-profile", streamserver.RealisticPods, "-objects", strconv.Itoa(objects),
		"-watch-events", strconv.Itoa(events), "-rate", strconv.Itoa(rate)}
}

// realisticRunner is runner's flags for the realistic corpus: its pods, of every
// namespace (the runners' default).
func realisticRunner(kind string, objects, events int, extra ...string) []string {
	return append([]string{"-scenario", kind, "-resource", "pods",
		"-objects", strconv.Itoa(objects), "-events", strconv.Itoa(events)}, extra...)
}

func runner(kind, resource string, objects, events int, extra ...string) []string {
	return append([]string{"-scenario", kind, "-resource", resource, "-namespace", "bench",
		"-objects", strconv.Itoa(objects), "-events", strconv.Itoa(events)}, extra...)
}

var both = []string{Kinformer, ClientGo}

// latencyRuns is the least runs of a latency scenario.
const latencyRuns = 5

// four: kinformer and client-go, each with JSON and with protobuf (client-go's faster
// configuration), which the stream server then also serves (see servesProtobuf).
var four = []string{Kinformer, KinformerProtobuf, ClientGo, ClientGoProtobuf}

// fourAndFloor is four and the floor of the protobuf bytes (FloorProtobuf), for the
// scenarios of the stream server.
var fourAndFloor = append(slices.Clone(four), FloorProtobuf)

// Short is `make bench`: every kind of scenario, small enough for a few minutes. The
// sharded syncs (kinformer only, of 100k pods) add about half a minute.
func Short() Plan {
	const watchEvents = 50000
	p := Plan{Mode: "short", Runs: 3}
	p.Scenarios = append(p.Scenarios,
		Scenario{ID: "ceiling-pods", Title: "The limit line: the same watch bytes read and framed, and tokenized with encoding/json",
			Kind: KindCeiling, Server: podsServer(1000, watchEvents, 0), Runner: []string{"-resource", "pods", "-events", strconv.Itoa(watchEvents)}},
		Scenario{ID: "sync-10k-pods", Title: "Initial sync of 10k pods (list+watch, managedFields stripped)",
			Kind: KindSync, Server: podsServer(10000, 0, 0), Runner: runner(KindSync, "pods", 10000, 0), Engines: fourAndFloor},
		Scenario{ID: "sync-10k-pods-streaming", Title: "Initial sync of 10k pods by streaming list",
			Kind: KindSync, Server: podsServer(10000, 0, 0), Runner: runner(KindSync, "pods", 10000, 0, "-streaming-list"), Engines: both},
		Scenario{ID: "watch-pods", Title: "Steady watch: pod MODIFIED/DELETED/ADDED events at full speed to a no-op handler",
			Kind: KindWatch, Server: podsServer(1000, watchEvents, 0), Runner: runner(KindWatch, "pods", 1000, watchEvents), Engines: fourAndFloor},
	)
	for _, rate := range []int{1000, 5000, 20000} {
		events := rate * 3 // three seconds at the rate
		p.Scenarios = append(p.Scenarios, Scenario{ID: fmt.Sprintf("latency-%dk", rate/1000),
			Title: fmt.Sprintf("Watch→handler latency at %d events/s (the server stamps the send time)", rate),
			Kind:  KindLatency, Server: podsServer(1000, events, rate), Runner: runner(KindLatency, "pods", 1000, events),
			Engines: append(slices.Clone(four), Floor, FloorProtobuf), Rate: rate, MinRuns: latencyRuns})
	}
	for _, h := range []int{1, 4, 16} {
		extra := []string{"-handlers", strconv.Itoa(h)}
		title := fmt.Sprintf("Fan-out to %d handler(s) at full speed", h)
		if h > 1 {
			extra = append(extra, "-slow-handler", "1ms")
			title = fmt.Sprintf("Fan-out to %d handlers at full speed, one of them slow (1 ms per event)", h)
		}
		p.Scenarios = append(p.Scenarios, Scenario{ID: fmt.Sprintf("fanout-%d", h), Title: title, Kind: KindFanout,
			Server: podsServer(1000, 20000, 0), Runner: runner(KindFanout, "pods", 1000, 20000, extra...),
			Engines: both, Handlers: h})
	}
	p.Scenarios = append(p.Scenarios, Scenario{ID: "sync-10k-pods-metadata",
		Title: "Initial sync of 10k pods, metadata only (PartialObjectMetadata)", Kind: KindSync,
		Server: podsServer(10000, 0, 0), Runner: runner(KindSync, "pods", 10000, 0, "-metadata-only"), Engines: both})
	for _, n := range []int{1, 2, 4} {
		p.Scenarios = append(p.Scenarios, shardedSync(n, false))
	}
	return p
}

// Sharded is `-plan sharded`, the sharded scenarios alone: the sync of one shard of 100k
// pods in 1,000 namespaces split over 1, 2 and 4 shards, the server filtering (as in
// Short), and over 4 with a server that ignores the selector, the informer filtering (as
// in Full). kinformer only: client-go has no sharding.
func Sharded() Plan {
	p := Plan{Mode: "sharded", Runs: 3}
	for _, n := range []int{1, 2, 4} {
		p.Scenarios = append(p.Scenarios, shardedSync(n, false))
	}
	p.Scenarios = append(p.Scenarios, shardedSync(4, true))
	return p
}

// The sharded scenarios' population.
const (
	shardedPods       = 100000
	shardedNamespaces = 1000
)

// shardedSync is the sync of shard 0 of shards of the sharded population; clientFilters
// makes the server ignore the shard selector.
func shardedSync(shards int, clientFilters bool) Scenario {
	want := shardObjects(shards)
	sc := Scenario{ID: fmt.Sprintf("sync-100k-pods-sharded-%d", shards),
		Title: fmt.Sprintf("Initial sync of shard 0 of %d of 100k pods in 1,000 namespaces", shards), Kind: KindSharded,
		Server: append(podsServer(shardedPods, 0, 0), "-namespaces", strconv.Itoa(shardedNamespaces)),
		Runner: []string{"-scenario", KindSync, "-resource", "pods", "-objects", strconv.Itoa(want), "-events", "0",
			"-shards", strconv.Itoa(shards), "-shard", "0"},
		Engines: []string{Kinformer}, Shards: shards, ShardObjects: want, ClientFilters: clientFilters}
	if clientFilters {
		sc.ID += "-client"
		sc.Title += ", the server ignoring the selector"
		sc.Server = append(sc.Server, "-ignore-shard-selector")
	}
	return sc
}

// shardObjects is how many of the sharded population's pods shard 0 of shards holds: the
// pods of the namespaces whose hash falls in the part of the space that shard.Assign
// gives member "0" of "0" … "shards-1", as the runner asks for it.
func shardObjects(shards int) int {
	members := make([]string, shards)
	for i := range members {
		members[i] = strconv.Itoa(i)
	}
	sel, ok := shard.Assign(members, shard.DefaultBuckets).Selector("0", shard.Namespace)
	if !ok {
		return 0
	}
	o := streamserver.Options{Namespace: "bench", Namespaces: shardedNamespaces}
	n := 0
	for j := range shardedNamespaces {
		if sel.Matches(o.NamespaceOf(j)) {
			n += shardedPods / shardedNamespaces // pod i is in namespace i mod shardedNamespaces
		}
	}
	return n
}

// The population of sync-1m-pods.
const (
	millionPods       = 1_000_000
	millionNamespaces = 1000
)

// sync1MPods is the sync of a million pods in 1,000 namespaces, listed across all of them
// (the runners' -namespace "" is all namespaces), from a server that generates them as it
// serves them (the stream server's lazy mode, its default above LazyAbove pods): eagerly
// it would need about 5 GB. Run once: a run takes minutes. Both engines run with no
// memory limit: the targets are kinformer's time to synced ≤ 15 s and peak RSS ≤ 1.5 GB;
// client-go peaks near 11.5 GB and fits in the machine's 24 GiB.
func sync1MPods() Scenario {
	return Scenario{ID: "sync-1m-pods",
		Title:   "Initial sync of 1M pods in 1,000 namespaces, all namespaces listed (no memory limit)",
		Kind:    KindSync,
		Server:  append(podsServer(millionPods, 0, 0), "-namespaces", strconv.Itoa(millionNamespaces)),
		Runner:  []string{"-scenario", KindSync, "-resource", "pods", "-objects", strconv.Itoa(millionPods), "-events", "0"},
		Engines: both, Timeout: 10 * time.Minute, MaxRuns: 1}
}

// realisticAbout says what the realistic corpus is, in its scenarios' titles.
const realisticAbout = " (a multi-tenant cluster's: 60 namespaces, ~210 Deployments, 1–4 containers, ~13 KB of JSON each)"

// sync1MRealisticPods is sync1MPods on the realistic corpus, reported beside it: a
// million of its pods (13.7 GB of JSON), listed across all namespaces, from the stream
// server's lazy mode (eagerly it would need some 20 GB). kinformer only: client-go holds
// about 25 KB of heap per realistic pod, some 25 GB for a million, more than the
// machine's 24 GiB. Run once, with no memory limit, and a generous timeout.
func sync1MRealisticPods() Scenario {
	return Scenario{ID: "sync-1m-realistic-pods",
		Title: "Initial sync of 1M realistic pods" + realisticAbout + ", all namespaces listed (no memory limit; " +
			"kinformer only: client-go would need about 25 GB, more than the machine's 24 GiB)",
		Kind: KindSync, Server: realisticServer(millionPods, 0, 0), Runner: realisticRunner(KindSync, millionPods, 0),
		Engines: []string{Kinformer}, Timeout: 10 * time.Minute, MaxRuns: 1}
}

// realistic are the headline pod scenarios again on the realistic corpus, each with the
// ID of the uniform scenario it is reported beside: heap per cached pod at 10k pods, the
// sync time and peak RSS of 100k and of a million (from the server's lazy mode,
// kinformer only), steady watch events/s.
func realistic() []struct {
	beside string
	sc     Scenario
} {
	const watchEvents = 50000
	return []struct {
		beside string
		sc     Scenario
	}{
		{"sync-10k-pods", Scenario{ID: "sync-10k-realistic-pods", Title: "Initial sync of 10k realistic pods" + realisticAbout + ", managedFields stripped",
			Kind: KindSync, Server: realisticServer(10000, 0, 0), Runner: realisticRunner(KindSync, 10000, 0), Engines: fourAndFloor}},
		{"watch-pods", Scenario{ID: "watch-realistic-pods",
			Title: "Steady watch of 1,000 realistic pods" + realisticAbout + ": kubelet status changes at full speed to a no-op handler",
			Kind:  KindWatch, Server: realisticServer(1000, watchEvents, 0), Runner: realisticRunner(KindWatch, 1000, watchEvents), Engines: fourAndFloor}},
		{"sync-100k-pods", Scenario{ID: "sync-100k-realistic-pods", Title: "Initial sync of 100k realistic pods" + realisticAbout,
			Kind: KindSync, Server: realisticServer(100000, 0, 0), Runner: realisticRunner(KindSync, 100000, 0), Engines: fourAndFloor,
			Timeout: 5 * time.Minute}},
		{"sync-1m-pods", sync1MRealisticPods()},
	}
}

// projections are the 10k syncs of both corpora with the pods cached as an embedder's
// projection of them (kinformer-runner -projection: metadata, and the containers' names
// and images; object.CheckProjection), kinformer only: client-go has no such thing, its
// nearest is the metadata-only informer.
func projections() []Scenario {
	const what = " cached as a projection (metadata, containers' names and images), kinformer only"
	return []Scenario{
		{ID: "sync-10k-pods-projection", Title: "Initial sync of 10k pods" + what, Kind: KindSync,
			Server: podsServer(10000, 0, 0), Runner: runner(KindSync, "pods", 10000, 0, "-projection"), Engines: []string{Kinformer}},
		{ID: "sync-10k-realistic-pods-projection", Title: "Initial sync of 10k realistic pods" + what, Kind: KindSync,
			Server: realisticServer(10000, 0, 0), Runner: realisticRunner(KindSync, 10000, 0, "-projection"), Engines: []string{Kinformer}},
	}
}

// Full is `make bench-full`: Short's scenarios at their full size, and the large ones;
// the realistic corpus's scenarios each beside the uniform one it repeats.
func Full() Plan {
	p := Short()
	p.Mode = "full"
	p.Scenarios = append(p.Scenarios, projections()...)
	p.Scenarios = append(p.Scenarios,
		Scenario{ID: "sync-10k-pods-managedfields", Title: "Initial sync of 10k pods, managedFields kept",
			Kind: KindSync, Server: podsServer(10000, 0, 0), Runner: runner(KindSync, "pods", 10000, 0, "-keep-managed-fields"), Engines: both},
		Scenario{ID: "sync-10k-pods-tls", Title: "Initial sync of 10k pods over HTTPS",
			Kind: KindSync, Server: podsServer(10000, 0, 0), TLS: true, Runner: runner(KindSync, "pods", 10000, 0), Engines: both},
		Scenario{ID: "sync-100k-pods", Title: "Initial sync of 100k pods",
			Kind: KindSync, Server: podsServer(100000, 0, 0), Runner: runner(KindSync, "pods", 100000, 0), Engines: fourAndFloor,
			Timeout: 5 * time.Minute},
		Scenario{ID: "sync-10k-configmaps", Title: "Initial sync of 10k small ConfigMaps",
			Kind: KindSync, Server: []string{"-profile", "configmaps", "-objects", "10000", "-namespace", "bench", "-watch-events", "-1"},
			Runner: runner(KindSync, "configmaps", 10000, 0), Engines: both},
		Scenario{ID: "sync-400-secrets", Title: "Initial sync of 400 Secrets of 1 MB (the watch-list KEP's case)",
			Kind: KindSync, Server: []string{"-profile", "secrets", "-objects", "400", "-namespace", "bench", "-watch-events", "-1"},
			Runner: runner(KindSync, "secrets", 400, 0), Engines: both, Timeout: 5 * time.Minute},
		sync1MPods(),
		shardedSync(4, true), // before the real apiserver, which runs from its scenario to the end
		// Each run's apiserver CPU seconds are read from its process accounting too
		// (mAPIServerCPU). No floor: the ceiling client reads the stream server only.
		Scenario{ID: "real-sync-10k-pods", Title: "Initial sync of 10k pods from the real kube-apiserver v1.36 (created through the API), and the apiserver's CPU for it",
			Kind: KindSync, RealPods: 10000, Runner: runner(KindSync, "pods", 10000, 0),
			Engines: four, Timeout: 5 * time.Minute},
	)
	for _, r := range realistic() {
		i := slices.IndexFunc(p.Scenarios, func(sc Scenario) bool { return sc.ID == r.beside })
		if i < 0 {
			i = len(p.Scenarios) - 1
		}
		p.Scenarios = slices.Insert(p.Scenarios, i+1, r.sc)
	}
	return p
}
