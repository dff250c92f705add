package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
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

// result is one measurement, printed as one JSON line.
type result struct {
	Mode          string  `json:"mode"` // frame, tokenize, list-frame, list-tokenize
	Events        int64   `json:"events,omitempty"`
	Objects       int64   `json:"objects,omitempty"`
	Pages         int     `json:"pages,omitempty"`
	Bytes         int64   `json:"bytes"`
	Seconds       float64 `json:"seconds"`
	EventsPerSec  float64 `json:"events_per_sec,omitempty"`
	ObjectsPerSec float64 `json:"objects_per_sec,omitempty"`
	MBPerSec      float64 `json:"mb_per_sec"` // 10^6 bytes
	// With Latency: the stamped events' percentiles, in µs.
	LatencyP50US  float64 `json:"latency_p50_us,omitempty"`
	LatencyP99US  float64 `json:"latency_p99_us,omitempty"`
	LatencyP999US float64 `json:"latency_p999_us,omitempty"`
}

func (r *result) finish(elapsed time.Duration) {
	r.Seconds = elapsed.Seconds()
	if r.Seconds > 0 {
		r.EventsPerSec = float64(r.Events) / r.Seconds
		r.ObjectsPerSec = float64(r.Objects) / r.Seconds
		r.MBPerSec = float64(r.Bytes) / 1e6 / r.Seconds
	}
}

func (o *options) path() string {
	if o.Namespace == "-" {
		return o.URL + "/api/v1/" + o.Resource
	}
	return o.URL + "/api/v1/namespaces/" + o.Namespace + "/" + o.Resource
}

func (o *options) get(ctx context.Context, q url.Values, list bool) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.path()+"?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if o.MetadataOnly {
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
	return resp, nil
}

func (o *options) listRV(ctx context.Context) (string, error) {
	resp, err := o.get(ctx, url.Values{"limit": {"1"}}, true)
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
