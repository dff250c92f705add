package shardgroup

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/internal/logbuf"
	"github.com/kinformer/kinformer/internal/simtest"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
)

// The tests run the defaults of kube-controller-manager (15 s, 10 s, 2 s) on a fake
// clock, which the harness steps by step once every member waits for it.
const (
	group     = "ctrl"
	namespace = "kube-system"
	step      = 250 * time.Millisecond
	buckets   = shard.DefaultBuckets
)

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// harness is a simulated apiserver behind a front that can cut one member off, a fake
// clock, and members in one process whose callbacks write to one ledger.
type harness struct {
	t      *testing.T
	sim    *apisim.Server
	front  *front
	url    string
	clk    *clock.Fake
	led    *ledger
	leases *listwatch.Resource[*object.Lease]
	logs   *logbuf.Buffer

	mu      sync.Mutex
	members map[string]*tmember
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	sim, c := simtest.Start(t, apisim.Options{})
	f := &front{sim: sim, closing: make(chan struct{}), hung: map[string]bool{}, changed: make(chan struct{})}
	srv := httptest.NewServer(f)
	clk := clock.NewFake(epoch)
	h := &harness{
		t: t, sim: sim, front: f, url: srv.URL, clk: clk,
		led:     newLedger(clk),
		logs:    &logbuf.Buffer{},
		leases:  listwatch.For[*object.Lease](c, listwatch.LeaseResource(), namespace),
		members: map[string]*tmember{},
	}
	t.Cleanup(func() {
		h.stopAll()
		close(f.closing)
		srv.CloseClientConnections()
		srv.Close()
	})
	t.Cleanup(func() {
		// Registered last, so it runs first: the ledger's verdict, whatever the test did.
		h.led.check(t)
	})
	return h
}

// front stands between the members and the simulator, and can hang every request of a
// member (its User-Agent) until the member gives up or the hang is lifted: a process
// frozen, or a network that drops packets rather than refusing them.
type front struct {
	sim     http.Handler
	closing chan struct{}
	mu      sync.Mutex
	hung    map[string]bool
	changed chan struct{} // closed and replaced at every change of hung
}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for {
		f.mu.Lock()
		hang, changed := f.hung[r.UserAgent()], f.changed
		f.mu.Unlock()
		if !hang {
			break
		}
		select {
		case <-r.Context().Done():
			return
		case <-f.closing:
			return
		case <-changed:
		}
	}
	f.sim.ServeHTTP(w, r)
}

func (f *front) hang(id string, on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hung[id] = on
	close(f.changed)
	f.changed = make(chan struct{})
}

// tmember is one Member of the harness, with its own client (User-Agent: its ID).
type tmember struct {
	id     string
	m      *Member
	reg    *prometheus.Registry
	client *listwatch.Client
	cancel context.CancelFunc
	done   chan struct{}
	err    error
	hung   bool // cut off by the front: its loop, blocked in requests, is not awaited
	dead   bool // frozen for good: it acts on nothing, whatever it thinks
}

type memberOption func(*Options)

// start builds member id and starts its Run.
func (h *harness) start(id string, opts ...memberOption) *tmember {
	h.t.Helper()
	client, err := listwatch.New(&listwatch.Config{Host: h.url, QPS: -1, UserAgent: id, MaxRetries: -1})
	if err != nil {
		h.t.Fatal(err)
	}
	tm := &tmember{id: id, reg: prometheus.NewRegistry(), client: client, done: make(chan struct{})}
	o := Options{
		Group: group, ID: id, Namespace: namespace, Clock: h.clk, Registerer: tm.reg,
		Logger: slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug,
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.String("at", h.clk.Now().Sub(epoch).String())
				}
				return a
			}})),
		Acquire: func(ctx context.Context, ranges []shard.Range) error { return h.led.acquire(ctx, id, ranges) },
		Release: func(ctx context.Context, ranges []shard.Range) error { return h.led.release(ctx, id, ranges) },
	}
	for _, opt := range opts {
		opt(&o)
	}
	tm.m, err = New(client, o)
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tm.cancel = cancel
	h.mu.Lock()
	h.members[id] = tm
	h.mu.Unlock()
	go func() {
		defer close(tm.done)
		tm.err = tm.m.Run(ctx)
	}()
	return tm
}

func (h *harness) member(id string) *tmember {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.members[id]
}

func (h *harness) running() []*tmember {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*tmember
	for _, tm := range h.members {
		select {
		case <-tm.done:
		default:
			out = append(out, tm)
		}
	}
	slices.SortFunc(out, func(a, b *tmember) int { return strings.Compare(a.id, b.id) })
	return out
}

// freeze hangs every request of member id, as if its process had stopped dead: its loop
// is no longer awaited, and the ledger forgets its work (a dead process does none).
func (h *harness) freeze(id string) {
	h.mu.Lock()
	tm := h.members[id]
	tm.hung, tm.dead = true, true
	h.mu.Unlock()
	h.front.hang(id, true)
	h.led.kill(id)
}

// cut hangs (on) or lets through (off) every request of member id, which lives on.
func (h *harness) cut(id string, on bool) {
	h.mu.Lock()
	h.members[id].hung = on
	h.mu.Unlock()
	h.front.hang(id, on)
}

// quiet reports whether every running member waits for the clock, with no callback
// running but one held by a test, and the sum of their wake-ups.
func (h *harness) quiet() (bool, uint64) {
	var sum uint64
	for _, tm := range h.running() {
		h.mu.Lock()
		hung := tm.hung
		h.mu.Unlock()
		if hung {
			continue
		}
		sum += tm.m.wakes.Load()
		if !tm.m.idle.Load() || !h.led.still(tm.id) {
			return false, sum
		}
	}
	return true, sum
}

// settle waits until every member has done what the current time calls for.
func (h *harness) settle() {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if q, before := h.quiet(); q {
			time.Sleep(3 * time.Millisecond)
			if q, after := h.quiet(); q && after == before {
				return
			}
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("the members never settled at %v; statuses:\n%s", h.clk.Now().Sub(epoch), h.statuses())
		}
		time.Sleep(time.Millisecond)
	}
}

// advance lets d of fake time pass, a step at a time, checking at every step that no
// two members act on one namespace.
func (h *harness) advance(d time.Duration) {
	h.t.Helper()
	for end := h.clk.Now().Add(d); h.clk.Now().Before(end); {
		h.settle()
		h.checkActs()
		h.clk.Step(step)
	}
	h.settle()
	h.checkActs()
}

// until steps the clock until cond holds, for at most limit of fake time, and returns
// how much passed.
func (h *harness) until(limit time.Duration, what string, cond func() bool) time.Duration {
	h.t.Helper()
	start := h.clk.Now()
	for {
		h.settle()
		h.checkActs()
		if cond() {
			return h.clk.Now().Sub(start)
		}
		if h.clk.Now().Sub(start) >= limit {
			h.t.Fatalf("after %v: %s never happened; statuses:\n%s\nledger:\n%s\nlog tail:\n%s", limit, what, h.statuses(), h.led, h.logTail(60))
		}
		h.clk.Step(step)
	}
}

// converged reports whether exactly ids run the group, each acting on what Assign gives
// it among them and claiming nothing more, and the ledger agrees.
func (h *harness) converged(ids ...string) bool {
	ids = slices.Sorted(slices.Values(ids))
	owner := make([]string, buckets)
	for _, id := range ids {
		tm := h.member(id)
		if tm == nil {
			return false
		}
		st := tm.m.Status()
		want := setOf(shard.Assign(ids, buckets)[id], buckets)
		if !slices.Equal(st.Members, ids) || !st.Target.Equal(want) || !st.Acting.Equal(want) ||
			!st.Claimed.Equal(want) || st.HandingOver || st.Lost {
			return false
		}
		for _, b := range want.Indexes() {
			owner[b] = id
		}
	}
	return slices.Equal(h.led.holders(), owner)
}

// sampleNamespaces are the namespaces checkActs asks every member about.
var sampleNamespaces = func() []string {
	out := make([]string, 512)
	for i := range out {
		out[i] = fmt.Sprintf("ns-%03d-%x", i, i*7919)
	}
	return out
}()

// checkActs asks every running member whether it acts on each sample namespace: at most
// one may say yes, and only one the ledger shows holding it.
func (h *harness) checkActs() {
	h.t.Helper()
	holders := h.led.holders()
	ms := h.running()
	for _, ns := range sampleNamespaces {
		var yes []string
		for _, tm := range ms {
			h.mu.Lock()
			dead := tm.dead
			h.mu.Unlock()
			if !dead && tm.m.Acts(ns) { // a dead process acts on nothing, whatever it thinks
				yes = append(yes, tm.id)
			}
		}
		b := BucketOf(shard.Hash(ns), buckets)
		switch {
		case len(yes) > 1:
			h.t.Fatalf("at %v, %v all act on namespace %s", h.clk.Now().Sub(epoch), yes, ns)
		case len(yes) == 1 && holders[b] != yes[0]:
			h.t.Fatalf("at %v, %s acts on namespace %s (bucket %d), which the ledger gives to %q", h.clk.Now().Sub(epoch), yes[0], ns, b, holders[b])
		}
	}
}

// logTail is the last n lines the members logged.
func (h *harness) logTail(n int) string {
	lines := strings.Split(strings.TrimSuffix(h.logs.String(), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func (h *harness) statuses() string {
	var b strings.Builder
	for _, tm := range h.running() {
		st := tm.m.Status()
		fmt.Fprintf(&b, "  %s: members %v target %d acting %d claimed %d handing %v lost %v leaving %v renewed %v\n",
			tm.id, st.Members, st.Target.Len(), st.Acting.Len(), st.Claimed.Len(), st.HandingOver, st.Lost, st.Leaving, st.RenewedAt.Sub(epoch))
	}
	return b.String()
}

// stop cancels member id's Run and steps the clock until it returns.
func (h *harness) stop(id string) error {
	h.t.Helper()
	tm := h.member(id)
	tm.cancel()
	h.until(time.Minute, id+"'s Run to return", func() bool {
		select {
		case <-tm.done:
			return true
		default:
			return false
		}
	})
	return tm.err
}

// stopAll ends every member at the test's end, lifting the faults first.
func (h *harness) stopAll() {
	h.sim.Faults().FailRequests(0, 0, 0, nil)
	h.led.openAll()
	h.mu.Lock()
	for id, tm := range h.members {
		tm.hung = false
		h.front.hang(id, false)
		tm.cancel()
	}
	h.mu.Unlock()
	// Time goes on, whether or not the members wait for it: a request hung by the front
	// ends only at its member's deadline on the fake clock.
	for start := time.Now(); len(h.running()) > 0; {
		if time.Since(start) > 30*time.Second {
			h.t.Errorf("members still running at the end: %s\nlog tail:\n%s", h.statuses(), h.logTail(40))
			return
		}
		time.Sleep(2 * time.Millisecond)
		h.clk.Step(step)
	}
	for _, tm := range h.members {
		tm.client.CloseIdleConnections()
	}
}

// partition makes every request of member id fail, as a network that refuses them.
func (h *harness) partition(id string) {
	h.sim.Faults().FailRequests(1<<30, http.StatusServiceUnavailable, 0, func(r *http.Request) bool { return r.UserAgent() == id })
}

func (h *harness) heal() { h.sim.Faults().FailRequests(0, 0, 0, nil) }

// ledger records what every member's callbacks did, on the fake clock, and fails the
// test when two members may work on one bucket at once. It is strict: a member may work
// on a bucket from the moment its Acquire is called until its Release has returned (not
// only from Acquire's return until Release's call), so a second Acquire's call must come
// after the first member's Release returned.
type ledger struct {
	clk *clock.Fake

	mu         sync.Mutex
	holder     []string // who may be working on each bucket
	events     []event
	violations []string
	dead       map[string]bool
	busy       map[string]int  // callbacks running, by member
	held       map[string]bool // members whose Release waits at a gate
	gates      map[string]chan struct{}
	failNext   map[string]int // Acquires to fail, by member
}

type event struct {
	at      time.Time
	member  string
	what    string // acquire, acting, release, released, failed, killed
	buckets BucketSet
}

func newLedger(clk *clock.Fake) *ledger {
	return &ledger{clk: clk, holder: make([]string, buckets), dead: map[string]bool{}, busy: map[string]int{},
		held: map[string]bool{}, gates: map[string]chan struct{}{}, failNext: map[string]int{}}
}

func rangesToSet(rs []shard.Range) BucketSet { return setOf(rs, buckets) }

func (l *ledger) record(member, what string, s BucketSet) {
	l.events = append(l.events, event{at: l.clk.Now(), member: member, what: what, buckets: s})
}

func (l *ledger) acquire(ctx context.Context, id string, ranges []shard.Range) error {
	s := rangesToSet(ranges)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dead[id] {
		return nil
	}
	l.busy[id]++
	defer func() { l.busy[id]-- }()
	l.record(id, "acquire", s)
	if l.failNext[id] > 0 {
		l.failNext[id]--
		l.record(id, "failed", s)
		return fmt.Errorf("injected failure of %s's Acquire", id)
	}
	for _, b := range s.Indexes() {
		if h := l.holder[b]; h != "" && h != id {
			l.violations = append(l.violations, fmt.Sprintf("at %v %s acquires bucket %d while %s may still work on it",
				l.clk.Now().Sub(epoch), id, b, h))
		}
		l.holder[b] = id
	}
	l.record(id, "acting", s)
	return nil
}

func (l *ledger) release(ctx context.Context, id string, ranges []shard.Range) error {
	s := rangesToSet(ranges)
	l.mu.Lock()
	if l.dead[id] {
		l.mu.Unlock()
		return nil
	}
	l.busy[id]++
	l.record(id, "release", s)
	for _, b := range s.Indexes() {
		if l.holder[b] != id {
			l.violations = append(l.violations, fmt.Sprintf("at %v %s releases bucket %d, which %q holds", l.clk.Now().Sub(epoch), id, b, l.holder[b]))
		}
	}
	gate := l.gates[id]
	if gate != nil {
		l.held[id] = true
	}
	l.mu.Unlock()
	if gate != nil {
		// In-flight work that takes its time, until the test lets it finish, or the
		// member loses its Lease (ctx ends), when Release must return at once.
		select {
		case <-gate:
		case <-ctx.Done():
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held[id] = false
	l.busy[id]--
	if l.dead[id] {
		return nil
	}
	for _, b := range s.Indexes() {
		if l.holder[b] == id {
			l.holder[b] = ""
		}
	}
	l.record(id, "released", s)
	return nil
}

// kill forgets member id's work: a dead process does none.
func (l *ledger) kill(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dead[id] = true
	var idx []int
	for b, h := range l.holder {
		if h == id {
			l.holder[b] = ""
			idx = append(idx, b)
		}
	}
	l.record(id, "killed", bucketsOf(buckets, idx...))
}

// gate makes member id's Releases wait until the returned function is called.
func (l *ledger) gate(id string) (open func()) {
	ch := make(chan struct{})
	l.mu.Lock()
	l.gates[id] = ch
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.gates[id] == ch {
			delete(l.gates, id)
			close(ch)
		}
	}
}

// openAll opens every gate.
func (l *ledger) openAll() {
	l.mu.Lock()
	gates := l.gates
	l.gates = map[string]chan struct{}{}
	l.mu.Unlock()
	for _, ch := range gates {
		close(ch)
	}
}

func (l *ledger) failAcquires(id string, n int) {
	l.mu.Lock()
	l.failNext[id] = n
	l.mu.Unlock()
}

// still reports whether member id runs no callback, or only one held at a gate.
func (l *ledger) still(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.busy[id] == 0 || l.held[id]
}

func (l *ledger) isHeld(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held[id]
}

func (l *ledger) holders() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.holder)
}

// mark returns the ledger's position, for first.
func (l *ledger) mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.events)
}

// first returns the first event after the mark from in which one of members did what to
// a bucket of s.
func (l *ledger) first(from int, what string, s BucketSet, members ...string) (event, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.events[from:] {
		if e.what == what && slices.Contains(members, e.member) && !e.buckets.Intersect(s).IsEmpty() {
			return e, true
		}
	}
	return event{}, false
}

func (l *ledger) check(t *testing.T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.violations) > 0 {
		t.Errorf("two members worked on one bucket at once:\n  %s\nledger:\n%s", strings.Join(l.violations, "\n  "), l.stringLocked())
	}
}

func (l *ledger) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stringLocked()
}

func (l *ledger) stringLocked() string {
	var b strings.Builder
	for _, e := range l.events {
		fmt.Fprintf(&b, "  %8v %s %-8s %d buckets %s\n", e.at.Sub(epoch), e.member, e.what, e.buckets.Len(), abbreviate(e.buckets.String()))
	}
	return b.String()
}

func abbreviate(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}
