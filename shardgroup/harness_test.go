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
	"github.com/kinformer/kinformer/internal/testrig/logbuf"
	"github.com/kinformer/kinformer/internal/testrig/simtest"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
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
)

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// harness is a simulated apiserver behind a front that can hang one member's requests, a
// fake clock, and members in one process whose callbacks write to one ledger.
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
	members map[string]*tmember // by name (the ID, unless two share one)
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	sim, c := simtest.Start(t, apisim.Options{})
	f := &front{sim: sim, closing: make(chan struct{}), hung: map[string]bool{}, changed: make(chan struct{})}
	srv := httptest.NewServer(f)
	clk := clock.NewFake(epoch)
	h := &harness{
		t: t, sim: sim, front: f, url: srv.URL, clk: clk,
		logs:    &logbuf.Buffer{},
		leases:  listwatch.For[*object.Lease](c, listwatch.LeaseResource(), namespace),
		members: map[string]*tmember{},
	}
	h.led = newLedger(h)
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
// member (its User-Agent) until the hang is lifted or the member gives up: a process
// frozen, or a network that drops packets rather than refusing them. Requests hung
// when it is lifted go on to the server: a frozen process's writes on the wire.
type front struct {
	sim     http.Handler
	closing chan struct{}
	mu      sync.Mutex
	hung    map[string]bool
	changed chan struct{} // closed and replaced at every change of hung
}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !f.wait(r.UserAgent(), r.Context().Done()) {
		return
	}
	// What the server streams (a watch) stalls too while the member is cut off.
	f.sim.ServeHTTP(&stalling{ResponseWriter: w, f: f, agent: r.UserAgent(), done: r.Context().Done()}, r)
}

// wait blocks while agent is hung, and reports false if done closed or the front shut
// first.
func (f *front) wait(agent string, done <-chan struct{}) bool {
	for {
		f.mu.Lock()
		hang, changed := f.hung[agent], f.changed
		f.mu.Unlock()
		if !hang {
			return true
		}
		select {
		case <-done:
			return false
		case <-f.closing:
			return false
		case <-changed:
		}
	}
}

// stalling holds each write of a response while its member is hung.
type stalling struct {
	http.ResponseWriter
	f     *front
	agent string
	done  <-chan struct{}
}

func (s *stalling) Write(b []byte) (int, error) {
	if !s.f.wait(s.agent, s.done) {
		return 0, http.ErrAbortHandler
	}
	return s.ResponseWriter.Write(b)
}

func (s *stalling) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (f *front) hang(agent string, on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hung[agent] = on
	close(f.changed)
	f.changed = make(chan struct{})
}

// freezeClock is one member's view of the harness's clock. Frozen, it is a process under
// SIGSTOP: time goes on (Now, the monotonic clock, keeps moving), but none of its timers
// runs until it is thawed, when every one that fell due runs at once.
type freezeClock struct {
	*clock.Fake
	mu     sync.Mutex
	frozen bool
	due    []func()
}

func (c *freezeClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	return c.Fake.AfterFunc(d, func() {
		c.mu.Lock()
		if c.frozen {
			c.due = append(c.due, f)
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		f()
	})
}

func (c *freezeClock) freeze(on bool) {
	c.mu.Lock()
	c.frozen = on
	due := c.due
	if !on {
		c.due = nil
	}
	c.mu.Unlock()
	if !on {
		for _, f := range due {
			f()
		}
	}
}

func (c *freezeClock) isFrozen() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.frozen
}

// tmember is one Member of the harness, with its own client (User-Agent: its name) and
// clock.
type tmember struct {
	name, id string
	m        *Member
	reg      *prometheus.Registry
	client   *listwatch.Client
	clk      *freezeClock
	cancel   context.CancelFunc
	done     chan struct{}
	err      error
	hung     bool // cut off by the front: its loop, blocked in requests, is not awaited
	dead     bool // frozen for good
}

type memberOption func(*Options)

// withID runs the member under another ID than its name: two processes of one ID.
func withID(id string) memberOption { return func(o *Options) { o.ID = id } }

// start builds member name and starts its Run.
func (h *harness) start(name string, opts ...memberOption) *tmember {
	h.t.Helper()
	client, err := listwatch.New(&listwatch.Config{Host: h.url, QPS: -1, UserAgent: name, MaxRetries: -1})
	if err != nil {
		h.t.Fatal(err)
	}
	tm := &tmember{name: name, id: name, reg: prometheus.NewRegistry(), client: client, done: make(chan struct{}),
		clk: &freezeClock{Fake: h.clk}}
	o := Options{
		Group: group, ID: name, Namespace: namespace, Clock: tm.clk, Registerer: tm.reg,
		Logger: slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug,
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.String("at", h.clk.Now().Sub(epoch).String())
				}
				return a
			}})).With("process", name),
		Acquire: func(ctx context.Context, part shard.Set) error { return h.led.acquire(ctx, name, part) },
		Release: func(ctx context.Context, part shard.Set) error { return h.led.release(ctx, name, part) },
	}
	for _, opt := range opts {
		opt(&o)
	}
	tm.id = o.ID
	tm.m, err = New(client, o)
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tm.cancel = cancel
	h.mu.Lock()
	h.members[name] = tm
	h.mu.Unlock()
	go func() {
		defer close(tm.done)
		tm.err = tm.m.Run(ctx)
	}()
	return tm
}

// startConverged starts the members named and steps the clock until they have
// converged.
func (h *harness) startConverged(names ...string) {
	h.t.Helper()
	for _, name := range names {
		h.start(name)
	}
	h.until(time.Minute, strings.Join(names, ", ")+" converged", func() bool { return h.converged(names...) })
}

func (h *harness) member(name string) *tmember {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.members[name]
}

// all returns every member ever started, sorted by name.
func (h *harness) all() []*tmember {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*tmember, 0, len(h.members))
	for _, tm := range h.members {
		out = append(out, tm)
	}
	slices.SortFunc(out, func(a, b *tmember) int { return strings.Compare(a.name, b.name) })
	return out
}

func (h *harness) running() []*tmember {
	return slices.DeleteFunc(h.all(), func(tm *tmember) bool {
		select {
		case <-tm.done:
			return true
		default:
			return false
		}
	})
}

// freeze stops member name as SIGSTOP stops a process: its requests hang at the front,
// its timers do not run, its callbacks do not return; its clock goes on.
func (h *harness) freeze(name string) {
	tm := h.member(name)
	h.mu.Lock()
	tm.hung = true
	h.mu.Unlock()
	tm.clk.freeze(true)
	h.front.hang(name, true)
}

// thaw resumes a frozen member as SIGCONT does: the requests it had on the wire reach
// the server, and every timer that fell due meanwhile runs at once.
func (h *harness) thaw(name string) {
	tm := h.member(name)
	h.mu.Lock()
	tm.hung = false
	h.mu.Unlock()
	h.front.hang(name, false)
	tm.clk.freeze(false)
}

// kill freezes member name for good: a process killed outright, which never releases
// anything, nor writes again.
func (h *harness) kill(name string) {
	h.freeze(name)
	h.mu.Lock()
	h.members[name].dead = true
	h.mu.Unlock()
}

// cut hangs (on) or lets through (off) every request of member name, which lives on.
func (h *harness) cut(name string, on bool) {
	h.mu.Lock()
	h.members[name].hung = on
	h.mu.Unlock()
	h.front.hang(name, on)
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
		if !tm.m.idle.Load() || !h.led.still(tm.name) {
			return false, sum
		}
	}
	return true, sum
}

// settle waits until every member has done what the current time calls for: all wait
// for the clock, twice in a row with no wake-up between.
func (h *harness) settle() {
	h.t.Helper()
	var before uint64
	calm := 0
	ok := testwait.Every(time.Millisecond).Poll(20*time.Second, func() bool {
		q, sum := h.quiet()
		switch {
		case !q:
			calm = 0
		case calm > 0 && sum == before:
			calm++
		default:
			calm = 1
		}
		before = sum
		return calm >= 3
	})
	if !ok {
		h.t.Fatalf("the members never settled at %v; statuses:\n%s", h.clk.Now().Sub(epoch), h.statuses())
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

// expected is what the plan the members deal by gives each of ids; the members named
// must all deal by the same one.
func (h *harness) expected(names, ids []string) (shard.Assignment, bool) {
	var plan shard.Plan
	for i, name := range names {
		tm := h.member(name)
		if tm == nil {
			return nil, false
		}
		p := tm.m.Status().Plan
		if i > 0 && !p.Equal(plan) {
			return nil, false
		}
		plan = p
	}
	return plan.Assign(ids), true
}

// converged reports whether exactly the members named run the group, each a member
// acting on what the plan gives its ID among theirs and claiming nothing more, and the
// ledger agrees.
func (h *harness) converged(names ...string) bool {
	var ids []string
	for _, name := range names {
		tm := h.member(name)
		if tm == nil {
			return false
		}
		ids = append(ids, tm.id)
	}
	slices.Sort(ids)
	want, ok := h.expected(names, ids)
	if !ok {
		return false
	}
	for _, name := range names {
		tm := h.member(name)
		st := tm.m.Status()
		w := want[tm.id]
		if !slices.Equal(st.Members, ids) || st.State != StateMember || !st.Target.Equal(w) || !st.Acting.Equal(w) ||
			!st.Claimed.Equal(w) || st.HandingOver {
			return false
		}
		if !h.led.holding(name).Equal(w) {
			return false
		}
	}
	return true
}

// sampleNamespaces are the namespaces checkActs asks every member about.
var sampleNamespaces = func() []string {
	out := make([]string, 512)
	for i := range out {
		out[i] = fmt.Sprintf("ns-%03d-%x", i, i*7919)
	}
	return out
}()

// admits reports whether tm's Guard would let a write in namespace ns go out now.
func admits(tm *tmember, ns string) bool {
	done, _, err := tm.m.Guard().Admit(listwatch.Write{Method: http.MethodPost, Namespace: ns, Resource: "pods"})
	if err != nil {
		return false
	}
	done()
	return true
}

// checkActs asks every member, frozen ones included (a frozen process may write the
// moment it wakes), whether it acts on each sample namespace, and whether its Guard
// would let a write there go out: at most one may say yes, Acts and the Guard must
// agree, and the one must be the one the ledger shows working there.
func (h *harness) checkActs() {
	h.t.Helper()
	ms := h.all()
	for _, ns := range sampleNamespaces {
		var yes []string
		for _, tm := range ms {
			acts, writes := tm.m.Acts(ns), admits(tm, ns)
			if acts != writes {
				h.t.Fatalf("at %v, %s: Acts(%s) = %v but its Guard admits a write there: %v", h.clk.Now().Sub(epoch), tm.name, ns, acts, writes)
			}
			if acts {
				yes = append(yes, tm.name)
			}
		}
		switch {
		case len(yes) > 1:
			h.t.Fatalf("at %v, %v all act on namespace %s", h.clk.Now().Sub(epoch), yes, ns)
		case len(yes) == 1 && !h.led.holding(yes[0]).Has(ns):
			h.t.Fatalf("at %v, %s acts on namespace %s, which the ledger does not show it holding", h.clk.Now().Sub(epoch), yes[0], ns)
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
		fmt.Fprintf(&b, "  %s (%s): %s %s members %v target %.3f acting %.3f claimed %.3f handing %v dup %q renewed %v\n",
			tm.name, tm.id, st.State, st.Reason, st.Members, st.Target.Fraction(), st.Acting.Fraction(), st.Claimed.Fraction(),
			st.HandingOver, st.Duplicate, st.RenewedAt.Sub(epoch))
	}
	return b.String()
}

// done reports whether member name's Run has returned.
func (tm *tmember) returned() bool {
	select {
	case <-tm.done:
		return true
	default:
		return false
	}
}

// stop cancels member name's Run and steps the clock until it returns.
func (h *harness) stop(name string) error {
	h.t.Helper()
	tm := h.member(name)
	tm.cancel()
	h.until(time.Minute, name+"'s Run to return", tm.returned)
	return tm.err
}

// stopAll ends every member at the test's end, lifting the faults first.
func (h *harness) stopAll() {
	h.sim.Faults().FailRequests(0, 0, 0, nil)
	h.led.openAll()
	for _, tm := range h.all() {
		h.thaw(tm.name)
		tm.cancel()
	}
	// Time goes on, whether or not the members wait for it: a request hung by the front
	// ends only at its member's deadline on the fake clock.
	if !testwait.Every(2*time.Millisecond).Poll(30*time.Second, func() bool {
		h.clk.Step(step)
		return len(h.running()) == 0
	}) {
		h.t.Errorf("members still running at the end: %s\nlog tail:\n%s", h.statuses(), h.logTail(40))
		return
	}
	for _, tm := range h.all() {
		tm.client.CloseIdleConnections()
	}
}

// partition makes every request of member name fail, as a network that refuses them.
func (h *harness) partition(name string) {
	h.sim.Faults().FailRequests(1<<30, http.StatusServiceUnavailable, 0, func(r *http.Request) bool { return r.UserAgent() == name })
}

func (h *harness) heal() { h.sim.Faults().FailRequests(0, 0, 0, nil) }

// ledger records what every member's callbacks did, on the fake clock, and fails the
// test when two members may work on one part at once. A member may work on a part from
// the moment its Acquire is called until its Release has returned: so when a member's
// Acquire is called, no other member may be within that span on any of its hashes,
// unless that member cannot release (frozen, dead, or stuck in a Release that does not
// return) and its Guard already refuses every write there: what fences such a process.
type ledger struct {
	h *harness

	mu         sync.Mutex
	holds      map[string]shard.Set // by member name: Acquire called, Release not returned
	events     []event
	violations []string
	busy       map[string]int  // callbacks running, by member
	held       map[string]bool // members whose Release waits at a gate
	gates      map[string]chan struct{}
	failNext   map[string]int // Acquires to fail, by member
}

type event struct {
	at     time.Time
	member string
	what   string // acquire, acting, release, released, failed
	part   shard.Set
}

func newLedger(h *harness) *ledger {
	return &ledger{h: h, holds: map[string]shard.Set{}, busy: map[string]int{}, held: map[string]bool{},
		gates: map[string]chan struct{}{}, failNext: map[string]int{}}
}

func (l *ledger) record(member, what string, s shard.Set) {
	l.events = append(l.events, event{at: l.h.clk.Now(), member: member, what: what, part: s})
}

func (l *ledger) acquire(ctx context.Context, name string, part shard.Set) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.busy[name]++
	defer func() { l.busy[name]-- }()
	l.record(name, "acquire", part)
	if l.failNext[name] > 0 {
		l.failNext[name]--
		l.record(name, "failed", part)
		return fmt.Errorf("injected failure of %s's Acquire", name)
	}
	for other, s := range l.holds {
		if other == name || !s.Overlaps(part) {
			continue
		}
		tm := l.h.member(other)
		if !tm.clk.isFrozen() && tm.m.Check() == nil {
			l.violations = append(l.violations, fmt.Sprintf("at %v %s acquires %s while %s may still work there",
				l.h.clk.Now().Sub(epoch), name, s.Intersect(part), other))
			continue
		}
		for _, ns := range sampleNamespaces {
			if part.Has(ns) && admits(tm, ns) {
				l.violations = append(l.violations, fmt.Sprintf("at %v %s acquires %s while frozen %s's Guard still admits writes there",
					l.h.clk.Now().Sub(epoch), name, ns, other))
			}
		}
	}
	l.holds[name] = l.holds[name].Union(part)
	l.record(name, "acting", part)
	return nil
}

func (l *ledger) release(ctx context.Context, name string, part shard.Set) error {
	l.mu.Lock()
	l.busy[name]++
	l.record(name, "release", part)
	gate := l.gates[name]
	if gate != nil {
		l.held[name] = true
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
	l.held[name] = false
	l.busy[name]--
	l.holds[name] = l.holds[name].Minus(part)
	l.record(name, "released", part)
	return nil
}

// holding is what member name may be working on.
func (l *ledger) holding(name string) shard.Set {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.holds[name]
}

// gate makes member name's Releases wait until the returned function is called.
func (l *ledger) gate(name string) (open func()) {
	ch := make(chan struct{})
	l.mu.Lock()
	l.gates[name] = ch
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.gates[name] == ch {
			delete(l.gates, name)
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

func (l *ledger) failAcquires(name string, n int) {
	l.mu.Lock()
	l.failNext[name] = n
	l.mu.Unlock()
}

// still reports whether member name runs no callback, or only one held at a gate.
func (l *ledger) still(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.busy[name] == 0 || l.held[name]
}

func (l *ledger) isHeld(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held[name]
}

// mark returns the ledger's position, for first.
func (l *ledger) mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.events)
}

// first returns the first event after the mark from in which one of members did what to
// a part overlapping s.
func (l *ledger) first(from int, what string, s shard.Set, members ...string) (event, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.events[from:] {
		if e.what == what && slices.Contains(members, e.member) && e.part.Overlaps(s) {
			return e, true
		}
	}
	return event{}, false
}

func (l *ledger) check(t *testing.T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.violations) > 0 {
		t.Errorf("two members worked on one part at once:\n  %s\nledger:\n%s", strings.Join(l.violations, "\n  "), l.stringLocked())
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
		fmt.Fprintf(&b, "  %8v %s %-8s %.3f of the space %s\n", e.at.Sub(epoch), e.member, e.what, e.part.Fraction(), abbreviate(e.part.String()))
	}
	return b.String()
}

func abbreviate(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}
