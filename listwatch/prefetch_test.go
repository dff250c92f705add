package listwatch

import (
	"context"
	"errors"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"weak"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/object"
)

func podEvent(name string) string {
	return `{"type":"MODIFIED","object":{"metadata":{"name":"` + name + `","namespace":"ns","resourceVersion":"7"}}}` + "\n"
}

// Frames already read go to the consumer together, and Buffered says so until the last;
// the events are those read on one goroutine, in order.
func TestPrefetchHandsOverWhatIsBuffered(t *testing.T) {
	leakcheck.Check(t)
	var stream strings.Builder
	var want []string
	for i := range 10 {
		name := string(rune('a' + i))
		stream.WriteString(podEvent(name))
		want = append(want, name)
	}
	w := newWatchFromReader[*object.Pod](context.Background(), io.NopCloser(strings.NewReader(stream.String())), WatchOptions{}, readAhead{on: true, pool: newBatchPool()})
	defer w.Close()
	var got []string
	var buffered []bool
	for {
		ev, err := w.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Object.Name)
		buffered = append(buffered, w.Buffered())
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("events (-want +got):\n%s", d)
	}
	// One read brought them all: every event but the last had another behind it.
	wantBuffered := make([]bool, len(want))
	for i := range len(want) - 1 {
		wantBuffered[i] = true
	}
	if d := cmp.Diff(wantBuffered, buffered); d != "" {
		t.Errorf("Buffered after each event (-want +got):\n%s", d)
	}
}

// A frame waits for no later one: with nothing more on the wire, Next returns what came.
func TestPrefetchDoesNotWaitToFillABatch(t *testing.T) {
	leakcheck.Check(t)
	r, wr := io.Pipe()
	w := newWatchFromReader[*object.Pod](context.Background(), r, WatchOptions{}, readAhead{on: true, pool: newBatchPool()})
	defer w.Close()
	for _, name := range []string{"a", "b"} {
		go func() { _, _ = io.WriteString(wr, podEvent(name)) }()
		ev, err := w.Next()
		if err != nil || ev.Object.Name != name {
			t.Fatalf("Next = %v, %v; want %s", ev.Object, err, name)
		}
		if w.Buffered() {
			t.Errorf("Buffered after %s with nothing more sent", name)
		}
	}
}

// Close from another goroutine ends a Next blocked on a silent connection, and the
// prefetcher's goroutine ends with it. In a synctest bubble, synctest.Wait returns once
// Next waits for a batch and the prefetcher for the pipe, so Close is known to meet a
// blocked Next; a Close that did not end it would leave the bubble deadlocked, and the
// 5 s timer would fire at once.
func TestPrefetchCloseEndsABlockedNext(t *testing.T) {
	leakcheck.Check(t)
	synctest.Test(t, func(t *testing.T) {
		r, wr := io.Pipe()
		defer wr.Close()
		w := newWatchFromReader[*object.Pod](context.Background(), r, WatchOptions{}, readAhead{on: true, pool: newBatchPool()})
		done := make(chan error, 1)
		go func() {
			_, err := w.Next()
			done <- err
		}()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Next returned (%v) on a silent connection before Close", err)
		default:
		}
		w.Close()
		select {
		case err := <-done:
			if err == nil {
				t.Fatal("Next returned no error after Close")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Next still blocked 5s after Close")
		}
	})
}

// endless is a server that never stops sending; it counts what was read of it. With a
// limit, it sends that many bytes and then fails every read, noting that it was asked
// for more (overrun).
type endless struct {
	frame   []byte
	off     int
	read    atomic.Int64
	limit   int64
	overrun atomic.Bool
}

var errOverrun = errors.New("endless: read past the limit")

func (e *endless) Read(p []byte) (int, error) {
	if e.limit > 0 {
		left := e.limit - e.read.Load()
		if left <= 0 {
			e.overrun.Store(true)
			return 0, errOverrun
		}
		p = p[:min(int64(len(p)), left)]
	}
	n := 0
	for n < len(p) {
		c := copy(p[n:], e.frame[e.off:])
		n += c
		e.off = (e.off + c) % len(e.frame)
	}
	e.read.Add(int64(n))
	return n, nil
}

// A consumer that stops taking events stops the reading too: the prefetcher is at most
// a few batches ahead, as the connection's own buffers would be. In a synctest bubble,
// synctest.Wait returns once the prefetcher is durably blocked (the source never is):
// it has read ahead as far as it ever will, and the batches it queued show that it did
// read ahead. A prefetcher with no bound, which would never block, meets the source's
// limit instead: its read fails, it stops, and the test fails.
func TestPrefetchReadsABoundedDistanceAhead(t *testing.T) {
	leakcheck.Check(t)
	synctest.Test(t, func(t *testing.T) {
		src := &endless{frame: []byte(podEvent("a"))}
		// The consumer's batch, batchesInFlight queued, the one being filled, and a read.
		src.limit = int64((batchesInFlight+2)*(maxBatchBytes+len(src.frame)) + readSize)
		w := newWatchFromReader[*object.Pod](context.Background(), io.NopCloser(src), WatchOptions{}, readAhead{on: true, pool: newBatchPool()})
		defer w.Close()
		if _, err := w.Next(); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the prefetcher waits for the consumer, or has stopped at the limit
		if src.overrun.Load() {
			t.Fatalf("asked to read more than %d bytes ahead of a stalled consumer", src.limit)
		}
		if n := len(w.pre.full); n != batchesInFlight {
			t.Errorf("%d batches queued for a stalled consumer, want %d; read %d bytes", n, batchesInFlight, src.read.Load())
		}
	})
}

// A Client's pool lets its batches go once it is idle: an idle Client pins no buffer.
func TestBatchPoolLetsIdleBatchesGo(t *testing.T) {
	p := newBatchPool()
	b := p.get()
	b.buf = append(b.buf, make([]byte, 1<<20)...) // grown for a large object
	kept := weak.Make(b)
	p.put(b)
	b = nil
	runtime.GC()
	runtime.GC()
	if kept.Value() != nil {
		t.Error("the pool still holds a batch after two collections")
	}
	runtime.KeepAlive(p)
}

// A frame the connection has brought only the start of holds back none before it.
func TestPrefetchDoesNotWaitForAPartialFrame(t *testing.T) {
	leakcheck.Check(t)
	r, wr := io.Pipe()
	defer wr.Close()
	w := newWatchFromReader[*object.Pod](context.Background(), r, WatchOptions{}, readAhead{on: true, pool: newBatchPool()})
	defer w.Close()
	b := podEvent("b")
	go func() { _, _ = io.WriteString(wr, podEvent("a")+b[:len(b)/2]) }()
	got := make(chan string, 1)
	go func() {
		ev, err := w.Next()
		if err != nil {
			got <- err.Error()
			return
		}
		got <- ev.Object.Name
	}()
	select {
	case name := <-got:
		if name != "a" {
			t.Fatalf("Next = %s, want a", name)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("event a waited for the rest of event b")
	}
}

// A watch its caller drops without Close still lets its reading goroutine go when its
// context ends, even with a server that never stops sending.
func TestPrefetchEndsWithItsContext(t *testing.T) {
	leakcheck.Check(t)
	ctx, cancel := context.WithCancel(context.Background())
	w := newWatchFromReader[*object.Pod](ctx, io.NopCloser(&endless{frame: []byte(podEvent("a"))}), WatchOptions{}, readAhead{on: true, pool: newBatchPool()})
	if _, err := w.Next(); err != nil {
		t.Fatal(err)
	}
	cancel() // and w is never closed
}

// After Close, Next hands out nothing more of what was read ahead.
func TestPrefetchStopsAtClose(t *testing.T) {
	leakcheck.Check(t)
	w := newWatchFromReader[*object.Pod](context.Background(), io.NopCloser(strings.NewReader(strings.Repeat(podEvent("a"), 10))), WatchOptions{}, readAhead{on: true, pool: newBatchPool()})
	if _, err := w.Next(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if ev, err := w.Next(); err == nil {
		t.Fatalf("Next after Close = %v, want an error", ev.Object.Name)
	}
}

// A busy stream keeps the batches it fills: with no pool at all, reading thousands of
// frames makes no new batch once the first few are made (a pool is emptied by every
// second collection, which a busy stream meets every few thousand events). The stream
// is busy: the consumer takes a batch only once the prefetcher has queued all it may.
func TestPrefetchBusyStreamKeepsItsBatches(t *testing.T) {
	leakcheck.Check(t)
	src := &endless{frame: []byte(podEvent("a"))}
	w := newWatchFromReader[*object.Pod](context.Background(), io.NopCloser(src), WatchOptions{}, readAhead{on: true})
	defer w.Close()
	read := func(n int) {
		for range n {
			if p := w.pre; p.cur == nil || p.i == len(p.cur.spans) {
				for len(p.full) < cap(p.full) {
					runtime.Gosched() // the endless source always has more: it fills up
				}
			}
			if _, err := w.pre.next(); err != nil {
				t.Fatal(err)
			}
		}
	}
	read(1000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const frames = 20 * maxBatchFrames * (batchesInFlight + 2)
	read(frames)
	runtime.ReadMemStats(&after)
	// A new 48 KB batch for every 64 frames would be some 3 MB.
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("reading %d frames of a busy stream allocated %d KB", frames, got>>10)
	}
}

// A batch comes back to the prefetcher's spares only while the stream is busy, and one
// grown for a large object never does; once the stream is quiet or over, the spares go
// back to the pool, so a watch that falls silent keeps no more than the batch it fills.
func TestPrefetchRecycle(t *testing.T) {
	tests := []struct {
		name       string
		queued     int  // batches waiting for the consumer
		ended      bool // the prefetcher returned
		large      bool // the batch grew past busyBatchSize
		wantSpares int  // after a spare was already kept
	}{
		{"busy", 1, false, false, 2},
		{"busy, a large batch", 1, false, true, 1},
		{"quiet", 0, false, false, 0},
		{"over", 1, true, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &prefetcher{full: make(chan *frameBatch, batchesInFlight), spare: make(chan *frameBatch, batchesInFlight), pool: newBatchPool()}
			p.spare <- p.pool.get()
			for range tt.queued {
				p.full <- p.pool.get()
			}
			p.ended.Store(tt.ended)
			b := p.pool.get()
			if tt.large {
				b.buf = make([]byte, 0, 2*busyBatchSize)
			}
			p.recycle(b)
			if got := len(p.spare); got != tt.wantSpares {
				t.Errorf("%d spares kept, want %d", got, tt.wantSpares)
			}
		})
	}
}
