package measure

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestPercentiles(t *testing.T) {
	samples := make([]int64, 1000)
	for i := range samples {
		samples[i] = int64(1000 - i) // 1000 … 1, reversed: Percentiles sorts
	}
	got := Percentiles(samples, 0, 0.5, 0.99, 0.999, 1)
	if want := []int64{1, 500, 990, 999, 1000}; !reflect.DeepEqual(got, want) {
		t.Errorf("Percentiles = %v, want %v", got, want)
	}
	if got := Percentiles([]int64{7}, 0.5, 0.999); !reflect.DeepEqual(got, []int64{7, 7}) {
		t.Errorf("one sample: %v", got)
	}
	if got := Percentiles(nil, 0.5); !reflect.DeepEqual(got, []int64{0}) {
		t.Errorf("no samples: %v", got)
	}
}

func TestParseVmHWM(t *testing.T) {
	status := "Name:\trunner\nVmPeak:\t  812344 kB\nVmSize:\t  812344 kB\nVmHWM:\t   45678 kB\nVmRSS:\t   40000 kB\n"
	got, err := ParseVmHWM(strings.NewReader(status))
	if err != nil || got != 45678*1024 {
		t.Errorf("ParseVmHWM = %d, %v; want %d", got, err, 45678*1024)
	}
	for _, bad := range []string{"Name:\tx\n", "VmHWM:\t12 MB\n", "VmHWM:\tlots kB\n"} {
		if _, err := ParseVmHWM(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseVmHWM(%q): no error", bad)
		}
	}
	if rss, err := PeakRSS(); err != nil || rss <= 0 {
		t.Errorf("PeakRSS() = %d, %v", rss, err)
	}
}

func TestSentUnixNano(t *testing.T) {
	for _, c := range []struct {
		ann  map[string]string
		want int64
		ok   bool
	}{
		{map[string]string{SentAnnotation: "1763840000123456789"}, 1763840000123456789, true},
		{map[string]string{SentAnnotation: "0001763840000123456"}, 1763840000123456, true},
		{map[string]string{SentAnnotation: "0000000000000000000"}, 0, false}, // list items
		{map[string]string{SentAnnotation: "soon"}, 0, false},
		{map[string]string{"other": "1"}, 0, false},
		{nil, 0, false},
	} {
		if got, ok := SentUnixNano(c.ann); got != c.want || ok != c.ok {
			t.Errorf("SentUnixNano(%v) = %d, %v; want %d, %v", c.ann, got, ok, c.want, c.ok)
		}
	}
}

func TestModeObserver(t *testing.T) {
	get := func(o *ModeObserver, url string) {
		o.Observe(httptest.NewRequest(http.MethodGet, url, nil))
	}
	o := NewModeObserver("pods")
	get(o, "/api/v1")
	get(o, "/api/v1/namespaces/bench/pods?watch=true&sendInitialEvents=true&allowWatchBookmarks=true")
	if m := o.Mode(); m != ModeStreamingList {
		t.Errorf("streaming: Mode = %q", m)
	}
	get(o, "/api/v1/namespaces/bench/pods?limit=500&resourceVersion=0") // the fallback
	if m := o.Mode(); m != ModeListWatch {
		t.Errorf("after fallback: Mode = %q", m)
	}
	o = NewModeObserver("pods")
	get(o, "/api/v1/pods?watch=1&resourceVersion=5")
	if m := o.Mode(); m != "" {
		t.Errorf("a plain watch: Mode = %q", m)
	}
}

func TestWindow(t *testing.T) {
	cfg := &Config{Scenario: ScenarioFanout, Events: 3, Handlers: 3, SlowHandler: time.Microsecond}
	w := newWindow(cfg)
	if len(w.handlers) != 3 || len(w.fast) != 2 || w.slow == nil {
		t.Fatalf("handlers %d, fast %d", len(w.handlers), len(w.fast))
	}
	sent := time.Now().Add(-time.Millisecond).UnixNano()
	ann := map[string]string{SentAnnotation: "0" + strconv.FormatInt(sent, 10)}
	for _, h := range w.handlers {
		h(true, nil) // initial adds are not counted
	}
	for i := 0; i < 4; i++ { // one more than awaited: ignored
		for _, h := range w.handlers {
			h(false, ann)
		}
	}
	select {
	case <-w.done:
	default:
		t.Fatal("window not closed")
	}
	var res Result
	w.report(&res)
	if res.SlowHandlerEvents != 3 || res.LatencyP50US < 1000 || res.EventsPerSec <= 0 {
		t.Errorf("report: %+v", res)
	}
}

func TestWriteJSON(t *testing.T) {
	var buf bytes.Buffer
	r := Result{Engine: "kinformer", EventsPerSec: math.Inf(1), Error: "x"}
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(buf.String(), "}\n") || strings.Count(buf.String(), "\n") != 1 {
		t.Errorf("not one line: %q", buf.String())
	}
	var back map[string]any
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"engine", "scenario", "mode", "sync_seconds", "heap_per_object_bytes", "events_per_sec",
		"cpu_seconds_per_kevent", "allocs_per_event", "latency_p999_us", "go_version", "error"} {
		if _, ok := back[k]; !ok {
			t.Errorf("no %q in %s", k, buf.String())
		}
	}
}

func TestParseFlags(t *testing.T) {
	var stderr bytes.Buffer
	c, err := ParseFlags([]string{"-server", "http://127.0.0.1:1", "-scenario", "fanout", "-events", "10",
		"-handlers", "4", "-slow-handler", "1ms", "-streaming-list", "-memory-limit", "2.5GiB"}, &stderr)
	if err != nil || c.Handlers != 4 || c.SlowHandler != time.Millisecond || c.Mode() != ModeStreamingList || c.Timeout != 5*time.Minute ||
		c.MemoryLimit != 5<<29 {
		t.Fatalf("ParseFlags = %+v, %v", c, err)
	}
	for _, bad := range [][]string{
		{},                                   // no server
		{"-server", "x", "-kubeconfig", "y"}, // both
		{"-server", "x", "-resource", "nodes"},
		{"-server", "x", "-scenario", "watch", "-events", "1"},
		{"-server", "x", "-scenario", "fanout", "-events", "5", "-handlers", "1", "-slow-handler", "1ms"},
		{"-server", "x", "-handlers", "3"}, // sync
		{"-server", "x", "-shards", "2", "-shard", "2"},
		{"-server", "x", "-shard", "1"}, // without -shards
		{"-server", "x", "-shards", "-1"},
		{"-server", "x", "-memory-limit", "lots"},
	} {
		if _, err := ParseFlags(bad, &stderr); err == nil {
			t.Errorf("ParseFlags(%q): no error", bad)
		}
	}
}

func TestShardFlags(t *testing.T) {
	c, err := ParseFlags([]string{"-server", "http://127.0.0.1:1", "-shards", "4", "-shard", "3"}, io.Discard)
	if err != nil || c.Shards != 4 || c.Shard != 3 {
		t.Fatalf("ParseFlags = %+v, %v", c, err)
	}
	// An engine that cannot shard is refused before it is built.
	c.MemoryLimit = 3 << 30
	res, err := Begin().Measure(c, unsharded{})
	if err == nil || !strings.Contains(err.Error(), "-shards") || res.Shards != 4 || res.Shard != 3 || res.MemoryLimitBytes != 3<<30 {
		t.Errorf("Measure of an engine without shards: %+v, %v", res, err)
	}
}

// unsharded is an Engine that is no ShardedEngine; Build must not be reached.
type unsharded struct{ Engine }

func (unsharded) Name(*Config) string { return "other" }
