package main

import (
	"bytes"
	"context"
	"testing"

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
	l := newLatencies(4)
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
