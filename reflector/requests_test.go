package reflector_test

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
)

// These tests look at the requests a reflector sends, on the wire, for each step of its
// state machine: what it asks for says more about correctness than what it stores.

const podsPath = "/api/v1/namespaces/ns/pods"

// request is one request to podsPath as the server saw it.
type request struct {
	at    time.Time
	query url.Values
}

func (r request) watch() bool { return r.query.Get("watch") == "1" || r.query.Get("watch") == "true" }

// requestLog records the GETs of podsPath (lists and watches), and can answer the next
// watch itself.
type requestLog struct {
	mu        sync.Mutex
	reqs      []request
	nextWatch *cannedAnswer
	answered  int // watches the server has begun to answer (see answerMark)
	// onList, when set, runs before the server answers a list (not a watch).
	onList func(query url.Values)
}

// cannedAnswer is a response written by the test instead of the server.
type cannedAnswer struct {
	code       int
	retryAfter string // Retry-After header, if set
	body       string
}

func (l *requestLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == podsPath && r.Method == http.MethodGet {
			req := request{at: time.Now(), query: r.URL.Query()}
			l.mu.Lock()
			l.reqs = append(l.reqs, req)
			canned := l.nextWatch
			if req.watch() {
				l.nextWatch = nil
			}
			onList := l.onList
			l.mu.Unlock()
			if onList != nil && !req.watch() {
				onList(req.query)
			}
			if canned != nil && req.watch() {
				w.Header().Set("Content-Type", "application/json")
				if canned.retryAfter != "" {
					w.Header().Set("Retry-After", canned.retryAfter)
				}
				w.WriteHeader(canned.code)
				_, _ = w.Write([]byte(canned.body))
				return
			}
			if req.watch() {
				w = &answerMark{ResponseWriter: w, mark: func() { l.mu.Lock(); l.answered++; l.mu.Unlock() }}
			}
		}
		h.ServeHTTP(w, r)
	})
}

// answerMark calls mark when the server begins its answer (the simulator plans a watch,
// taking its snapshot and start revision, before it writes the status line): any write
// after that reaches the stream as an event.
type answerMark struct {
	http.ResponseWriter
	once sync.Once
	mark func()
}

func (a *answerMark) WriteHeader(code int) {
	a.once.Do(a.mark)
	a.ResponseWriter.WriteHeader(code)
}

func (a *answerMark) Write(b []byte) (int, error) {
	a.once.Do(a.mark)
	return a.ResponseWriter.Write(b)
}

func (a *answerMark) Flush() { a.ResponseWriter.(http.Flusher).Flush() }

func (a *answerMark) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// watchesAnswered returns how many watches the server has begun to answer.
func (l *requestLog) watchesAnswered() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.answered
}

// answerNextWatch makes the next watch get a instead of reaching the server.
func (l *requestLog) answerNextWatch(a cannedAnswer) {
	l.mu.Lock()
	l.nextWatch = &a
	l.mu.Unlock()
}

func (l *requestLog) snapshot() []request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]request(nil), l.reqs...)
}

// split returns the lists and the watches, in order.
func (l *requestLog) split() (lists, watches []request) {
	for _, r := range l.snapshot() {
		if r.watch() {
			watches = append(watches, r)
		} else {
			lists = append(lists, r)
		}
	}
	return lists, watches
}

// pick keeps the named query parameters (absent ones are left out), so expectations
// state exactly the parameters that matter.
func pick(q url.Values, names ...string) map[string]string {
	out := map[string]string{}
	for _, n := range names {
		if q.Has(n) {
			out[n] = q.Get(n)
		}
	}
	return out
}

// httpServer serves h on addr ("127.0.0.1:0" for any port) until stopped; stopping
// closes the listener and every connection, like an apiserver going away.
type httpServer struct {
	addr string
	srv  *http.Server
	done chan struct{}
}

func serveOn(t *testing.T, addr string, h http.Handler) *httpServer {
	t.Helper()
	var l net.Listener
	var err error
	// The port of a server just stopped can take a moment to free.
	testwait.Eventually(t, 5*time.Second, func() bool { l, err = net.Listen("tcp", addr); return err == nil },
		"listening on %s: %v", addr, testwait.Lazy(func() any { return err }))
	s := &httpServer{addr: l.Addr().String(), srv: &http.Server{Handler: h}, done: make(chan struct{})}
	go func() { defer close(s.done); _ = s.srv.Serve(l) }()
	t.Cleanup(s.stop)
	return s
}

func (s *httpServer) stop() { _ = s.srv.Close(); <-s.done }

// fixture is a simulator behind a request log, a client and the pods of namespace "ns".
type fixture struct {
	sim    *apisim.Server
	log    *requestLog
	server *httpServer
	client *listwatch.Client
	pods   *listwatch.Resource[*object.Pod]
}

func newFixture(t *testing.T, pods int) *fixture {
	t.Helper()
	return newFixtureWith(t, pods, apisim.Options{})
}

// newFixtureWith is newFixture with a simulator made with opts.
func newFixtureWith(t *testing.T, pods int, opts apisim.Options) *fixture {
	t.Helper()
	leakcheck.Check(t)
	f := &fixture{sim: apisim.New(opts), log: &requestLog{}}
	t.Cleanup(func() { f.sim.Close() })
	f.server = serveOn(t, "127.0.0.1:0", f.log.wrap(f.sim))
	// No client-side retries: the reflector's own reaction to each answer is under test.
	c, err := listwatch.New(&listwatch.Config{Host: "http://" + f.server.addr, QPS: -1, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	f.client = c
	info, err := c.Discover(context.Background(), "pods")
	if err != nil {
		t.Fatal(err)
	}
	f.pods = listwatch.For[*object.Pod](c, info, "ns")
	for i := range pods {
		f.create(t, "p"+strconv.Itoa(i))
	}
	return f
}

func (f *fixture) create(t *testing.T, name string) {
	t.Helper()
	if _, err := f.pods.Create(context.Background(), &object.Pod{ObjectMeta: object.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
}

// expire ends r's watch and holds new ones off, creates "cut" (which r sees) and
// "missed" (which it does not), compacts past r's resourceVersion and lets watches
// through again: r must relist. It returns the resourceVersion r had seen.
func (f *fixture) expire(t *testing.T, r *reflector.Reflector[*object.Pod], store *logStore) string {
	t.Helper()
	faults := f.sim.Faults()
	faults.FailRequests(1000, http.StatusServiceUnavailable, 0, func(r *http.Request) bool { return r.URL.Query().Get("watch") == "1" })
	faults.CutWatches(1, false)
	f.create(t, "cut")
	testwait.Eventually(t, 10*time.Second, func() bool { return store.has("add cut") }, "waiting for add cut in the store")
	seen := r.LastSyncResourceVersion()
	f.create(t, "missed")
	f.sim.Compact()
	faults.CutWatches(0, false)
	faults.FailRequests(0, 0, 0, nil)
	return seen
}

// run starts a reflector into store and stops it when the test ends.
func (f *fixture) run(t *testing.T, store reflector.Store[*object.Pod], opts reflector.Options) *reflector.Reflector[*object.Pod] {
	t.Helper()
	if opts.Backoff == (reflector.Backoff{}) {
		opts.Backoff = reflector.Backoff{Initial: 10 * time.Millisecond, Max: 100 * time.Millisecond, Jitter: -1}
	}
	r := reflector.New[*object.Pod](f.pods, store, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

// backingOff returns r's status and true while r waits out a backoff on clk, its timer
// armed: stepping clk by the status's Backoff then ends the wait. Here only that timer
// and an open watch's idle deadline use the clock, and never both at once (the watch is
// closed before the backoff begins, and its deadline is never stepped to), so one armed
// timer while the status says BackingOff with a wait is the backoff's. Pending is read
// first: once the timer is armed the reflector is blocked on it, and the status read
// after it is the wait's own (the reflector reports the wait before it arms the timer,
// and clears it only once the timer has fired).
func backingOff(r *reflector.Reflector[*object.Pod], clk *clock.Fake) (reflector.Status, bool) {
	if clk.Pending() != 1 {
		return reflector.Status{}, false
	}
	s := r.Status()
	return s, s.State == reflector.StateBackingOff && s.Backoff > 0
}

func TestInitialListPagesThenWatchesFromItsResourceVersion(t *testing.T) {
	f := newFixture(t, 5)
	listRV := strconv.FormatInt(f.sim.ResourceVersion(), 10)
	r := f.run(t, &logStore{}, reflector.Options{PageSize: 2})
	testwait.Eventually(t, 10*time.Second, func() bool { return r.Status().State == reflector.StateWatching }, "waiting for the reflector to watch")

	lists, watches := f.log.split()
	var got []map[string]string
	for _, l := range lists {
		p := pick(l.query, "resourceVersion", "resourceVersionMatch", "limit", "continue")
		if p["continue"] != "" {
			p["continue"] = "<token>"
		}
		got = append(got, p)
	}
	want := []map[string]string{
		{"resourceVersion": "0", "limit": "2"}, // any state, from the watch cache
		{"limit": "2", "continue": "<token>"},  // later pages: the token alone
		{"limit": "2", "continue": "<token>"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("list requests (-want +got):\n%s", d)
	}
	if len(watches) != 1 {
		t.Fatalf("%d watches, want 1", len(watches))
	}
	w := watches[0].query
	if d := cmp.Diff(map[string]string{"resourceVersion": listRV, "allowWatchBookmarks": "true"},
		pick(w, "resourceVersion", "allowWatchBookmarks", "sendInitialEvents", "resourceVersionMatch")); d != "" {
		t.Errorf("watch parameters (-want +got):\n%s", d)
	}
	if secs, _ := strconv.Atoi(w.Get("timeoutSeconds")); secs < 300 || secs > 600 {
		t.Errorf("timeoutSeconds %q, want a random value in [300, 600]", w.Get("timeoutSeconds"))
	}
	if got := r.LastSyncResourceVersion(); got != listRV {
		t.Errorf("last synced RV %q, want the list's %q", got, listRV)
	}
}

func TestStreamingListOnlyOnTheInitialWatch(t *testing.T) {
	f := newFixture(t, 2)
	store := &logStore{}
	r := f.run(t, store, reflector.Options{StreamingList: true})
	testwait.Eventually(t, 10*time.Second, func() bool { return store.has("replace 2") && r.Status().State == reflector.StateWatching },
		"waiting for replace 2 in the store and the reflector to watch")
	f.sim.Faults().CutWatches(1, false) // the next event ends the stream cleanly
	f.create(t, "after")
	testwait.Eventually(t, 10*time.Second, func() bool {
		_, watches := f.log.split()
		return store.has("add after") && len(watches) >= 2
	}, "waiting for add after in the store and a second watch")

	lists, watches := f.log.split()
	if len(lists) != 0 {
		t.Errorf("%d list requests; a streaming list needs none", len(lists))
	}
	names := []string{"resourceVersion", "resourceVersionMatch", "sendInitialEvents", "allowWatchBookmarks"}
	if d := cmp.Diff(map[string]string{"resourceVersion": "", "resourceVersionMatch": "NotOlderThan",
		"sendInitialEvents": "true", "allowWatchBookmarks": "true"}, pick(watches[0].query, names...)); d != "" {
		t.Errorf("initial watch (-want +got):\n%s", d)
	}
	resumed := pick(watches[1].query, names...)
	if _, has := resumed["sendInitialEvents"]; has || resumed["resourceVersion"] == "" {
		t.Errorf("a resumed watch must start from the last RV without initial events: %v", resumed)
	}
}

// A server that does not know sendInitialEvents answers with a plain watch (ADDED for
// each object, then ordinary changes, no end bookmark). The first sign of it switches
// the reflector to list+watch for good, with the reason in its status, instead of
// backing off and asking for a streaming list again forever.
func TestStreamingListIgnoredByTheServerFallsBackForGood(t *testing.T) {
	f := newFixture(t, 2)
	f.sim.Faults().IgnoreStreamingList(true)
	store := &logStore{}
	r := f.run(t, store, reflector.Options{StreamingList: true, InitialEventsTimeout: time.Hour})
	// Once the server answers the streaming list, its snapshot is taken: the writes below
	// reach the stream as events, after the snapshot's ADDED.
	testwait.Eventually(t, 10*time.Second, func() bool { return f.log.watchesAnswered() >= 1 }, "waiting for the server to answer the streaming list")
	f.create(t, "during") // ADDED, which a streaming list may still send
	p, err := f.pods.Get(context.Background(), "during")
	if err != nil {
		t.Fatal(err)
	}
	p.Labels = map[string]string{"n": "1"}
	if _, err := f.pods.Update(context.Background(), p); err != nil { // MODIFIED: never among initial events
		t.Fatal(err)
	}
	// The initial-events timeout is an hour: only the MODIFIED can make the reflector list.
	testwait.Eventually(t, 10*time.Second, func() bool { return r.Status().Listed && store.has("replace 3") },
		"waiting for the reflector to list after the MODIFIED; status %+v", testwait.Lazy(func() any { return r.Status() }))
	st := r.Status()
	if !st.StreamingFallback || st.StreamingFallbackReason == nil ||
		!strings.Contains(st.StreamingFallbackReason.Error(), "MODIFIED before the initial-events-end bookmark") {
		t.Errorf("status does not say why the streaming list was given up: %+v", st)
	}
	lists, watches := f.log.split()
	streaming := 0
	for _, w := range watches {
		if w.query.Get("sendInitialEvents") == "true" {
			streaming++
		}
	}
	if streaming != 1 || len(lists) != 1 {
		t.Errorf("%d streaming-list requests and %d lists, want 1 of each", streaming, len(lists))
	}
}

func TestRelistAfterGoneAsksForAtLeastTheLastResourceVersion(t *testing.T) {
	f := newFixture(t, 1)
	store := &logStore{}
	r := f.run(t, store, reflector.Options{})
	testwait.Eventually(t, 10*time.Second, func() bool { return r.Status().State == reflector.StateWatching }, "waiting for the reflector to watch")
	// End the watch, hold off new ones, move on and compact past the reflector's RV.
	seen := f.expire(t, r, store)
	testwait.Eventually(t, 10*time.Second, func() bool { return store.has("replace 3") }, "waiting for replace 3 in the store")

	lists, _ := f.log.split()
	if len(lists) != 2 {
		t.Fatalf("%d lists, want the initial one and one relist", len(lists))
	}
	if d := cmp.Diff(map[string]string{"resourceVersion": seen, "resourceVersionMatch": "NotOlderThan", "limit": "500"},
		pick(lists[1].query, "resourceVersion", "resourceVersionMatch", "limit")); d != "" {
		t.Errorf("relist (-want +got):\n%s", d)
	}
}

// TestConnectionRefusedBacksOffAndResumes: the apiserver goes away (its port refuses
// connections) and comes back with the same data. The reflector backs off, says why,
// and resumes watching from where it was, without a relist.
func TestConnectionRefusedBacksOffAndResumes(t *testing.T) {
	f := newFixture(t, 1)
	store := &logStore{}
	clk := clock.NewFake(time.Unix(1000, 0))
	r := f.run(t, store, reflector.Options{Clock: clk})
	testwait.Eventually(t, 10*time.Second, func() bool { return r.Status().State == reflector.StateWatching }, "waiting for the reflector to watch")
	f.server.stop()
	// A few backoff rounds against the closed port, on the reflector's clock: each try is
	// refused, says so, and waits twice as long as the one before (10 ms doubling, no
	// jitter). The wait after the stream's own end, if it had one, comes first.
	var refused []time.Duration
	testwait.Eventually(t, 10*time.Second, func() bool {
		s, ok := backingOff(r, clk)
		if !ok {
			return false
		}
		if s.LastError != nil && strings.Contains(s.LastError.Error(), "connection refused") {
			if refused = append(refused, s.Backoff); len(refused) == 3 {
				return true // left waiting: the server comes back first
			}
		}
		clk.Step(s.Backoff)
		return false
	}, "waiting for three backoffs after connection refused (%v so far); status %+v", testwait.Lazy(func() any { return refused }),
		testwait.Lazy(func() any { return r.Status() }))
	for i := 1; i < len(refused); i++ {
		if refused[i] != 2*refused[i-1] {
			t.Errorf("backoffs after refused tries %v, want each twice the one before", refused)
			break
		}
	}
	t.Logf("backoffs after refused tries: %v", refused)
	f.server = serveOn(t, f.server.addr, f.log.wrap(f.sim))
	clk.Step(refused[len(refused)-1])
	f.create(t, "back")
	testwait.Eventually(t, 10*time.Second, func() bool { return store.has("add back") }, "waiting for add back in the store")

	lists, watches := f.log.split()
	if len(lists) != 1 {
		t.Errorf("%d lists; coming back with the same data needs no relist", len(lists))
	}
	if got := watches[len(watches)-1].query.Get("resourceVersion"); got == "" || got == "0" {
		t.Errorf("the watch after the outage starts at %q, want the last seen RV", got)
	}
	if err := r.Status().LastError; err != nil {
		t.Errorf("the error must clear once events flow again: %v", err)
	}
}

// TestRelistOnABehindServerReadsTheNewestState: the watch expires (410) and the relist
// lands on an apiserver whose revision is behind the reflector's (a restored etcd, or an
// HA peer whose cache lags). The list at the last RV answers "too large resource
// version", and the reflector lists the newest state (resourceVersion "") instead of
// waiting for a revision that may never come.
func TestRelistOnABehindServerReadsTheNewestState(t *testing.T) {
	f := newFixture(t, 3)
	store := &logStore{}
	r := f.run(t, store, reflector.Options{})
	testwait.Eventually(t, 10*time.Second, func() bool { return r.Status().State == reflector.StateWatching }, "waiting for the reflector to watch")
	seen := r.LastSyncResourceVersion()
	f.server.stop()
	behind := apisim.New(apisim.Options{})
	t.Cleanup(func() { behind.Close() })
	// A 410 the way the apiserver sends it: an ERROR event in a 200 stream.
	f.log.answerNextWatch(cannedAnswer{code: http.StatusOK,
		body: `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version","reason":"Expired","code":410}}` + "\n"})
	f.server = serveOn(t, f.server.addr, f.log.wrap(behind))
	f.create(t, "only")
	testwait.Eventually(t, 10*time.Second, func() bool { return store.has("replace 1") }, "waiting for replace 1 in the store")

	lists, _ := f.log.split()
	var got []map[string]string
	for _, l := range lists[1:] {
		got = append(got, pick(l.query, "resourceVersion", "resourceVersionMatch", "continue"))
	}
	want := []map[string]string{
		{"resourceVersion": seen, "resourceVersionMatch": "NotOlderThan"},
		{}, // no resourceVersion: a consistent read of the newest state
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("relists after a 410 on a server that is behind (-want +got):\n%s", d)
	}
}

// TestRetryAfterOutlastsTheBackoff: when the server says how long to wait, the
// reflector waits at least that long, even if its own backoff is shorter.
func TestRetryAfterOutlastsTheBackoff(t *testing.T) {
	f := newFixture(t, 1)
	f.log.answerNextWatch(cannedAnswer{code: http.StatusTooManyRequests, retryAfter: "1",
		body: `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429}`})
	r := f.run(t, &logStore{}, reflector.Options{})
	testwait.Eventually(t, 10*time.Second, func() bool {
		_, watches := f.log.split()
		return len(watches) >= 2
	}, "waiting for a second watch")
	_, watches := f.log.split()
	if gap := watches[1].at.Sub(watches[0].at); gap < time.Second {
		t.Errorf("re-watched %v after a 429 asking for 1 s (backoff 10 ms)", gap)
	}
	if r.Status().State == reflector.StateStopped {
		t.Error("stopped")
	}
}

// A watch that worked for a while and then broke (here: the connection aborted
// mid-stream) is resumed at once, without a relist; a second failure right after backs
// off as usual (at least the initial 800 ms).
//
// The reflector runs on a fake clock that moves only when the test steps it: a watch
// that comes while the clock stands still came without a backoff, and the one after the
// refused watch comes only once the clock has passed the whole backoff. (The first
// stream is healthy both ways the reflector counts: open for more than a second, and
// delivering events, the event that breaks it included; TestClassifyWatchEnd checks each
// rule alone.)
func TestBrokenHealthyStreamResumesAtOnce(t *testing.T) {
	f := newFixture(t, 1)
	store := &logStore{}
	clk := clock.NewFake(time.Unix(1000, 0))
	r := f.run(t, store, reflector.Options{Clock: clk, Backoff: reflector.Backoff{Initial: 800 * time.Millisecond, Max: time.Second, Jitter: -1}})
	testwait.Eventually(t, 10*time.Second, func() bool { return r.Status().State == reflector.StateWatching }, "waiting for the reflector to watch")
	f.create(t, "flowing")
	testwait.Eventually(t, 10*time.Second, func() bool { return store.has("add flowing") }, "waiting for add flowing in the store")
	clk.Step(1500 * time.Millisecond) // a healthy stream: the reflector timed its start before the event
	var mu sync.Mutex
	var backoffs []time.Duration // every wait the reflector began from here on
	r.OnStatus(func(s reflector.Status) {
		if s.Backoff > 0 {
			mu.Lock()
			backoffs = append(backoffs, s.Backoff)
			mu.Unlock()
		}
	})
	backedOff := func() []time.Duration { mu.Lock(); defer mu.Unlock(); return slices.Clone(backoffs) }

	f.sim.Faults().CutWatches(1, true)
	f.create(t, "breaks-the-stream")
	testwait.Eventually(t, 10*time.Second, func() bool { _, w := f.log.split(); return len(w) >= 2 || len(backedOff()) > 0 },
		"waiting for a second watch")
	if b := backedOff(); len(b) > 0 {
		t.Fatalf("backed off %v after the reset of a healthy stream, want a watch at once", b)
	}
	// The resumed stream delivers an event and breaks too: it worked, so it resumes at
	// once again; but that new watch is refused, and a refused watch backs off.
	isWatch := func(r *http.Request) bool { return r.URL.Query().Get("watch") == "1" }
	f.sim.Faults().FailRequests(1, http.StatusInternalServerError, 0, isWatch)
	f.create(t, "breaks-it-again")
	var st reflector.Status
	testwait.Eventually(t, 10*time.Second, func() bool { var ok bool; st, ok = backingOff(r, clk); return ok },
		"waiting for the backoff after the refused watch; status %+v", testwait.Lazy(func() any { return r.Status() }))
	if _, w := f.log.split(); len(w) != 3 {
		t.Errorf("backing off after %d watches, want 3: the first, one at once after each break (the second refused)", len(w))
	}
	if d := cmp.Diff([]time.Duration{800 * time.Millisecond}, backedOff()); d != "" {
		t.Errorf("backoffs since the first break (-want +got): the stream that delivered an event and broke must be re-watched at once, the refused watch back off\n%s", d)
	}
	clk.Step(799 * time.Millisecond)
	if clk.Pending() != 1 {
		t.Errorf("the backoff after a refused watch ended within 799 ms, want at least 800 ms")
	}
	clk.Step(max(0, st.Backoff-799*time.Millisecond))
	testwait.Eventually(t, 10*time.Second, func() bool { _, w := f.log.split(); return len(w) >= 4 }, "waiting for a fourth watch once the backoff is over")
	f.sim.Faults().CutWatches(0, false)
	if lists, _ := f.log.split(); len(lists) != 1 {
		t.Errorf("%d lists: a broken stream must resume without a relist", len(lists))
	}
}
