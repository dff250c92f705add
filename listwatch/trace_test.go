package listwatch_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/simtest"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/trace"
)

// tracerLog is a trace.Tracer that samples by a fixed pattern and logs what it is told.
type tracerLog struct {
	mu      sync.Mutex
	pattern string // one byte per Sample call: 'x' samples; past its end, nothing is
	asked   int
	begun   []string // "TYPE key rv"
	marks   [][3]time.Time
}

func (l *tracerLog) Sample() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.asked++
	return l.asked <= len(l.pattern) && l.pattern[l.asked-1] == 'x'
}

func (l *tracerLog) Begin(eventType string, obj object.Object, started, read, decoded time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.begun = append(l.begun, fmt.Sprintf("%s %s %s", eventType, object.Key(obj), obj.Meta().ResourceVersion))
	l.marks = append(l.marks, [3]time.Time{started, read, decoded})
}

func (l *tracerLog) Mark(trace.Stage, object.Object) {}

func frame(typ, name, rv string) string {
	return fmt.Sprintf(`{"type":%q,"object":{"metadata":{"namespace":"ns","name":%q,"resourceVersion":%q}}}`+"\n", typ, name, rv)
}

func drain(t *testing.T, w listwatch.Stream[*object.Pod]) {
	t.Helper()
	defer w.Close()
	for {
		if _, err := w.Next(); err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			return
		}
	}
}

// The watch asks once per frame; a sampled bookmark has nothing to follow and passes its
// turn to the next frame, which is then followed without asking.
func TestWatchSamplesFramesAndPassesBookmarksOn(t *testing.T) {
	stream := frame("BOOKMARK", "", "1") + frame("MODIFIED", "a", "2") + frame("MODIFIED", "b", "3") +
		frame("ADDED", "c", "4") + frame("DELETED", "c", "5")
	log := &tracerLog{pattern: "x.x."}
	drain(t, listwatch.NewWatchFromReader[*object.Pod](context.Background(), io.NopCloser(strings.NewReader(stream)),
		listwatch.WatchOptions{Tracer: log}))
	if d := cmp.Diff([]string{"MODIFIED ns/a 2", "ADDED ns/c 4"}, log.begun); d != "" {
		t.Errorf("followed (-want +got):\n%s", d)
	}
	// Asked before each read: for four of the frames (not the one after the sampled
	// bookmark), and for the read that met the end of the stream.
	if log.asked != 5 {
		t.Errorf("asked %d times, want 5", log.asked)
	}
	for _, m := range log.marks {
		if m[0].IsZero() || m[1].Before(m[0]) || m[2].Before(m[1]) {
			t.Errorf("marks out of order: started %v, read %v, decoded %v", m[0], m[1], m[2])
		}
	}
}

// A streaming list's initial events are the list: none is followed, and sampling starts
// after the initial-events-end bookmark.
func TestWatchFollowsNoInitialEvents(t *testing.T) {
	end := `{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"3","annotations":{"k8s.io/initial-events-end":"true"}}}}` + "\n"
	stream := frame("ADDED", "a", "1") + frame("ADDED", "b", "2") + frame("BOOKMARK", "", "2") + end + frame("MODIFIED", "a", "4")
	log := &tracerLog{pattern: "xxxxx"}
	drain(t, listwatch.NewWatchFromReader[*object.Pod](context.Background(), io.NopCloser(strings.NewReader(stream)),
		listwatch.WatchOptions{Tracer: log, SendInitialEvents: true}))
	if d := cmp.Diff([]string{"MODIFIED ns/a 4"}, log.begun); d != "" {
		t.Errorf("followed (-want +got):\n%s", d)
	}
	if log.asked != 2 {
		t.Errorf("asked %d times, want twice: before the frame after the initial events, and at the end", log.asked)
	}
}

// The read span covers the frame's own bytes arriving (here in two reads 20 ms apart on
// the watch's clock), not the wait for an idle stream before it.
func TestWatchReadSpanIsTheFrames(t *testing.T) {
	leakcheck.Check(t)
	clk := clock.NewFake(time.Unix(1000, 0))
	f := frame("MODIFIED", "a", "2")
	body := &steppedReader{clock: clk, reads: []steppedRead{
		{after: 20 * time.Millisecond, data: f[:10]}, // an idle stream, then the first bytes
		{after: 20 * time.Millisecond, data: f[10:]}, // the rest of the frame trickles in
	}}
	log := &tracerLog{pattern: "x"}
	watch := listwatch.NewWatchFromReader[*object.Pod](context.Background(), io.NopCloser(body), listwatch.WatchOptions{Tracer: log, Clock: clk})
	defer watch.Close()
	if _, err := watch.Next(); err != nil {
		t.Fatal(err)
	}
	firstByte := time.Unix(1000, 0).Add(20 * time.Millisecond)
	if m := log.marks[0]; !m[0].Equal(firstByte) || m[1].Sub(m[0]) != 20*time.Millisecond {
		t.Errorf("Started %v, read span %v; want Started at the first byte (%v), not before it (the idle wait), "+
			"and a read span of the 20 ms between the frame's two halves", m[0], m[1].Sub(m[0]), firstByte)
	}
}

// steppedReader hands out its reads in turn, each after stepping its clock: a stream whose
// bytes arrive at known times, without a goroutine or a sleep.
type steppedReader struct {
	clock *clock.Fake
	reads []steppedRead
}

type steppedRead struct {
	after time.Duration
	data  string
}

func (r *steppedReader) Read(p []byte) (int, error) {
	if len(r.reads) == 0 {
		return 0, io.EOF
	}
	next := &r.reads[0]
	if next.after > 0 {
		r.clock.Step(next.after)
		next.after = 0
	}
	n := copy(p, next.data)
	if next.data = next.data[n:]; next.data == "" {
		r.reads = r.reads[1:]
	}
	return n, nil
}

// Over a websocket, Started is when the message's header is in, and the event is
// followed the same way.
func TestWebSocketWatchIsTraced(t *testing.T) {
	_, c := simtest.Start(t, apisim.Options{})
	r := pods(t, c, "default")
	log := &tracerLog{pattern: "xxxxxxxx"}
	w, err := r.Watch(testwait.Context(t, 20*time.Second), listwatch.WatchOptions{WebSocket: true, Tracer: log})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	p := mustCreate(t, r, "web-1", nil)
	next(t, w)
	log.mu.Lock()
	defer log.mu.Unlock()
	if d := cmp.Diff([]string{"ADDED default/web-1 " + p.ResourceVersion}, log.begun); d != "" {
		t.Errorf("followed (-want +got):\n%s", d)
	}
	if m := log.marks[0]; m[0].IsZero() || m[1].Before(m[0]) || m[2].Before(m[1]) {
		t.Errorf("marks out of order: %v", m)
	}
}
