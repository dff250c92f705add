package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"time"

	"github.com/kinformer/kinformer/bench/measure"
)

// readWatch reads o.Events watch events from the list's resourceVersion on, and
// times it: mode "frame" reads with a 1 MiB buffer and splits frames on '\n' (what any
// client must at least do), or with o.Protobuf on their 4-byte lengths; "tokenize" runs
// encoding/json's Decoder.Token over every event. The server must send at least o.Events
// events per connection.
func readWatch(ctx context.Context, o options, mode string) (result, error) {
	o.defaults()
	res := result{Mode: mode, Protobuf: o.Protobuf}
	if err := o.check(mode); err != nil {
		return res, err
	}
	rv, err := o.listRV(ctx)
	if err != nil {
		return res, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start, cpu := time.Now(), measure.CPUTime()
	resp, err := o.get(ctx, url.Values{"watch": {"1"}, "resourceVersion": {rv}}, false, o.Protobuf)
	if err != nil {
		return res, err
	}
	defer resp.Body.Close()
	var lat *latencies
	if o.Latency && mode == "frame" {
		lat = newLatencies(o.Events, o.Protobuf)
	}
	switch {
	case mode == "frame" && o.Protobuf:
		if err := frameProtobufWatch(resp.Body, o.Events, lat, &res); err != nil {
			return res, err
		}
	case mode == "frame":
		buf := make([]byte, 1<<20)
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
	case mode == "tokenize":
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
	res.finish(time.Since(start), measure.CPUTime()-cpu)
	if lat != nil {
		if len(lat.samples) == 0 {
			return res, fmt.Errorf("no event carried the %s annotation (is the server's -rate set?)", measure.SentAnnotation)
		}
		p := measure.Percentiles(lat.samples, 0.50, 0.99, 0.999)
		res.LatencyP50US, res.LatencyP99US, res.LatencyP999US = float64(p[0])/1e3, float64(p[1])/1e3, float64(p[2])/1e3
	}
	return res, nil
}

// maxProtobufFrame bounds a protobuf watch frame, as a client's frame limit would.
const maxProtobufFrame = 64 << 20

// frameProtobufWatch reads events protobuf watch frames from body with a 1 MiB buffer
// (grown only for a larger frame): a 4-byte big-endian length, then that many bytes of
// WatchEvent, whose boundaries are all that is found. Each whole frame is timed by lat
// from the read that completed it.
func frameProtobufWatch(body io.Reader, events int, lat *latencies, res *result) error {
	buf := make([]byte, 1<<20)
	start, end := 0, 0 // the unread bytes are buf[start:end]
	for {
		switch {
		case start == end:
			start, end = 0, 0
		case end == len(buf):
			end = copy(buf, buf[start:end])
			start = 0
		}
		n, err := body.Read(buf[end:])
		end += n
		lat.read()
		for end-start >= 4 {
			size := int(binary.BigEndian.Uint32(buf[start:]))
			if size > maxProtobufFrame {
				return fmt.Errorf("after %d events: a frame of %d bytes", res.Events, size)
			}
			if end-start-4 < size {
				if 4+size > len(buf) { // a frame larger than the buffer
					grown := make([]byte, 4+size)
					end = copy(grown, buf[start:end])
					buf, start = grown, 0
				}
				break
			}
			lat.frame(buf[start+4 : start+4+size])
			res.Events++
			res.Bytes += int64(4 + size)
			start += 4 + size
			if res.Events == int64(events) {
				return nil
			}
		}
		if err != nil {
			return fmt.Errorf("after %d events: %w", res.Events, err)
		}
	}
}

// latencies collects the floor's samples. Its methods do nothing on a nil receiver.
type latencies struct {
	samples []int64 // ns
	now     int64   // when the last read returned
	partial []byte  // the start of a frame an earlier read brought
	key     []byte  // what precedes the stamp's digits in a frame
}

// stampDigits is the width of the send-time stamp: UnixNano zero-padded.
const stampDigits = 19

// newLatencies collects up to events samples from JSON frames, or with protobuf from
// protobuf ones, where the stamp is an annotations map entry: key (1) the annotation's
// name, value (2) the 19 digits.
func newLatencies(events int, protobuf bool) *latencies {
	key := []byte(`"` + measure.SentAnnotation + `":"`)
	if protobuf {
		key = append([]byte{1<<3 | 2, byte(len(measure.SentAnnotation))}, measure.SentAnnotation...)
		key = append(key, 2<<3|2, stampDigits)
	}
	return &latencies{samples: make([]int64, 0, events), key: key}
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
	l.frame(frame)
}

// frame takes the sample of a whole frame that the last read completed.
func (l *latencies) frame(frame []byte) {
	if l == nil {
		return
	}
	i := bytes.Index(frame, l.key)
	if i < 0 || len(frame) < i+len(l.key)+stampDigits {
		return
	}
	sent, err := strconv.ParseInt(string(frame[i+len(l.key):i+len(l.key)+stampDigits]), 10, 64)
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
