package measure

import (
	"encoding/json"
	"io"
	"math"
)

// Initial-state modes: how the engine fetched the objects before watching.
const (
	ModeListWatch     = "list-watch"     // a (paginated) list, then a watch from its resourceVersion
	ModeStreamingList = "streaming-list" // a watch with sendInitialEvents=true
)

// Result is a runner's one line of output. Fields a scenario does not measure stay zero.
type Result struct {
	Engine        string `json:"engine"` // "kinformer", "kinformer-protobuf", "client-go" or "client-go-protobuf"
	Scenario      string `json:"scenario"`
	Resource      string `json:"resource"`
	Objects       int    `json:"objects"` // objects in the cache at sync (or -objects if it never synced)
	Events        int    `json:"events"`  // watch events each (fast) handler waited for
	Mode          string `json:"mode"`    // ModeListWatch or ModeStreamingList, as used
	ManagedFields bool   `json:"managed_fields"`
	MetadataOnly  bool   `json:"metadata_only"`
	Projection    bool   `json:"projection,omitempty"`
	Handlers      int    `json:"handlers"`
	// Shards and Shard are -shards and -shard; ShardFiltering, with -shards, is who kept
	// the other shards out of the cache, as the engine tells (ShardedEngine).
	Shards         int    `json:"shards,omitempty"`
	Shard          int    `json:"shard,omitempty"`
	ShardFiltering string `json:"shard_filtering,omitempty"`
	// MemoryLimitBytes is -memory-limit, the soft limit the run had (0: none).
	MemoryLimitBytes int64 `json:"memory_limit_bytes,omitempty"`

	SyncSeconds        float64 `json:"sync_seconds"`
	PeakRSSBytes       int64   `json:"peak_rss_bytes"`
	HeapAfterGCBytes   uint64  `json:"heap_after_gc_bytes"`
	HeapInuseBytes     uint64  `json:"heap_inuse_bytes"` // MemStats.HeapInuse at the same moment
	HeapPerObjectBytes float64 `json:"heap_per_object_bytes"`

	EventsPerSec        float64 `json:"events_per_sec"`
	CPUSeconds          float64 `json:"cpu_seconds"`
	CPUSecondsPerKEvent float64 `json:"cpu_seconds_per_kevent"`
	AllocsPerEvent      float64 `json:"allocs_per_event"`
	BytesAllocPerEvent  float64 `json:"bytes_alloc_per_event"`
	GCCycles            int64   `json:"gc_cycles"` // garbage collections completed in the window
	LatencyP50US        float64 `json:"latency_p50_us"`
	LatencyP99US        float64 `json:"latency_p99_us"`
	LatencyP999US       float64 `json:"latency_p999_us"`
	SlowHandlerEvents   int64   `json:"slow_handler_events"` // fanout with -slow-handler
	// APIServerCPUSeconds is set by the benchmark harness (bench/internal/harness), not
	// by a runner: against a real kube-apiserver it started, the CPU time (user +
	// system, from /proc/PID/stat) that process used while the runner ran. 0: not
	// measured.
	APIServerCPUSeconds float64 `json:"apiserver_cpu_seconds,omitempty"`

	GoVersion string `json:"go_version"`
	Error     string `json:"error"`
}

// WriteJSON writes r as one line of JSON. Non-finite numbers (which JSON cannot carry)
// are written as 0.
func (r Result) WriteJSON(w io.Writer) error {
	for _, f := range []*float64{&r.SyncSeconds, &r.HeapPerObjectBytes, &r.EventsPerSec, &r.CPUSeconds,
		&r.CPUSecondsPerKEvent, &r.AllocsPerEvent, &r.BytesAllocPerEvent, &r.LatencyP50US, &r.LatencyP99US, &r.LatencyP999US} {
		if math.IsNaN(*f) || math.IsInf(*f, 0) {
			*f = 0
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
