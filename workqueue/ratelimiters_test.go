package workqueue

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/kinformer/kinformer/clock"
)

func TestItemExponential(t *testing.T) {
	r := NewItemExponential[string](5*time.Millisecond, time.Second)
	var got []time.Duration
	for range 10 {
		got = append(got, r.When("a"))
	}
	want := []time.Duration{5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
	if r.NumRequeues("a") != 10 || r.When("b") != 5*time.Millisecond {
		t.Error("items are independent")
	}
	r.Forget("a")
	if r.NumRequeues("a") != 0 || r.When("a") != 5*time.Millisecond {
		t.Error("Forget resets")
	}
	for range 200 { // no overflow far past 2^63
		r.When("c")
	}
	if d := r.When("c"); d != time.Second {
		t.Errorf("after 200 failures: %v", d)
	}
}

func TestBucket(t *testing.T) {
	fc := clock.NewFake(time.Unix(0, 0))
	b := NewBucket[int](10, 3, fc)
	var got []time.Duration
	for i := range 5 {
		got = append(got, b.When(i))
	}
	want := []time.Duration{0, 0, 0, 100 * time.Millisecond, 200 * time.Millisecond}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("burst then 10 qps (-want +got):\n%s", d)
	}
	// The fix: an item that already holds a reservation takes no second token.
	if d := b.When(4); d != 200*time.Millisecond || b.Backlog() != 2 {
		t.Errorf("repeat When: %v, backlog %d; want 200ms, 2", d, b.Backlog())
	}
	fc.Step(50 * time.Millisecond)
	if d := b.When(4); d != 150*time.Millisecond {
		t.Errorf("repeat When after 50 ms: %v", d)
	}
	// Forget gives the unused token back: the next item waits less.
	b.Forget(4)
	if d := b.When(5); d != 150*time.Millisecond {
		t.Errorf("after Forget: %v, want 150ms (4's slot)", d)
	}
}

// TestBucketBacklogIsBounded is kubernetes issue 104554's scenario. 10,000 keys fail, and
// every key is requeued three times while it waits (e.g. AddRateLimited from an event
// handler and from the worker), then 9,000 of them succeed through another path. With
// client-go's bucket every When takes a token: 30,000 tokens, the tail ~50 minutes out,
// and Forget returns nothing. Here the backlog is one token per waiting key, and forgotten
// keys give theirs back.
func TestBucketBacklogIsBounded(t *testing.T) {
	fc := clock.NewFake(time.Unix(0, 0))
	b := NewBucket[int](10, 100, fc)
	naive := &naiveBucket{qps: 10, tokens: 100}
	var tail, naiveTail time.Duration
	for range 3 {
		for k := range 10000 {
			tail = max(tail, b.When(k))
			naiveTail = max(naiveTail, naive.when())
		}
	}
	// One token per key: the 100 keys served at once from the burst hold no reservation,
	// so their next requeue takes one token more. 10,000 tokens of debt at 10 qps: 1000 s.
	if want := 1000 * time.Second; tail != want {
		t.Errorf("tail = %v, want %v (one token per key at 10 qps)", tail, want)
	}
	if naiveTail < 2900*time.Second {
		t.Errorf("the reference bucket should show the bug: tail %v", naiveTail)
	}
	for k := range 9000 {
		b.Forget(k)
	}
	if d := b.When(10001); d != 100100*time.Millisecond {
		t.Errorf("a new key after 9,000 Forgets waits %v, want 100.1 s (1,001 tokens of debt)", d)
	}
	t.Logf("tail of 10k keys × 3 requeues: kinformer %v, reserve-every-call bucket %v", tail, naiveTail)
}

// naiveBucket reserves a token on every call and never returns one, as
// golang.org/x/time/rate's Reserve does in client-go's BucketRateLimiter.
type naiveBucket struct {
	qps    float64
	tokens float64
}

func (n *naiveBucket) when() time.Duration {
	n.tokens--
	if n.tokens >= 0 {
		return 0
	}
	return time.Duration(-n.tokens / n.qps * float64(time.Second))
}

func TestCombinators(t *testing.T) {
	fc := clock.NewFake(time.Unix(0, 0))
	def := MaxOf[string](NewItemExponential[string](5*time.Millisecond, 1000*time.Second), NewBucket[string](10, 1, fc))
	if d := def.When("a"); d != 5*time.Millisecond {
		t.Errorf("first failure: %v (exponential wins over a full bucket)", d)
	}
	if d := def.When("b"); d != 100*time.Millisecond {
		t.Errorf("bucket empty: %v (bucket wins)", d)
	}
	if def.NumRequeues("a") != 1 {
		t.Error("MaxOf reports the largest count")
	}
	fs := NewFastSlow[string](time.Millisecond, time.Minute, 2)
	if got := []time.Duration{fs.When("x"), fs.When("x"), fs.When("x")}; !cmp.Equal(got, []time.Duration{time.Millisecond, time.Millisecond, time.Minute}) {
		t.Errorf("fast-slow: %v", got)
	}
	capped := MaxWait[string](NewItemExponential[string](time.Second, time.Hour), 3*time.Second)
	var got []time.Duration
	for range 4 {
		got = append(got, capped.When("y"))
	}
	if d := cmp.Diff([]time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second}, got); d != "" {
		t.Errorf("max-wait:\n%s", d)
	}
	capped.Forget("y")
	if capped.NumRequeues("y") != 0 {
		t.Error("MaxWait passes Forget through")
	}
}

func TestAddRateLimitedAndMetrics(t *testing.T) {
	fc := clock.NewFake(time.Unix(0, 0))
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	q := New(Options[string]{Name: "pods", Metrics: m, Clock: fc,
		RateLimiter: NewItemExponential[string](time.Second, time.Minute)})
	q.Add("a")
	q.Add("a")
	q.AddRateLimited("b")
	q.AddRateLimited("b")
	if q.NumRequeues("b") != 2 || q.Len() != 1 {
		t.Fatalf("requeues %d, len %d", q.NumRequeues("b"), q.Len())
	}
	fc.Step(time.Second)
	item, _ := q.Get()
	fc.Step(3 * time.Second)
	got := gather(t, reg)
	want := map[string]float64{
		"workqueue_adds_total":                        2, // a once, b once (the dedup'd adds are not counted)
		"workqueue_retries_total":                     2,
		"workqueue_depth":                             1,
		"workqueue_unfinished_work_seconds":           3,
		"workqueue_longest_running_processor_seconds": 3,
		"workqueue_queue_duration_seconds":            1, // sample count
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("metrics (-want +got):\n%s", d)
	}
	q.Done(item)
	q.Forget("b")
	if q.NumRequeues("b") != 0 {
		t.Error("Forget")
	}
	if _, err := NewMetrics(reg); err == nil {
		t.Error("registering twice on one registry must fail, not panic")
	}
}

// gather returns each workqueue metric's value for name="pods" (histograms: sample count).
func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if label(m, "name") != "pods" {
				t.Fatalf("%s: label name=%q", f.GetName(), label(m, "name"))
			}
			switch {
			case m.GetCounter() != nil:
				out[f.GetName()] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				out[f.GetName()] = m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				if n := m.GetHistogram().GetSampleCount(); n > 0 {
					out[f.GetName()] = float64(n)
				}
			}
		}
	}
	return out
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return fmt.Sprint(nil)
}

func TestDefaultControllerRateLimiter(t *testing.T) {
	r := DefaultControllerRateLimiter[string]()
	if d := r.When("a"); d != 5*time.Millisecond {
		t.Errorf("first failure: %v, want 5ms", d)
	}
	for range 30 {
		r.When("a")
	}
	if d := r.When("a"); d != 1000*time.Second {
		t.Errorf("after many failures: %v, want the 1000 s cap", d)
	}
	// On a fresh limiter, 100 distinct first failures fit the burst; the next one waits
	// for a token at 10 qps.
	r = DefaultControllerRateLimiter[string]()
	for i := range 100 {
		r.When(fmt.Sprint("k", i))
	}
	if d := r.When("late"); d < 50*time.Millisecond || d > 100*time.Millisecond {
		t.Errorf("beyond the burst: %v, want up to 100ms", d)
	}
}
