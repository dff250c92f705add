package leaderelection

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/internal/testrig/simtest"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// Short timings keep the tests quick; slack absorbs scheduling on a loaded machine
// running with -race. The lease is written with ceil(1.5 s) = 2 leaseDurationSeconds.
const (
	leaseDuration = 1500 * time.Millisecond
	renewDeadline = time.Second
	retryPeriod   = 200 * time.Millisecond
	slack         = 300 * time.Millisecond

	namespace = "kube-system"
	leaseName = "kinformer-controller-manager"
)

// env is a simulated apiserver behind a front that can interfere with one candidate's
// requests, and a client of the test's own that reaches the simulator directly.
type env struct {
	sim    *apisim.Server
	front  *front
	url    string // the front's
	leases *listwatch.Resource[*object.Lease]
	raw    *listwatch.Resource[*object.Raw]
	tl     *timeline
}

func newEnv(t *testing.T) *env {
	t.Helper()
	sim, c := simtest.Start(t, apisim.Options{})
	info, err := c.Discover(context.Background(), "leases.coordination.k8s.io")
	if err != nil {
		t.Fatal(err)
	}
	f := &front{sim: sim, closing: make(chan struct{})}
	srv := httptest.NewServer(f)
	t.Cleanup(func() {
		close(f.closing) // ends requests the front holds, so Close does not wait for them
		srv.Close()
	})
	return &env{
		sim: sim, front: f, url: srv.URL,
		leases: listwatch.For[*object.Lease](c, info, namespace),
		raw:    listwatch.For[*object.Raw](c, info, namespace),
		tl:     &timeline{},
	}
}

// front stands between the candidates and the simulator. While intercept is set it sees
// every request first, and answers it itself when it returns true. It counts each
// candidate's reads of the lease: every attempt to acquire or renew begins with one, so
// a candidate whose count went up by two since some moment has made a whole attempt
// after it.
type front struct {
	sim     http.Handler
	closing chan struct{}

	mu        sync.Mutex
	intercept func(w http.ResponseWriter, r *http.Request) bool
	reads     map[string]int // GETs, by candidate (User-Agent)
	read      chan struct{}  // closed (and replaced) at each GET
}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	intercept := f.intercept
	if r.Method == http.MethodGet {
		if f.reads == nil {
			f.reads = map[string]int{}
		}
		f.reads[r.UserAgent()]++
		if f.read != nil {
			close(f.read)
			f.read = nil
		}
	}
	f.mu.Unlock()
	if intercept != nil && intercept(w, r) {
		return
	}
	f.sim.ServeHTTP(w, r)
}

// readsBy returns how many times candidate id has read the lease.
func (f *front) readsBy(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads[id]
}

// awaitReads waits up to d for candidate id to have read the lease n times in all, and
// reports whether it did. It does not fail the test, so any goroutine may call it.
func (f *front) awaitReads(id string, n int, d time.Duration) bool {
	timeout := time.After(d)
	for {
		f.mu.Lock()
		if f.reads[id] >= n {
			f.mu.Unlock()
			return true
		}
		if f.read == nil {
			f.read = make(chan struct{})
		}
		read := f.read
		f.mu.Unlock()
		select {
		case <-read:
		case <-timeout:
			return false
		}
	}
}

func (f *front) setIntercept(fn func(w http.ResponseWriter, r *http.Request) bool) {
	f.mu.Lock()
	f.intercept = fn
	f.mu.Unlock()
}

// hang holds every request of the candidate id until its client gives up: a leader cut
// off by a network partition rather than refused.
func (f *front) hang(id string) {
	f.setIntercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.UserAgent() != id {
			return false
		}
		select {
		case <-r.Context().Done():
		case <-f.closing:
		}
		return true
	})
}

// timeline records the callbacks of every candidate of a test, and fails the test when
// two candidates' OnStartedLeading ever run at once.
type timeline struct {
	mu      sync.Mutex
	events  []event
	working map[string]bool // candidates whose OnStartedLeading is running
}

type event struct {
	at   time.Time
	id   string
	what string
}

func (tl *timeline) record(id, what string) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.events = append(tl.events, event{time.Now(), id, what})
}

// startWork records the start of id's OnStartedLeading and returns the other candidates
// whose work is still running.
func (tl *timeline) startWork(id string) []string {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.events = append(tl.events, event{time.Now(), id, "started"})
	if tl.working == nil {
		tl.working = map[string]bool{}
	}
	var others []string
	for other, on := range tl.working {
		if on {
			others = append(others, other)
		}
	}
	tl.working[id] = true
	return others
}

func (tl *timeline) endWork(id string) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.working[id] = false
	tl.events = append(tl.events, event{time.Now(), id, "returned"})
}

// last returns when id last did what, if it did.
func (tl *timeline) last(id, what string) (time.Time, bool) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	for i := len(tl.events) - 1; i >= 0; i-- {
		if e := tl.events[i]; e.id == id && e.what == what {
			return e.at, true
		}
	}
	return time.Time{}, false
}

// await waits for id to do what (its callbacks run on their own goroutines, a little
// after IsLeader turns true) and returns when it last did.
func (tl *timeline) await(t *testing.T, id, what string) time.Time {
	t.Helper()
	var at time.Time
	testwait.Eventually(t, time.Second, func() bool {
		var ok bool
		at, ok = tl.last(id, what)
		return ok
	}, "waiting for %s %s", id, what)
	return at
}

func (tl *timeline) String() string {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	var b strings.Builder
	for _, e := range tl.events {
		fmt.Fprintf(&b, "  %s %s %s\n", e.at.Format("15:04:05.000"), e.id, e.what)
	}
	return b.String()
}

// candidate is one Elector with its own client, whose callbacks write to the timeline.
type candidate struct {
	id  string
	e   *Elector
	reg *prometheus.Registry

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
	err    error // Run's result, once done is closed
}

type candidateOptions struct {
	release bool
	// windDown runs in OnStartedLeading once its ctx is cancelled: the work finishing
	// what it had in flight.
	windDown func()
	// clock is the elector's; nil for the real one.
	clock clock.Clock
}

// newCandidate builds candidate id (its client's User-Agent is id too, for the front and
// fault filters) and starts its Run; the test's end stops it.
func newCandidate(t *testing.T, env *env, id string, opts candidateOptions) *candidate {
	t.Helper()
	client, err := listwatch.New(&listwatch.Config{Host: env.url, QPS: -1, UserAgent: id})
	if err != nil {
		t.Fatal(err)
	}
	c := &candidate{id: id, reg: prometheus.NewRegistry()}
	c.e, err = New(Config{
		Client: client, Namespace: namespace, Name: leaseName, Identity: id,
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		ReleaseOnCancel: opts.release,
		Registerer:      c.reg,
		Clock:           opts.clock,
		Callbacks: Callbacks{
			OnStartedLeading: func(ctx context.Context) {
				if others := env.tl.startWork(id); len(others) > 0 {
					t.Errorf("%s started leading while %v still worked as leader", id, others)
				}
				defer env.tl.endWork(id)
				<-ctx.Done()
				env.tl.record(id, "cancelled")
				if opts.windDown != nil {
					opts.windDown()
				}
			},
			OnStoppedLeading: func() { env.tl.record(id, "stopped") },
			OnNewLeader:      func(leader string) { env.tl.record(id, "saw "+leader) },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.stop()
		client.CloseIdleConnections()
	})
	c.run()
	return c
}

// run starts Run (again).
func (c *candidate) run() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	c.mu.Lock()
	c.cancel, c.done = cancel, done
	c.mu.Unlock()
	go func() {
		err := c.e.Run(ctx)
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
		close(done)
	}()
}

// stop cancels Run's context and returns what Run returned.
func (c *candidate) stop() error {
	c.mu.Lock()
	cancel, done := c.cancel, c.done
	c.mu.Unlock()
	cancel()
	<-done
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// returned waits up to d for Run to return by itself.
func (c *candidate) returned(t *testing.T, d time.Duration) error {
	t.Helper()
	c.mu.Lock()
	done := c.done
	c.mu.Unlock()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: Run still running after %v", c.id, d)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// leaderOf waits for exactly one of cs to lead and returns it. It polls every 5 ms: tests
// time the hand-over from its return.
func leaderOf(t *testing.T, d time.Duration, cs ...*candidate) *candidate {
	t.Helper()
	var leader *candidate
	testwait.Every(5*time.Millisecond).Eventually(t, d, func() bool {
		leader = nil
		for _, c := range cs {
			if c.e.IsLeader() {
				if leader != nil {
					t.Fatalf("%s and %s both lead", leader.id, c.id)
				}
				leader = c
			}
		}
		return leader != nil
	}, "waiting for a leader")
	return leader
}

func (env *env) lease(t *testing.T) *object.Lease {
	t.Helper()
	l, err := env.leases.Get(context.Background(), leaseName)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// nextVersions returns the next n versions of the lease after resourceVersion rv, as a
// watch delivers them. It returns an error, with the versions so far, when the watch
// fails or none comes within a renew deadline and some slack: a leader renews every
// retry period. It does not fail the test, so any goroutine may call it.
func (env *env) nextVersions(rv string, n int) ([]*object.Lease, error) {
	w, err := env.leases.Watch(context.Background(), listwatch.WatchOptions{ResourceVersion: rv, IdleTimeout: renewDeadline + slack})
	if err != nil {
		return nil, err
	}
	defer w.Close()
	var out []*object.Lease
	for len(out) < n {
		ev, err := w.Next()
		if err != nil {
			return out, fmt.Errorf("after %d of %d versions of the lease: %w", len(out), n, err)
		}
		out = append(out, ev.Object)
	}
	return out, nil
}

// leaseOrZero is lease for goroutines other than the test's, which must not call Fatal.
func (env *env) leaseOrZero(t *testing.T) *object.Lease {
	l, err := env.leases.Get(context.Background(), leaseName)
	if err != nil {
		t.Errorf("reading the lease: %v", err)
		return &object.Lease{}
	}
	return l
}

// putLease creates the lease with spec, as a candidate that then died would have left it.
func (env *env) putLease(t *testing.T, spec object.LeaseSpec) {
	t.Helper()
	_, err := env.leases.Create(context.Background(), &object.Lease{
		ObjectMeta: object.ObjectMeta{Name: leaseName, Namespace: namespace},
		Spec:       spec,
	})
	if err != nil {
		t.Fatal(err)
	}
}

// holderView is the part of a lease the tests compare; times are compared separately.
type holderView struct {
	Holder      string
	Duration    int32
	Transitions int32
}

func viewOf(l *object.Lease) holderView {
	return holderView{deref(l.Spec.HolderIdentity), deref(l.Spec.LeaseDurationSeconds), deref(l.Spec.LeaseTransitions)}
}

// deref returns *p, or the zero value for nil: every field of a LeaseSpec is optional.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
