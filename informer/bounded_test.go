package informer

import (
	"context"
	"fmt"
	"io"
	"maps"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/memtest"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// TestStuckHandlerKeepsMemoryFlat feeds a million updates of a few hundred objects
// through an informer whose only handler blocks on its first notification until the
// end. The handler's buffer must stay within its size plus one coalesced entry per
// object, the live heap once everything is processed must be about what it was after
// the first 10,000 events (nothing grows with the number of events), and once released
// the handler must receive the final state of every object.
//
// The race detector makes each event about ten times slower: under -race the test runs
// 100,000 events, which show the same plateau, and the full million runs without it.
func TestStuckHandlerKeepsMemoryFlat(t *testing.T) {
	const objects, bufferSize, measureAt = 300, 64, 10_000
	events := 1_000_000
	if raceEnabled() {
		events = 100_000
	}
	if testing.Short() {
		events = 50_000
	}
	leakcheck.Check(t)

	src := newChurn(objects, events, measureAt)
	inf := mustNew(t, src, Options[*object.Pod]{Name: "pods"})
	h := newStuckHandler()
	reg, err := inf.AddEventHandler(h, HandlerOptions{BufferSize: bufferSize})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { inf.Run(ctx); close(stopped) }()
	defer func() {
		h.release()
		cancel()
		<-stopped
	}()

	// Sample the handler's backlog and the queue until the informer has applied every
	// event up to n.
	var maxDepth, maxQueued int
	start := time.Now()
	processed := func(n int) {
		t.Helper()
		last := src.final(n)
		testwait.Every(time.Millisecond).Eventually(t, 2*time.Minute, func() bool {
			depth, _, _ := reg.l.depth(inf.stampOf(time.Now()))
			maxDepth, maxQueued = max(maxDepth, depth), max(maxQueued, inf.fifo.Len())
			return inf.fifo.Len() == 0 && maps.Equal(cacheRVs(inf), last)
		}, "waiting for the informer to apply %d events", n)
	}

	processed(measureAt)
	early := memtest.AfterGC()
	src.resume()
	processed(events)
	late := memtest.AfterGC()
	elapsed := time.Since(start)

	depth, _, coalesced := reg.l.depth(inf.stampOf(time.Now()))
	t.Logf("%d events over %d objects in %v; handler stuck on its first notification", events, objects, elapsed.Round(time.Millisecond))
	t.Logf("live heap after GC: %.2f MiB after %d events, %.2f MiB after %d (in use: %.2f → %.2f MiB)",
		mib(early.HeapAlloc), measureAt, mib(late.HeapAlloc), events, mib(early.HeapInuse), mib(late.HeapInuse))
	t.Logf("handler buffer: depth %d at most (now %d; bound %d = buffer %d + objects %d), %d notifications coalesced; FIFO backlog at most %d",
		maxDepth, depth, bufferSize+objects, bufferSize, objects, coalesced, maxQueued)
	if maxDepth > bufferSize+objects {
		t.Errorf("the handler's backlog reached %d, over its buffer %d plus one entry per object (%d)", maxDepth, bufferSize, objects)
	}
	// What may differ between the two points is noise (a decoder buffer, a map that grew
	// in between); what must not is anything per event: 990,000 retained objects would
	// be hundreds of MiB.
	const slack = 2 << 20
	if late.HeapAlloc > early.HeapAlloc+slack {
		t.Errorf("the live heap grew from %.2f to %.2f MiB between event %d and event %d", mib(early.HeapAlloc), mib(late.HeapAlloc), measureAt, events)
	}

	h.release()
	want := src.final(events)
	testwait.Eventually(t, time.Minute, func() bool { return maps.Equal(h.view(), want) },
		"the released handler did not reach the final state: %d of %d objects at it",
		testwait.Lazy(func() any { return countEqual(h.view(), want) }), len(want))
	t.Logf("released, the handler caught up in %d calls", h.calls())
}

// raceEnabled reports whether the test binary was built with -race.
func raceEnabled() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

func cacheRVs(inf *Informer[*object.Pod]) map[string]string {
	out := map[string]string{}
	for _, p := range inf.Cache().List() {
		out[object.Key(p)] = p.ResourceVersion
	}
	return out
}

func countEqual(got, want map[string]string) int {
	n := 0
	for k, v := range want {
		if got[k] == v {
			n++
		}
	}
	return n
}

// stuckHandler blocks on its first notification until released, then keeps each
// object's last resourceVersion it was told.
type stuckHandler struct {
	released chan struct{}
	once     sync.Once

	mu sync.Mutex
	rv map[string]string
	n  int
}

func newStuckHandler() *stuckHandler {
	return &stuckHandler{released: make(chan struct{}), rv: map[string]string{}}
}

func (h *stuckHandler) release() { h.once.Do(func() { close(h.released) }) }

func (h *stuckHandler) record(p *object.Pod, present bool) {
	<-h.released
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n++
	if present {
		h.rv[object.Key(p)] = p.ResourceVersion
	} else {
		delete(h.rv, object.Key(p))
	}
}

func (h *stuckHandler) OnAdd(p *object.Pod, _ bool)    { h.record(p, true) }
func (h *stuckHandler) OnUpdate(_, p *object.Pod)      { h.record(p, true) }
func (h *stuckHandler) OnDelete(p *object.Pod, _ bool) { h.record(p, false) }

func (h *stuckHandler) view() map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.rv)
}

func (h *stuckHandler) calls() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

// churn is a ListerWatcher of `objects` pods whose one watch streams `events` updates,
// round robin, generated as they are read: event i sets pod i%objects to resourceVersion
// i+2. The stream pauses before event `pauseAt` until resume, and after the last event
// stays open, silent, until the informer stops.
type churn struct {
	objects, events, pauseAt int
	resumed                  chan struct{}
	resumeOnce               sync.Once
}

func newChurn(objects, events, pauseAt int) *churn {
	return &churn{objects: objects, events: events, pauseAt: pauseAt, resumed: make(chan struct{})}
}

func (c *churn) resume() { c.resumeOnce.Do(func() { close(c.resumed) }) }

func (c *churn) pod(i int, rv int) *object.Pod {
	name := fmt.Sprint("p", i)
	return &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: "ns", Name: name, UID: "uid-" + name, ResourceVersion: fmt.Sprint(rv)}}
}

// final is every object's key → resourceVersion once the first n events are applied.
func (c *churn) final(n int) map[string]string {
	out := map[string]string{}
	for i := range c.objects {
		out[object.KeyFor("ns", fmt.Sprint("p", i))] = "1"
	}
	for i := max(0, n-c.objects); i < n; i++ {
		out[object.KeyFor("ns", fmt.Sprint("p", i%c.objects))] = fmt.Sprint(i + 2)
	}
	return out
}

func (c *churn) List(context.Context, listwatch.ListOptions) (*object.List[*object.Pod], error) {
	l := &object.List[*object.Pod]{ListMeta: object.ListMeta{ResourceVersion: "1"}}
	for i := range c.objects {
		l.Items = append(l.Items, c.pod(i, 1))
	}
	return l, nil
}

// Watch streams the events once; a later watch (there is none unless the stream fails)
// waits for the end.
func (c *churn) Watch(ctx context.Context, opts listwatch.WatchOptions) (listwatch.Stream[*object.Pod], error) {
	if opts.ResourceVersion != "1" {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return listwatch.NewWatchFromReader[*object.Pod](ctx, &churnStream{c: c, closed: make(chan struct{})}, opts), nil
}

// churnStream writes churn's events into the reader's buffer as they are asked for.
type churnStream struct {
	c       *churn
	next    int    // the next event to write
	pending []byte // the rest of an event that did not fit the last read
	closed  chan struct{}
	once    sync.Once
}

func (s *churnStream) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(s.pending) == 0 {
			if s.next == s.c.pauseAt || s.next == s.c.events {
				if n > 0 {
					return n, nil // hand over what is written before waiting
				}
				if err := s.wait(); err != nil {
					return 0, err
				}
			}
			i := s.next
			s.next++
			s.pending = fmt.Appendf(s.pending[:0], `{"type":"MODIFIED","object":{"metadata":{"name":"p%d","namespace":"ns","uid":"uid-p%d","resourceVersion":"%d"}}}`+"\n",
				i%s.c.objects, i%s.c.objects, i+2)
		}
		m := copy(p[n:], s.pending)
		s.pending = s.pending[m:]
		n += m
	}
	return n, nil
}

// wait blocks at the pause until resume, and at the end until Close.
func (s *churnStream) wait() error {
	resumed := s.c.resumed
	if s.next == s.c.events {
		resumed = nil
	}
	select {
	case <-resumed:
		return nil
	case <-s.closed:
		return io.EOF
	}
}

func (s *churnStream) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}
