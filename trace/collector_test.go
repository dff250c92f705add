package trace

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/object"
)

var t0 = time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)

func pod(name, rv string) *object.Pod {
	return &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: rv}}
}

// harness is a collector on a fake clock that keeps what it reports.
type harness struct {
	*Collector
	clock *clock.Fake
	mu    sync.Mutex
	got   []Record
}

func newHarness(opts Options) *harness {
	h := &harness{clock: clock.NewFake(t0)}
	opts.Clock = h.clock
	opts.Report = func(r Record) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.got = append(h.got, r)
	}
	h.Collector = NewCollector(opts)
	return h
}

func (h *harness) reported() []Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Record(nil), h.got...)
}

// begin starts following obj as listwatch would, its three marks 1µs apart ending now.
func (h *harness) begin(obj object.Object) {
	now := h.clock.Now()
	h.Begin("MODIFIED", obj, now.Add(-2*time.Microsecond), now.Add(-time.Microsecond), now)
}

// step moves the clock by d, then marks s.
func (h *harness) step(d time.Duration, s Stage, obj object.Object) {
	h.clock.Step(d)
	h.Mark(s, obj)
}

// checkEmpty fails unless nothing is held for any event any more.
func (h *harness) checkEmpty(t *testing.T) {
	t.Helper()
	h.Collector.mu.Lock()
	defer h.Collector.mu.Unlock()
	live := 0
	for _, e := range h.ring {
		if e != nil {
			live++
		}
	}
	if len(h.byObject) != 0 || live != 0 || h.live.Load() != 0 {
		t.Errorf("still held: %d objects, %d ring slots, live count %d", len(h.byObject), live, h.live.Load())
	}
}

func TestEventReportedWithEverySpan(t *testing.T) {
	h := newHarness(Options{Every: 1})
	p := pod("web-1", "1234")
	h.begin(p)
	for i, s := range []Stage{Queued, Stored, Delivered, Enqueued} {
		h.step(time.Duration(i+1)*time.Microsecond, s, p)
	}
	if len(h.reported()) != 0 {
		t.Fatal("reported before its last mark")
	}
	h.clock.Step(20 * time.Millisecond)
	h.MarkKey(Taken, "default/web-1")

	got := h.reported()
	if len(got) != 1 {
		t.Fatalf("reported %d records, want 1", len(got))
	}
	want := "trace MODIFIED default/web-1 rv=1234: read 1.0µs → decode 1.0µs → fifo 1.0µs → store 2.0µs → handler 3.0µs → queue 4.0µs → worker 20.00ms = 20.01ms"
	if s := got[0].String(); s != want {
		t.Errorf("line\n got %s\nwant %s", s, want)
	}
	if got[0].Total() != 20*time.Millisecond+12*time.Microsecond {
		t.Errorf("total %v", got[0].Total())
	}
	h.checkEmpty(t)
	if st := h.Stats(); st.Followed != 1 || st.Reported != 1 || st.Dropped != 0 || st.InFlight != 0 {
		t.Errorf("stats %+v", st)
	}
}

// Marks may come in any order (another Tracer user may mark from racing goroutines): the
// record waits for all of them, keeps each one's own reading, and is reported once.
func TestMarksOutOfOrder(t *testing.T) {
	h := newHarness(Options{Every: 1, Last: Delivered})
	p := pod("web-1", "7")
	h.begin(p)
	h.step(time.Microsecond, Delivered, p) // the last mark first
	h.step(time.Microsecond, Queued, p)
	if len(h.reported()) != 0 {
		t.Fatal("reported with Stored missing")
	}
	h.step(time.Microsecond, Stored, p)
	h.step(time.Microsecond, Stored, p) // a second mark of a stage changes nothing
	got := h.reported()
	if len(got) != 1 {
		t.Fatalf("reported %d records, want 1", len(got))
	}
	r := got[0]
	if r.Span(Queued) != 2*time.Microsecond || r.Span(Stored) != time.Microsecond || r.Span(Delivered) != -2*time.Microsecond {
		t.Errorf("spans fifo %v store %v handler %v: not the readings taken", r.Span(Queued), r.Span(Stored), r.Span(Delivered))
	}
	if !strings.HasSuffix(r.String(), "→ handler -2.0µs = 3.0µs") {
		t.Errorf("line %q: the span after Delivered should be the last", r)
	}
	h.checkEmpty(t)
}

// An event that is not followed costs nothing but the lookup: nothing is kept for it,
// whatever marks it gets, and a followed one is found only in its own state.
func TestUnsampledEventsLeaveNothing(t *testing.T) {
	h := newHarness(Options{Every: 1})
	for i := range 100 {
		p := pod(fmt.Sprint("other-", i), "5")
		for s := Queued; s <= Enqueued; s++ {
			h.Mark(s, p)
		}
		h.MarkKey(Taken, object.Key(p))
	}
	h.checkEmpty(t)

	followed := pod("web-1", "5")
	h.begin(followed)
	h.Mark(Queued, pod("web-1", "6")) // another state of the object: another event
	h.Mark(Queued, pod("web-2", "5")) // another object at the same resourceVersion
	h.Mark(Queued, &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: "kube-system", Name: "web-1", ResourceVersion: "5"}})
	h.Collector.mu.Lock()
	e := h.find(objectID{"default", "web-1"}, "5")
	h.Collector.mu.Unlock()
	if !e.Marks[Queued].IsZero() {
		t.Error("a mark for another event was taken for the followed one")
	}
}

// Events that never reach their last mark (coalesced in a handler's buffer, a relist in
// between, a handler that does not enqueue) are dropped oldest first: what is kept stays
// within MaxInFlight, and a dropped event is never reported, whatever comes later.
func TestEventsThatNeverFinishAreBounded(t *testing.T) {
	h := newHarness(Options{Every: 1, MaxInFlight: 8})
	var pods []*object.Pod
	for i := range 100 {
		p := pod(fmt.Sprint("web-", i), fmt.Sprint(1000+i))
		pods = append(pods, p)
		h.begin(p)
		h.Mark(Queued, p)
		if i%2 == 0 {
			h.Mark(Stored, p) // coalesced after the store: never Delivered
		}
		h.Collector.mu.Lock()
		held := len(h.byObject)
		h.Collector.mu.Unlock()
		if held > 8 {
			t.Fatalf("after %d events, %d held", i+1, held)
		}
	}
	st := h.Stats()
	if st.Followed != 100 || st.Dropped != 92 || st.InFlight != 8 || st.Reported != 0 {
		t.Errorf("stats %+v, want 100 followed, 92 dropped, 8 in flight", st)
	}
	for _, p := range pods[:92] { // dropped: late marks find nothing
		for s := Stored; s <= Enqueued; s++ {
			h.Mark(s, p)
		}
		h.MarkKey(Taken, object.Key(p))
	}
	if n := len(h.reported()); n != 0 {
		t.Errorf("%d dropped events reported", n)
	}
	for _, p := range pods[92:] { // the newest eight finish
		for s := Stored; s <= Enqueued; s++ {
			h.Mark(s, p)
		}
		h.MarkKey(Taken, object.Key(p))
	}
	if n := len(h.reported()); n != 8 {
		t.Errorf("%d of the last 8 events reported", n)
	}
	h.checkEmpty(t)
}

// A worker knows only the key. Taking it serves every followed event of the object that
// is on the workqueue (the queue holds the key once), and none that has not reached it.
func TestMarkKeyTakesEveryEnqueuedEvent(t *testing.T) {
	h := newHarness(Options{Every: 1})
	a, b, c := pod("web-1", "10"), pod("web-1", "11"), pod("web-1", "12")
	for _, p := range []*object.Pod{a, b, c} {
		h.begin(p)
		for s := Queued; s <= Delivered; s++ {
			h.step(time.Microsecond, s, p)
		}
	}
	h.Mark(Enqueued, a)
	h.Mark(Enqueued, b)
	h.MarkKey(Taken, "default/web-2")
	h.MarkKey(Taken, "default/web-1")
	var rvs []string
	for _, r := range h.reported() {
		rvs = append(rvs, r.ResourceVersion)
	}
	if d := cmp.Diff([]string{"10", "11"}, rvs); d != "" {
		t.Errorf("reported (-want +got):\n%s", d)
	}
	if st := h.Stats(); st.InFlight != 1 {
		t.Errorf("in flight %d, want the one not enqueued", st.InFlight)
	}
	h.Mark(Enqueued, c)
	h.MarkKey(Taken, "default/web-1")
	h.checkEmpty(t)

	// A cluster-scoped object's key is its name.
	node := &object.Raw{ObjectMeta: object.ObjectMeta{Name: "node-1", ResourceVersion: "3"}}
	h.begin(node)
	for s := Queued; s <= Enqueued; s++ {
		h.Mark(s, node)
	}
	h.MarkKey(Taken, "node-1")
	if got := h.reported(); len(got) != 4 || got[3].Key() != "node-1" {
		t.Errorf("cluster-scoped object not taken: %v", got)
	}
}

// The same event begun twice (a watch resumed from before it) is followed from the
// second time on, and the first counts as dropped.
func TestBeginAgainStartsOver(t *testing.T) {
	h := newHarness(Options{Every: 1, Last: Stored})
	p := pod("web-1", "3")
	h.begin(p)
	h.step(time.Microsecond, Queued, p)
	h.clock.Step(time.Second)
	h.begin(p)
	h.step(time.Microsecond, Queued, p)
	h.step(time.Microsecond, Stored, p)
	got := h.reported()
	if len(got) != 1 || got[0].Total() != 4*time.Microsecond {
		t.Fatalf("reported %v, want one record of the second delivery", got)
	}
	if st := h.Stats(); st.Followed != 2 || st.Dropped != 1 {
		t.Errorf("stats %+v", st)
	}
	h.checkEmpty(t)
}

func TestSampleEvery(t *testing.T) {
	for _, tt := range []struct {
		every int
		want  string
	}{{1, "xxxxxxx"}, {3, "x..x..x"}, {0, "x......"}} {
		c := NewCollector(Options{Every: tt.every})
		var b strings.Builder
		for range 7 {
			if c.Sample() {
				b.WriteByte('x')
			} else {
				b.WriteByte('.')
			}
		}
		if b.String() != tt.want {
			t.Errorf("every %d: %s, want %s", tt.every, b.String(), tt.want)
		}
	}
}

// The engine marks from a goroutine per stage; under -race, many events crossing them
// at once are each reported once with every mark in order, and nothing is left.
func TestConcurrentStages(t *testing.T) {
	leakcheck.Check(t)
	var mu sync.Mutex
	var got []Record
	c := NewCollector(Options{Every: 1, Report: func(r Record) {
		mu.Lock()
		got = append(got, r)
		mu.Unlock()
	}})
	const events = 500
	stages := []Stage{Queued, Stored, Delivered, Enqueued}
	chans := make([]chan *object.Pod, len(stages)+1)
	for i := range chans {
		chans[i] = make(chan *object.Pod, 16)
	}
	var wg sync.WaitGroup
	for i, s := range stages {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(chans[i+1])
			for p := range chans[i] {
				c.Mark(s, p)
				chans[i+1] <- p
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for p := range chans[len(stages)] {
			c.MarkKey(Taken, object.Key(p))
		}
	}()
	for i := range events {
		p := pod(fmt.Sprint("web-", i%20), fmt.Sprint(i))
		if c.Sample() {
			now := time.Now()
			c.Begin("MODIFIED", p, now, now, now)
		}
		chans[0] <- p
	}
	close(chans[0])
	wg.Wait()
	if len(got) != events {
		t.Fatalf("reported %d of %d events", len(got), events)
	}
	for _, r := range got {
		for s := Read; s <= Taken; s++ {
			if r.Span(s) < 0 {
				t.Fatalf("%s: %s span negative", r, s.Span())
			}
		}
	}
	if st := c.Stats(); st.InFlight != 0 || st.Reported != events {
		t.Errorf("stats %+v", st)
	}
}

func TestShortDurations(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0ns"}, {850, "850ns"}, {3210, "3.2µs"}, {95_400, "95µs"}, {999_600, "1.00ms"},
		{1_254_000, "1.25ms"}, {2_500_000_000, "2.50s"}, {-2000, "-2.0µs"},
	} {
		got := short(tt.d)
		if got != tt.want {
			t.Errorf("short(%v) = %s, want %s", tt.d, got, tt.want)
		}
		back, err := time.ParseDuration(got)
		if err != nil || (back-tt.d).Abs() > tt.d.Abs()/100+time.Microsecond/2 {
			t.Errorf("%s reads back as %v (%v), not about %v", got, back, err, tt.d)
		}
	}
}

func TestStageNames(t *testing.T) {
	var names, spans []string
	for s := Started; s <= Taken+1; s++ {
		names, spans = append(names, s.String()), append(spans, s.Span())
	}
	if d := cmp.Diff("Started Read Decoded Queued Stored Delivered Enqueued Taken Stage(8)", strings.Join(names, " ")); d != "" {
		t.Error(d)
	}
	if d := cmp.Diff(" read decode fifo store handler queue worker ", strings.Join(spans, " ")); d != "" {
		t.Error(d)
	}
}
