package measure

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/kinformer/kinformer/internal/memlimit"
)

// Scenarios.
const (
	ScenarioSync    = "sync"
	ScenarioWatch   = "watch"
	ScenarioLatency = "latency"
	ScenarioFanout  = "fanout"
)

// Config is what a runner is asked: the flags both runners share.
type Config struct {
	Server     string // base URL of the server (-server); with CA for https
	CA         string // PEM file of the CA that signed the server's certificate (-ca)
	Kubeconfig string // a real apiserver's kubeconfig (-kubeconfig), instead of Server

	Resource  string // pods, secrets or configmaps
	Namespace string // "" means all namespaces
	Scenario  string // ScenarioSync, ScenarioWatch, ScenarioLatency or ScenarioFanout
	Objects   int    // objects the cache must hold to be synced
	Events    int    // watch events each (fast) handler waits for

	KeepManagedFields bool // keep metadata.managedFields (both engines strip them by default)
	StreamingList     bool // fetch the initial state with a streaming list
	MetadataOnly      bool // cache only metadata (kinformer *object.Raw, client-go metadata informer)
	// Projection, kinformer only, caches pods as a projection of the embedder's kind
	// (object.CheckProjection): their metadata and their containers' names and images.
	Projection bool
	Protobuf   bool // ask for application/vnd.kubernetes.protobuf (both engines)

	// Shards, when positive, splits the resource by namespace among that many processes,
	// members "0" … "Shards-1" of shard.Assign over shard.DefaultBuckets, and this runner
	// caches member Shard's part: kinformer only (an engine that is not a ShardedEngine
	// refuses it). 1 is one process owning the whole space, still asking with a
	// shardSelector. 0 is no sharding.
	Shards, Shard int

	Handlers    int           // fanout: how many handlers
	SlowHandler time.Duration // fanout: one handler sleeps this long on each watch event

	Timeout time.Duration // the runner fails instead of waiting longer

	// CPUProfile, when set, receives a CPU profile from the informer's start to the end
	// of the measurement: the sync, and for the other scenarios the watch window too.
	CPUProfile string
	// MemProfile, when set, receives a heap profile taken where heap_after_gc is read.
	MemProfile string
	// MemoryLimit, when not 0, is the runtime's soft memory limit for the run
	// (debug.SetMemoryLimit, what GOMEMLIMIT sets), applied before the informer is built.
	MemoryLimit memlimit.Bytes
}

// Mode is the initial-state mode asked for.
func (c *Config) Mode() string {
	if c.StreamingList {
		return ModeStreamingList
	}
	return ModeListWatch
}

// ParseFlags parses a runner's command line (without the program name). Usage and
// errors are written to stderr; -h returns flag.ErrHelp.
func ParseFlags(args []string, stderr io.Writer) (*Config, error) {
	c := &Config{}
	fs := flag.NewFlagSet("runner", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Server, "server", "", "base URL of the server, e.g. http://127.0.0.1:8080 (or -kubeconfig)")
	fs.StringVar(&c.CA, "ca", "", "PEM file of the CA of an https -server")
	fs.StringVar(&c.Kubeconfig, "kubeconfig", "", "kubeconfig of a real apiserver (instead of -server)")
	fs.StringVar(&c.Resource, "resource", "pods", "pods, secrets or configmaps")
	fs.StringVar(&c.Namespace, "namespace", "", `namespace ("" = all namespaces)`)
	fs.StringVar(&c.Scenario, "scenario", ScenarioSync, "sync, watch, latency or fanout")
	fs.IntVar(&c.Objects, "objects", 0, "objects the cache holds once synced")
	fs.IntVar(&c.Events, "events", 0, "watch events to wait for (each fast handler, in fanout)")
	fs.BoolVar(&c.KeepManagedFields, "keep-managed-fields", false, "keep metadata.managedFields (stripped by default)")
	fs.BoolVar(&c.StreamingList, "streaming-list", false, "fetch the initial state with a streaming list (sendInitialEvents)")
	fs.BoolVar(&c.MetadataOnly, "metadata-only", false, "cache metadata only (PartialObjectMetadata)")
	fs.BoolVar(&c.Projection, "projection", false, "kinformer only: cache pods as a projection (metadata, and the containers' names and images)")
	fs.BoolVar(&c.Protobuf, "protobuf", false, "read in protobuf (application/vnd.kubernetes.protobuf)")
	fs.IntVar(&c.Shards, "shards", 0, "kinformer only: split the resource by namespace among this many processes (0: no sharding)")
	fs.IntVar(&c.Shard, "shard", 0, "with -shards: the member (0 to shards-1) whose part this runner caches")
	fs.IntVar(&c.Handlers, "handlers", 1, "fanout: number of handlers")
	fs.DurationVar(&c.SlowHandler, "slow-handler", 0, "fanout: one of the handlers sleeps this long per watch event")
	fs.DurationVar(&c.Timeout, "timeout", 5*time.Minute, "fail rather than wait longer")
	fs.StringVar(&c.CPUProfile, "cpuprofile", "", "write a CPU profile of the measured part to this file (go tool pprof)")
	fs.StringVar(&c.MemProfile, "memprofile", "", "write a heap profile, taken with heap_after_gc, to this file")
	fs.Var(&c.MemoryLimit, "memory-limit", "soft memory limit of the run, in bytes or as 2.5GiB, 3000MB (runtime/debug.SetMemoryLimit; default none)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return c, c.validate()
}

func (c *Config) validate() error {
	switch {
	case (c.Server == "") == (c.Kubeconfig == ""):
		return errors.New("give exactly one of -server and -kubeconfig")
	case c.CA != "" && c.Server == "":
		return errors.New("-ca goes with -server")
	case c.Objects < 0 || c.Events < 0:
		return errors.New("-objects and -events cannot be negative")
	case c.Timeout <= 0:
		return errors.New("-timeout must be positive")
	case c.Shards < 0 || c.Shard < 0 || c.Shard >= max(c.Shards, 1):
		return fmt.Errorf("-shard %d of -shards %d: want 0 <= shard < shards", c.Shard, c.Shards)
	}
	switch c.Resource {
	case "pods", "secrets", "configmaps":
	default:
		return fmt.Errorf("-resource %q: want pods, secrets or configmaps", c.Resource)
	}
	switch c.Scenario {
	case ScenarioSync:
		if c.Handlers != 1 || c.SlowHandler != 0 {
			return errors.New("-handlers and -slow-handler belong to -scenario fanout")
		}
	case ScenarioWatch, ScenarioLatency, ScenarioFanout:
		if c.Events < 2 {
			return fmt.Errorf("-scenario %s needs -events of at least 2 (the window runs from the first to the last)", c.Scenario)
		}
		if c.Scenario != ScenarioFanout && (c.Handlers != 1 || c.SlowHandler != 0) {
			return errors.New("-handlers and -slow-handler belong to -scenario fanout")
		}
		if c.Handlers < 1 || c.SlowHandler < 0 {
			return errors.New("-handlers must be at least 1, -slow-handler not negative")
		}
		if c.SlowHandler > 0 && c.Handlers < 2 {
			return errors.New("-slow-handler needs -handlers 2 or more: the fast ones are measured")
		}
	default:
		return fmt.Errorf("-scenario %q: want sync, watch, latency or fanout", c.Scenario)
	}
	return nil
}
