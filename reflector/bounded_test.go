package reflector_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/internal/testrig/simtest"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
)

// stateStore keeps what the reflector told it as key → resourceVersion, for comparing
// with the server.
type stateStore struct {
	mu sync.Mutex
	rv map[string]string
}

func (s *stateStore) set(p *object.Pod, keep bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if keep {
		s.rv[object.Key(p)] = p.ResourceVersion
	} else {
		delete(s.rv, object.Key(p))
	}
}
func (s *stateStore) Add(p *object.Pod)    { s.set(p, true) }
func (s *stateStore) Update(p *object.Pod) { s.set(p, true) }
func (s *stateStore) Delete(p *object.Pod) { s.set(p, false) }
func (s *stateStore) Replace(ps []*object.Pod, _ string) {
	s.mu.Lock()
	s.rv = map[string]string{}
	s.mu.Unlock()
	for _, p := range ps {
		s.set(p, true)
	}
}
func (s *stateStore) snapshot() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.rv)
}

// errorLog keeps the distinct errors a reflector's status went through.
type errorLog struct {
	mu   sync.Mutex
	errs []error
}

func (l *errorLog) add(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil && (len(l.errs) == 0 || l.errs[len(l.errs)-1] != err) {
		l.errs = append(l.errs, err)
	}
}

func (l *errorLog) all() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.errs)
}

func (l *errorLog) find(match func(error) bool) error {
	for _, err := range l.all() {
		if match(err) {
			return err
		}
	}
	return nil
}

// listCounter counts the reflector's lists and relists, and notes when the first relist
// began; the other metrics it ignores.
type listCounter struct {
	mu             sync.Mutex
	lists, relists int
	firstRelist    time.Time
}

func (c *listCounter) List() { c.mu.Lock(); c.lists++; c.mu.Unlock() }
func (c *listCounter) Relist() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.relists == 0 {
		c.firstRelist = time.Now()
	}
	c.relists++
}
func (c *listCounter) Watch()                    {}
func (c *listCounter) Event(listwatch.EventType) {}
func (c *listCounter) ResourceVersion(string)    {}

func (c *listCounter) count() (lists, relists int, firstRelist time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lists, c.relists, c.firstRelist
}

// An object that grows past MaxFrameSize arrives in a watch as a frame the client will
// not read: the stream ends with an error that names the limit and the option, the
// reflector relists at once (the event is lost, so resuming would meet it again), the
// relist fails on the same object and backs off rather than looping, and once the
// object shrinks the next list brings the store back to the server's exact state.
// (That the frame reader's buffer stays within the limit plus one read, however large
// the frame, is checked in listwatch: TestFrameReaderBufferStaysBounded and
// FuzzWatchSplits.)
func TestOversizedObjectRelistsUntilItFits(t *testing.T) {
	for _, ws := range []bool{false, true} {
		t.Run(fmt.Sprint("websocket=", ws), func(t *testing.T) { testOversizedObject(t, ws) })
	}
}

func testOversizedObject(t *testing.T, websocket bool) {
	const limit = 16 << 10
	_, c := simtest.Start(t, apisim.Options{})
	ctx := context.Background()
	info, err := c.Discover(ctx, "pods")
	if err != nil {
		t.Fatal(err)
	}
	pods := listwatch.For[*object.Pod](c, info, "ns")
	for _, name := range []string{"a", "b"} {
		if _, err := pods.Create(ctx, &object.Pod{ObjectMeta: object.ObjectMeta{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	serverState := func() map[string]string {
		l, err := pods.List(ctx, listwatch.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, p := range l.Items {
			out[object.Key(p)] = p.ResourceVersion
		}
		return out
	}

	store, counts := &stateStore{rv: map[string]string{}}, &listCounter{}
	clk := clock.NewFake(time.Unix(1000, 0)) // backoffs end when the test steps it
	r := reflector.New[*object.Pod](pods, store, reflector.Options{Name: "pods", MaxFrameSize: limit, WebSocket: websocket,
		Metrics: counts, Clock: clk, Backoff: reflector.Backoff{Initial: 50 * time.Millisecond, Max: 200 * time.Millisecond, Jitter: -1}})
	var seen errorLog
	r.OnStatus(func(s reflector.Status) { seen.add(s.LastError) })
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { r.Run(runCtx); close(done) }()
	defer func() { cancel(); <-done }()
	testwait.Eventually(t, 10*time.Second, func() bool { return r.Status().State == reflector.StateWatching && len(store.snapshot()) == 2 },
		"waiting for the reflector to watch with 2 objects in the store")

	// Grow a to four times the limit.
	lists, _, _ := counts.count()
	grown := time.Now()
	big := fmt.Sprintf(`{"metadata":{"annotations":{"big":%q}}}`, strings.Repeat("x", 4*limit))
	if _, err := pods.Patch(ctx, "a", listwatch.MergePatch, []byte(big), ""); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 10*time.Second, func() bool { _, relists, _ := counts.count(); return relists > 0 }, "waiting for a relist")
	_, _, relisted := counts.count()
	t.Logf("relist %v after the oversized object was written", relisted.Sub(grown).Round(time.Millisecond))

	// The relist meets the object too: it fails, and backs off (50, 100, 200, 200 ms), one
	// list a round, rather than looping. Each wait ends when the test steps the clock
	// past it; the fourth is left under way while the object shrinks.
	var waits []time.Duration
	for round := 1; round <= 4; round++ {
		var s reflector.Status
		testwait.Eventually(t, 10*time.Second, func() bool { var ok bool; s, ok = backingOff(r, clk); return ok },
			"waiting for backoff %d; status %+v", round, testwait.Lazy(func() any { return r.Status() }))
		waits = append(waits, s.Backoff)
		if more, relists, _ := counts.count(); more-lists != round || relists != 1 {
			t.Errorf("backoff %d comes after %d lists since the object grew and %d relists, want %d lists (the relist, a retry a round) and 1 relist",
				round, more-lists, relists, round)
		}
		if round < 4 {
			clk.Step(s.Backoff)
		}
	}
	if d := cmp.Diff([]time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 200 * time.Millisecond}, waits); d != "" {
		t.Errorf("backoffs while the object is too large (-want +got):\n%s", d)
	}
	status := r.Status()
	if !errors.Is(status.LastError, listwatch.ErrFrameTooLarge) {
		t.Fatalf("status error %v does not wrap ErrFrameTooLarge", status.LastError)
	}
	for _, want := range []string{fmt.Sprintf("%d-byte limit", limit), "MaxFrameSize"} {
		if !strings.Contains(status.LastError.Error(), want) {
			t.Errorf("status error %q does not say %q", status.LastError, want)
		}
	}
	var fe *listwatch.FrameError
	if watchErr := seen.find(func(err error) bool { return errors.As(err, &fe) }); watchErr == nil || !errors.Is(watchErr, listwatch.ErrFrameTooLarge) {
		t.Errorf("no watch error wrapping ErrFrameTooLarge in the status history: %v", seen.all())
	} else {
		t.Logf("the watch ended with: %v", watchErr)
	}

	// Changes while the cache is stuck, then the object shrinks: the list after the
	// backoff under way brings the store back to the server's exact state.
	if _, err := pods.Create(ctx, &object.Pod{ObjectMeta: object.ObjectMeta{Name: "c"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Patch(ctx, "a", listwatch.MergePatch, []byte(`{"metadata":{"annotations":{"big":null}}}`), ""); err != nil {
		t.Fatal(err)
	}
	want := serverState()
	clk.Step(waits[len(waits)-1])
	testwait.Eventually(t, 10*time.Second, func() bool { return cmp.Equal(want, store.snapshot()) }, "waiting for the store to equal the server")
	testwait.Eventually(t, 10*time.Second, func() bool { s := r.Status(); return s.State == reflector.StateWatching && s.LastError == nil },
		"waiting for the reflector to watch without an error")
}
