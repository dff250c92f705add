package streamserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/kinformer/kinformer/bench/measure"
)

// CeilingOptions say what the ceiling client reads.
type CeilingOptions struct {
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

func (o *CeilingOptions) defaults() {
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

// CeilingResult is one measurement, printed as one JSON line.
type CeilingResult struct {
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

func (r *CeilingResult) finish(elapsed time.Duration) {
	r.Seconds = elapsed.Seconds()
	if r.Seconds > 0 {
		r.EventsPerSec = float64(r.Events) / r.Seconds
		r.ObjectsPerSec = float64(r.Objects) / r.Seconds
		r.MBPerSec = float64(r.Bytes) / 1e6 / r.Seconds
	}
}

func (o *CeilingOptions) path() string {
	if o.Namespace == "-" {
		return o.URL + "/api/v1/" + o.Resource
	}
	return o.URL + "/api/v1/namespaces/" + o.Namespace + "/" + o.Resource
}

func (o *CeilingOptions) get(ctx context.Context, q url.Values, list bool) (*http.Response, error) {
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

// CeilingWatch reads o.Events watch events from the list's resourceVersion on, and
// times it: mode "frame" reads with a 1 MiB buffer and splits frames on '\n' (what any
// client must at least do); "tokenize" runs encoding/json's Decoder.Token over every
// event. The server must send at least o.Events events per connection.
func CeilingWatch(ctx context.Context, o CeilingOptions, mode string) (CeilingResult, error) {
	o.defaults()
	res := CeilingResult{Mode: mode}
	rv, err := o.listRV(ctx)
	if err != nil {
		return res, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	resp, err := o.get(ctx, url.Values{"watch": {"1"}, "resourceVersion": {rv}}, false)
	if err != nil {
		return res, err
	}
	defer resp.Body.Close()
	switch mode {
	case "frame":
		buf := make([]byte, 1<<20)
		var lat *latencies
		if o.Latency {
			lat = newLatencies(o.Events)
		}
	read:
		for {
			n, err := resp.Body.Read(buf)
			data := buf[:n]
			lat.read()
			for len(data) > 0 {
				i := bytes.IndexByte(data, '\n')
				if i < 0 {
					lat.rest(data)
					res.Bytes += int64(len(data))
					break
				}
				lat.frameEnd(data[:i])
				res.Events++
				res.Bytes += int64(i + 1)
				data = data[i+1:]
				if res.Events == int64(o.Events) {
					break read
				}
			}
			if err != nil {
				return res, fmt.Errorf("after %d events: %w", res.Events, err)
			}
		}
		if lat != nil {
			if len(lat.samples) == 0 {
				return res, fmt.Errorf("no event carried the %s annotation (is the server's -rate set?)", measure.SentAnnotation)
			}
			p := measure.Percentiles(lat.samples, 0.50, 0.99, 0.999)
			res.LatencyP50US, res.LatencyP99US, res.LatencyP999US = float64(p[0])/1e3, float64(p[1])/1e3, float64(p[2])/1e3
		}
	case "tokenize":
		dec := json.NewDecoder(resp.Body)
		for res.Events < int64(o.Events) {
			if err := skipValue(dec); err != nil {
				return res, fmt.Errorf("after %d events: %w", res.Events, err)
			}
			res.Events++
		}
		res.Bytes = dec.InputOffset()
	default:
		return res, fmt.Errorf("unknown mode %q (frame or tokenize)", mode)
	}
	res.finish(time.Since(start))
	return res, nil
}

// latencies collects the floor's samples. Its methods do nothing on a nil receiver.
type latencies struct {
	samples []int64 // ns
	now     int64   // when the last read returned
	partial []byte  // the start of a frame an earlier read brought
	key     []byte  // the stamp annotation's member name, as it appears in a frame
}

func newLatencies(events int) *latencies {
	return &latencies{samples: make([]int64, 0, events), key: []byte(`"` + measure.SentAnnotation + `":"`)}
}

// read notes that a read returned now.
func (l *latencies) read() {
	if l != nil {
		l.now = time.Now().UnixNano()
	}
}

// rest keeps the start of a frame that a later read completes.
func (l *latencies) rest(data []byte) {
	if l != nil {
		l.partial = append(l.partial, data...)
	}
}

// frameEnd takes the sample of the frame whose last part (up to its newline) is tail.
func (l *latencies) frameEnd(tail []byte) {
	if l == nil {
		return
	}
	frame := tail
	if len(l.partial) > 0 {
		frame = append(l.partial, tail...)
		l.partial = l.partial[:0]
	}
	i := bytes.Index(frame, l.key)
	if i < 0 || len(frame) < i+len(l.key)+19 {
		return
	}
	sent, err := strconv.ParseInt(string(frame[i+len(l.key):i+len(l.key)+19]), 10, 64)
	if err == nil && sent > 0 {
		l.samples = append(l.samples, l.now-sent)
	}
}

func (o *CeilingOptions) listRV(ctx context.Context) (string, error) {
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

// skipValue reads one JSON value token by token.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

// CeilingList times reading the whole list, page by page (o.Limit objects a page):
// mode "frame" reads each body with a 1 MiB buffer and finds the items' boundaries with
// a byte scanner that tracks strings and nesting; "tokenize" runs Decoder.Token over
// every item.
func CeilingList(ctx context.Context, o CeilingOptions, mode string) (CeilingResult, error) {
	o.defaults()
	res := CeilingResult{Mode: "list-" + mode}
	if mode != "frame" && mode != "tokenize" {
		return res, fmt.Errorf("unknown mode %q (frame or tokenize)", mode)
	}
	start := time.Now()
	buf := make([]byte, 1<<20)
	cont := ""
	for {
		q := url.Values{}
		if o.Limit > 0 {
			q.Set("limit", strconv.Itoa(o.Limit))
		}
		if cont != "" {
			q.Set("continue", cont)
		}
		resp, err := o.get(ctx, q, true)
		if err != nil {
			return res, err
		}
		var n int64
		if mode == "frame" {
			n, cont, err = frameList(resp.Body, buf, &res)
		} else {
			n, cont, err = tokenizeList(resp.Body, &res)
		}
		resp.Body.Close()
		if err != nil {
			return res, fmt.Errorf("page %d: %w", res.Pages+1, err)
		}
		res.Bytes += n
		res.Pages++
		if cont == "" {
			break
		}
	}
	res.finish(time.Since(start))
	return res, nil
}

// frameList reads a list body, counting the items (objects closed at depth 3: the list,
// its items array, the item) and taking metadata.continue from the head.
func frameList(body io.Reader, buf []byte, res *CeilingResult) (n int64, cont string, err error) {
	var head []byte
	depth, inStr, esc := 0, false, false
	for {
		m, rerr := body.Read(buf)
		data := buf[:m]
		if len(head) < 4096 {
			head = append(head, data[:min(len(data), 4096-len(head))]...)
		}
		n += int64(m)
		for i := 0; i < len(data); i++ {
			c := data[i]
			if inStr {
				if esc { // the escaped byte
					esc = false
					continue
				}
				// Skip to the next quote or backslash.
				j := bytes.IndexAny(data[i:], `"\`)
				if j < 0 {
					break // the rest of the read is inside the string
				}
				i += j
				if data[i] == '\\' {
					esc = true
				} else {
					inStr = false
				}
				continue
			}
			switch c {
			case '"':
				inStr = true
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 2 && c == '}' {
					res.Objects++
				}
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return n, "", rerr
		}
	}
	if depth != 0 || inStr {
		return n, "", errors.New("truncated list body")
	}
	const key = `"continue":"`
	if i := bytes.Index(head, []byte(key)); i >= 0 {
		rest := head[i+len(key):]
		if j := bytes.IndexByte(rest, '"'); j >= 0 {
			cont = string(rest[:j])
		}
	}
	return n, cont, nil
}

// tokenizeList runs Token over a list body: the metadata is decoded (for continue), every
// item is tokenized.
func tokenizeList(body io.Reader, res *CeilingResult) (n int64, cont string, err error) {
	dec := json.NewDecoder(body)
	if _, err := dec.Token(); err != nil { // {
		return 0, "", err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return 0, "", err
		}
		switch tok {
		case "metadata":
			var md struct {
				Continue string `json:"continue"`
			}
			if err := dec.Decode(&md); err != nil {
				return 0, "", err
			}
			cont = md.Continue
		case "items":
			if _, err := dec.Token(); err != nil { // [
				return 0, "", err
			}
			for dec.More() {
				if err := skipValue(dec); err != nil {
					return 0, "", err
				}
				res.Objects++
			}
			if _, err := dec.Token(); err != nil { // ]
				return 0, "", err
			}
		default:
			if err := skipValue(dec); err != nil {
				return 0, "", err
			}
		}
	}
	if _, err := dec.Token(); err != nil { // }
		return 0, "", err
	}
	return dec.InputOffset(), cont, nil
}
