package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// options say what the ceiling client reads.
type options struct {
	URL       string // the server's base URL
	Resource  string // "pods" (default), "secrets", "configmaps"
	Namespace string // default "bench"; "-" for all namespaces
	Events    int    // watch events to read (default 100,000)
	Limit     int    // list page size (default 500; negative: the whole list in one page)
	// MetadataOnly asks for PartialObjectMetadata.
	MetadataOnly bool
	// Protobuf reads the watch and the list in protobuf (application/vnd.kubernetes.protobuf,
	// which the stream server serves when started with -protobuf-objects): a watch is
	// frames of a 4-byte big-endian length and a WatchEvent message, a list the k8s\x00
	// magic and a runtime.Unknown envelope around the List message. Mode frame only: there
	// is no tokenizer of protobuf short of decoding it.
	Protobuf bool
	// Latency, in mode "frame", also times each event from the send time the server
	// stamped on it to the read that completed its frame: the latency floor of any
	// client on this machine at the server's -rate, with nothing decoded.
	Latency bool
	// Client does the requests (default: a transport without compression).
	Client *http.Client
}

func (o *options) defaults() {
	if o.Resource == "" {
		o.Resource = "pods"
	}
	if o.Namespace == "" {
		o.Namespace = "bench"
	}
	if o.Events == 0 {
		o.Events = 100000
	}
	if o.Limit == 0 {
		o.Limit = 500
	}
	if o.Client == nil {
		o.Client = &http.Client{Transport: &http.Transport{DisableCompression: true}}
	}
}

// check refuses what the options cannot read: protobuf is framed only, and the server
// sends PartialObjectMetadata as JSON.
func (o *options) check(mode string) error {
	switch {
	case o.Protobuf && mode != "frame":
		return fmt.Errorf("mode %q with -protobuf: protobuf is read in mode frame only", mode)
	case o.Protobuf && o.MetadataOnly:
		return errors.New("-protobuf with -metadata-only: PartialObjectMetadata is served as JSON")
	}
	return nil
}

// result is one measurement, printed as one JSON line.
type result struct {
	Mode          string  `json:"mode"` // frame, tokenize, list-frame, list-tokenize
	Protobuf      bool    `json:"protobuf,omitempty"`
	Events        int64   `json:"events,omitempty"`
	Objects       int64   `json:"objects,omitempty"`
	Pages         int     `json:"pages,omitempty"`
	Bytes         int64   `json:"bytes"`
	Seconds       float64 `json:"seconds"`
	EventsPerSec  float64 `json:"events_per_sec,omitempty"`
	ObjectsPerSec float64 `json:"objects_per_sec,omitempty"`
	MBPerSec      float64 `json:"mb_per_sec"` // 10^6 bytes
	// CPUSeconds is this process's CPU time (user + system, getrusage) over the same
	// span as Seconds; CPUSecondsPerKEvent is it per 1,000 watch events, as the runners
	// report theirs.
	CPUSeconds          float64 `json:"cpu_seconds"`
	CPUSecondsPerKEvent float64 `json:"cpu_seconds_per_kevent,omitempty"`
	// With Latency: the stamped events' percentiles, in µs.
	LatencyP50US  float64 `json:"latency_p50_us,omitempty"`
	LatencyP99US  float64 `json:"latency_p99_us,omitempty"`
	LatencyP999US float64 `json:"latency_p999_us,omitempty"`
}

// finish fills in the rates, elapsed and cpu (CPU time used) being the measurement's.
func (r *result) finish(elapsed, cpu time.Duration) {
	r.Seconds = elapsed.Seconds()
	r.CPUSeconds = cpu.Seconds()
	if r.Seconds > 0 {
		r.EventsPerSec = float64(r.Events) / r.Seconds
		r.ObjectsPerSec = float64(r.Objects) / r.Seconds
		r.MBPerSec = float64(r.Bytes) / 1e6 / r.Seconds
	}
	if r.Events > 0 {
		r.CPUSecondsPerKEvent = r.CPUSeconds / (float64(r.Events) / 1000)
	}
}

func (o *options) path() string {
	if o.Namespace == "-" {
		return o.URL + "/api/v1/" + o.Resource
	}
	return o.URL + "/api/v1/namespaces/" + o.Namespace + "/" + o.Resource
}

// Media types of the apiserver's protobuf encoding.
const (
	protobufType      = "application/vnd.kubernetes.protobuf"
	protobufWatchType = protobufType + ";stream=watch"
)

// get does a GET of the resource with q. It asks for protobuf when protobuf is set, and
// fails when the server answers with anything else (a server without -protobuf-objects
// answers in JSON); else JSON, or with o.MetadataOnly PartialObjectMetadata.
func (o *options) get(ctx context.Context, q url.Values, list, protobuf bool) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.path()+"?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if protobuf {
		req.Header.Set("Accept", protobufType)
	} else if o.MetadataOnly {
		as := "PartialObjectMetadata"
		if list {
			as += "List"
		}
		req.Header.Set("Accept", "application/json;as="+as+";g=meta.k8s.io;v=v1")
	}
	resp, err := o.Client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s: %s", req.URL, resp.Status, bytes.TrimSpace(b))
	}
	if ct := resp.Header.Get("Content-Type"); protobuf && !strings.HasPrefix(ct, protobufType) {
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: asked for protobuf, got %q (was the server started with -protobuf-objects?)", req.URL, ct)
	}
	return resp, nil
}

func (o *options) listRV(ctx context.Context) (string, error) {
	resp, err := o.get(ctx, url.Values{"limit": {"1"}}, true, false) // in JSON: not measured
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return "", err
	}
	return list.Metadata.ResourceVersion, nil
}
