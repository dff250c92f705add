package informer

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/trace"
)

// records collects a collector's reports.
type records struct {
	mu  sync.Mutex
	got []trace.Record
}

func (r *records) add(rec trace.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, rec)
}

func (r *records) all() []trace.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]trace.Record(nil), r.got...)
}

// Every watch event, followed from the wire to the handler, passes every mark once and
// in order: the engine takes each mark before the next stage can act on the event.
func TestTracedEventsPassEveryStageInOrder(t *testing.T) {
	e := newEnv(t, apisim.Options{})
	var recs records
	tracer := trace.NewCollector(trace.Options{Every: 1, Last: trace.Delivered, Report: recs.add})
	inf := mustNew(t, e.pods, Options[*object.Pod]{Reflector: fastReflector(), Tracer: tracer})
	reg, _ := inf.AddEventHandler(newRecorder(), HandlerOptions{Tracer: tracer})
	run(t, inf)
	if err := WaitForSync(testwait.Context(t, 10*time.Second), inf, reg); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{} // "TYPE key rv"
	for i := range 5 {
		p := e.create(t, fmt.Sprint("p", i), nil)
		want[fmt.Sprintf("ADDED %s %s", object.Key(p), p.ResourceVersion)] = true
	}
	for i := range 5 {
		p, err := e.pods.Patch(testwait.Context(t, 10*time.Second), fmt.Sprint("p", i), "application/merge-patch+json", []byte(`{"metadata":{"labels":{"v":"2"}}}`), "")
		if err != nil {
			t.Fatal(err)
		}
		want[fmt.Sprintf("MODIFIED %s %s", object.Key(p), p.ResourceVersion)] = true
	}
	testwait.Eventually(t, 10*time.Second, func() bool { return len(recs.all()) >= len(want) }, "waiting for every event reported")
	for _, r := range recs.all() {
		id := fmt.Sprintf("%s %s %s", r.Type, r.Key(), r.ResourceVersion)
		if !want[id] {
			t.Errorf("reported %s: not one of the events, or reported twice", id)
		}
		delete(want, id)
		for s := trace.Read; s <= trace.Delivered; s++ {
			if r.Marks[s].IsZero() || r.Span(s) < 0 {
				t.Errorf("%s: mark %s missing or before the one ahead of it", r, s)
			}
		}
	}
	if st := tracer.Stats(); st.InFlight != 0 || st.Dropped != 0 {
		t.Errorf("stats %+v: every followed event should have been reported", st)
	}
}

// A full handler buffer coalesces updates into the newest state: the events in between
// never reach the handler, so they are never reported, and the collector keeps no more
// of them than MaxInFlight. The newest state's event is delivered and reported.
func TestTracedEventsLostToCoalescingStayBounded(t *testing.T) {
	e := newEnv(t, apisim.Options{})
	var recs records
	tracer := trace.NewCollector(trace.Options{Every: 1, Last: trace.Delivered, MaxInFlight: 4, Report: recs.add})
	inf := mustNew(t, e.pods, Options[*object.Pod]{Reflector: fastReflector(), Tracer: tracer})
	rec := newRecorder()
	rec.block = make(chan struct{})
	reg, _ := inf.AddEventHandler(rec, HandlerOptions{BufferSize: 1, Tracer: tracer})
	run(t, inf)
	if err := WaitForSync(testwait.Context(t, 10*time.Second), inf, reg); err != nil {
		t.Fatal(err)
	}
	e.create(t, "a", nil) // delivered at once; the handler then blocks on it
	var last *object.Pod
	for i := range 20 {
		var err error
		last, err = e.pods.Patch(testwait.Context(t, 10*time.Second), "a", "application/merge-patch+json", fmt.Appendf(nil, `{"metadata":{"labels":{"v":"%d"}}}`, i), "")
		if err != nil {
			t.Fatal(err)
		}
	}
	testwait.Eventually(t, 10*time.Second, func() bool { return cacheState(inf)["ns/a"] == last.ResourceVersion }, "waiting for the cache to hold the last update")
	close(rec.block)
	testwait.Eventually(t, 10*time.Second, func() bool {
		for _, r := range recs.all() {
			if r.ResourceVersion == last.ResourceVersion {
				return true
			}
		}
		return false
	}, "waiting for the last update reported")
	st := tracer.Stats()
	if st.Followed != 21 || st.InFlight > 4 || st.Reported+st.Dropped+uint64(st.InFlight) != st.Followed {
		t.Errorf("stats %+v: want 21 followed, at most 4 in flight, every one accounted for", st)
	}
	if st.Reported >= st.Followed {
		t.Errorf("all %d events reported, though the buffer coalesced some", st.Reported)
	}
}
