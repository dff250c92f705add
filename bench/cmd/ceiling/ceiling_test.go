package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/bench/internal/streamserver"
	"github.com/kinformer/kinformer/bench/measure"
)

// start runs a stream server for one test and returns it with its URL.
func start(t testing.TB, o streamserver.Options) (*streamserver.Server, string) {
	t.Helper()
	s, err := streamserver.New(o)
	if err != nil {
		t.Fatal(err)
	}
	u, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, u
}

func TestCeiling(t *testing.T) {
	s, u := start(t, streamserver.Options{Objects: 700})
	o := options{URL: u, Events: 3000, Limit: 300}
	for _, mode := range []string{"frame", "tokenize"} {
		r, err := readWatch(context.Background(), o, mode)
		if err != nil || r.Events != 3000 || r.Bytes < 3000*3500 || r.EventsPerSec <= 0 {
			t.Fatalf("%s: %v %+v", mode, err, r)
		}
		l, err := readList(context.Background(), o, mode)
		if err != nil || l.Objects != int64(s.Len()) || l.Pages != 3 || l.Bytes < 700*3500 {
			t.Fatalf("list-%s: %v %+v", mode, err, l)
		}
		t.Logf("%+v\n%+v", r, l)
	}
}

func TestCeilingLatency(t *testing.T) {
	_, u := start(t, streamserver.Options{Objects: 50, WatchEvents: 300, Rate: 3000})
	r, err := readWatch(context.Background(), options{URL: u, Events: 300, Latency: true}, "frame")
	if err != nil || r.Events != 300 {
		t.Fatalf("%v %+v", err, r)
	}
	if r.LatencyP50US <= 0 || r.LatencyP50US > r.LatencyP99US || r.LatencyP99US > r.LatencyP999US || r.LatencyP999US > 1e6 {
		t.Errorf("implausible percentiles: %+v", r)
	}
}

// A frame split over reads is timed from the read that completes it, and its stamp is
// found across the split.
func TestLatenciesAcrossReads(t *testing.T) {
	l := newLatencies(4, false)
	frame := []byte(`{"type":"MODIFIED","object":{"metadata":{"annotations":{"` + measure.SentAnnotation + `":"0000000000000001000"}}}}`)
	chunks := [][]byte{frame[:20], frame[20:70], append(frame[70:len(frame):len(frame)], '\n')}
	for i, c := range chunks {
		l.now = int64(5000 + i)
		if j := bytes.IndexByte(c, '\n'); j >= 0 {
			l.frameEnd(c[:j])
		} else {
			l.rest(c)
		}
	}
	if diff := cmp.Diff([]int64{5002 - 1000}, l.samples); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
	if len(l.partial) != 0 {
		t.Errorf("partial frame left: %q", l.partial)
	}
}

// BenchmarkWatchLoopback is one full-speed watch connection over loopback HTTP, read in
// mode frame (the client shares the CPU with the server).
//
//	go test -run - -bench Loopback -benchtime 500000x ./bench/cmd/ceiling/
func BenchmarkWatchLoopback(b *testing.B) {
	_, u := start(b, streamserver.Options{Objects: 10000})
	b.ResetTimer()
	r, err := readWatch(context.Background(), options{URL: u, Events: b.N}, "frame")
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.SetBytes(r.Bytes / r.Events)
	b.ReportMetric(r.EventsPerSec, "events/s")
}

// startProtobuf runs a stream server of o's objects that serves protobuf too: it reads
// their names and resourceVersions from a JSON server of the same objects and writes a
// -protobuf-objects file of stand-in messages (metadata with the name, resourceVersion
// and the zero stamp, and an opaque spec), as pbprep would write k8s.io/api's.
func startProtobuf(t testing.TB, o streamserver.Options) string {
	t.Helper()
	_, u := start(t, o)
	resp, err := http.Get(u + "/api/v1/namespaces/bench/pods")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Items []struct {
			Metadata struct{ Name, Namespace, ResourceVersion string }
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	field := func(b []byte, num int, v []byte) []byte {
		b = binary.AppendUvarint(append(b, byte(num<<3|2)), uint64(len(v)))
		return append(b, v...)
	}
	file := streamserver.ProtobufFileHeader("Pod", len(list.Items))
	for _, it := range list.Items {
		m := it.Metadata
		stamp := field(field(nil, 1, []byte(measure.SentAnnotation)), 2, []byte("0000000000000000000"))
		meta := field(field(field(field(nil, 1, []byte(m.Name)), 3, []byte(m.Namespace)), 6, []byte(m.ResourceVersion)), 12, stamp)
		msg := field(field(nil, 1, meta), 2, bytes.Repeat([]byte("spec "), 200))
		file = streamserver.AppendProtobufRecord(file, msg)
	}
	o.ProtobufObjects = filepath.Join(t.TempDir(), "objects.pb")
	if err := os.WriteFile(o.ProtobufObjects, file, 0o644); err != nil {
		t.Fatal(err)
	}
	_, u = start(t, o)
	return u
}

// With -protobuf the ceiling frames the protobuf watch by its length prefixes and the
// list by its items' (finding continue in the ListMeta), times the stamped events, and
// refuses what it cannot read in protobuf.
func TestCeilingProtobuf(t *testing.T) {
	u := startProtobuf(t, streamserver.Options{Objects: 700})
	o := options{URL: u, Events: 3000, Limit: 300, Protobuf: true}
	r, err := readWatch(context.Background(), o, "frame")
	if err != nil || r.Events != 3000 || r.Bytes < 3000*1000 || r.EventsPerSec <= 0 || !r.Protobuf {
		t.Fatalf("frame: %v %+v", err, r)
	}
	if r.CPUSeconds <= 0 || r.CPUSecondsPerKEvent != r.CPUSeconds/3 {
		t.Errorf("CPU %v s, %v s per 1k events", r.CPUSeconds, r.CPUSecondsPerKEvent)
	}
	l, err := readList(context.Background(), o, "frame")
	if err != nil || l.Objects != 700 || l.Pages != 3 || l.Bytes < 700*1000 {
		t.Fatalf("list-frame: %v %+v", err, l)
	}
	one, err := readList(context.Background(), options{URL: u, Limit: -1, Protobuf: true}, "frame")
	if err != nil || one.Objects != 700 || one.Pages != 1 {
		t.Fatalf("list-frame in one page: %v %+v", err, one)
	}
	for _, mode := range []string{"tokenize"} {
		if _, err := readWatch(context.Background(), o, mode); err == nil {
			t.Errorf("watch %s in protobuf: no error", mode)
		}
		if _, err := readList(context.Background(), o, mode); err == nil {
			t.Errorf("list %s in protobuf: no error", mode)
		}
	}
	_, plain := start(t, streamserver.Options{Objects: 10})
	if _, err := readWatch(context.Background(), options{URL: plain, Events: 5, Protobuf: true}, "frame"); err == nil || !strings.Contains(err.Error(), "protobuf") {
		t.Errorf("protobuf from a server without -protobuf-objects: %v", err)
	}
}

func TestCeilingProtobufLatency(t *testing.T) {
	u := startProtobuf(t, streamserver.Options{Objects: 50, WatchEvents: 300, Rate: 3000})
	r, err := readWatch(context.Background(), options{URL: u, Events: 300, Latency: true, Protobuf: true}, "frame")
	if err != nil || r.Events != 300 {
		t.Fatalf("%v %+v", err, r)
	}
	if r.LatencyP50US <= 0 || r.LatencyP50US > r.LatencyP99US || r.LatencyP99US > r.LatencyP999US || r.LatencyP999US > 1e6 {
		t.Errorf("implausible percentiles: %+v", r)
	}
}

// A protobuf frame split over reads, and one larger than the read buffer, are framed
// whole and timed from the read that completes them.
func TestProtobufFramesAcrossReads(t *testing.T) {
	l := newLatencies(3, true)
	stamp := func(ns string) []byte {
		e := append([]byte{0x0a, byte(len(measure.SentAnnotation))}, measure.SentAnnotation...)
		return append(append(e, 0x12, 19), ns...)
	}
	frames := [][]byte{
		append([]byte("small "), stamp("0000000000000001000")...),
		append(bytes.Repeat([]byte{'x'}, 3<<20), stamp("0000000000000002000")...), // larger than the buffer
		[]byte("no stamp"),
	}
	var stream []byte
	for _, f := range frames {
		stream = binary.BigEndian.AppendUint32(stream, uint32(len(f)))
		stream = append(stream, f...)
	}
	var res result
	if err := frameProtobufWatch(iotest.HalfReader(bytes.NewReader(stream)), 3, l, &res); err != nil {
		t.Fatal(err)
	}
	if res.Events != 3 || res.Bytes != int64(len(stream)) || len(l.samples) != 2 {
		t.Errorf("%d events, %d of %d bytes, %d samples", res.Events, res.Bytes, len(stream), len(l.samples))
	}
	res = result{}
	if err := frameProtobufWatch(bytes.NewReader(stream[:len(stream)-1]), 3, nil, &res); err == nil || res.Events != 2 {
		t.Errorf("a truncated stream: %d events, %v", res.Events, err)
	}
}
