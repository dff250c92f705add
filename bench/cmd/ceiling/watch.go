package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/kinformer/kinformer/bench/measure"
)

// readWatch reads o.Events watch events from the list's resourceVersion on, and
// times it: mode "frame" reads with a 1 MiB buffer and splits frames on '\n' (what any
// client must at least do); "tokenize" runs encoding/json's Decoder.Token over every
// event. The server must send at least o.Events events per connection.
func readWatch(ctx context.Context, o options, mode string) (result, error) {
	o.defaults()
	res := result{Mode: mode}
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
