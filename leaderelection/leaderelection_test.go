package leaderelection

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/lease"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

var microTimeRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`)

func TestLeaseRecordAsWritten(t *testing.T) {
	env := newEnv(t)
	before := time.Now()
	a := newCandidate(t, env, "a", candidateOptions{})
	leaderOf(t, 2*time.Second, a)

	first := env.lease(t)
	if d := cmp.Diff(holderView{"a", 2, 0}, viewOf(first)); d != "" {
		t.Errorf("created lease (-want +got):\n%s", d)
	}
	acquired, renewed := first.Spec.AcquireTime.Time, first.Spec.RenewTime.Time
	if !acquired.Equal(renewed) || acquired.Before(before.Truncate(time.Microsecond)) || acquired.After(time.Now()) {
		t.Errorf("acquireTime %v, renewTime %v: want both equal, at acquisition (after %v)", acquired, renewed, before)
	}
	// The apiserver rejects these times unless they have exactly six fractional digits.
	raw, err := env.raw.Get(context.Background(), leaseName)
	if err != nil {
		t.Fatal(err)
	}
	var spec map[string]any
	if err := json.Unmarshal(raw.Unknown.Get("spec"), &spec); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"acquireTime", "renewTime"} {
		if s, _ := spec[field].(string); !microTimeRE.MatchString(s) {
			t.Errorf("%s = %q on the wire, want RFC 3339 with six fractional digits", field, spec[field])
		}
	}

	// Renewals advance renewTime and nothing else: the next two versions of the lease.
	renewals, err := env.nextVersions(first.ResourceVersion, 2)
	if err != nil {
		t.Fatalf("a did not renew its lease: %v", err)
	}
	for i, later := range renewals {
		if d := cmp.Diff(holderView{"a", 2, 0}, viewOf(later)); d != "" {
			t.Errorf("renewal %d (-want +got):\n%s", i+1, d)
		}
		if !later.Spec.AcquireTime.Equal(acquired) {
			t.Errorf("acquireTime moved from %v to %v at renewal %d", acquired, later.Spec.AcquireTime.Time, i+1)
		}
		if !later.Spec.RenewTime.After(renewed) {
			t.Errorf("renewTime did not advance at renewal %d: %v, then %v", i+1, renewed, later.Spec.RenewTime.Time)
		}
		renewed = later.Spec.RenewTime.Time
	}

	if got := a.e.Leader(); got != "a" {
		t.Errorf("Leader() = %q, want a", got)
	}
	if err := a.e.Check(); err != nil {
		t.Errorf("Check() on a renewing leader: %v", err)
	}
	if _, ok := env.tl.last("a", "saw a"); !ok {
		t.Errorf("OnNewLeader was not told of a; timeline:\n%s", env.tl)
	}

	// Without ReleaseOnCancel the lease stays with its holder until it expires.
	if err := a.stop(); err != nil {
		t.Errorf("Run after cancel = %v, want nil", err)
	}
	if a.e.IsLeader() {
		t.Error("IsLeader() after Run returned")
	}
	if got := viewOf(env.lease(t)); got.Holder != "a" {
		t.Errorf("holder after Run without ReleaseOnCancel = %q, want a", got.Holder)
	}
}

// Three candidates start together on a lease that does not exist, then leadership is
// handed over several times. Sampled every millisecond, never do two lead, and none leads
// only while a handover is under way; no two candidates' work ever overlaps (the timeline
// checks that in every OnStartedLeading).
func TestOneLeaderAtATime(t *testing.T) {
	env := newEnv(t)
	cs := []*candidate{
		newCandidate(t, env, "a", candidateOptions{release: true}),
		newCandidate(t, env, "b", candidateOptions{release: true}),
		newCandidate(t, env, "c", candidateOptions{release: true}),
	}
	s := sampleLeaders(t, cs)
	handing := []window{{from: time.Now()}} // no leader yet
	const handovers = 3
	for i := range handovers {
		leader := leaderOf(t, 2*time.Second, cs...)
		handing[len(handing)-1].to = time.Now()
		// Some renewals while the others stand by: every candidate makes a whole attempt
		// from here, the leader to renew, the others to acquire.
		reads := map[string]int{}
		for _, c := range cs {
			reads[c.id] = env.front.readsBy(c.id)
		}
		for _, c := range cs {
			if !env.front.awaitReads(c.id, reads[c.id]+2, 2*time.Second) {
				t.Fatalf("round %d: %s made no attempt on the lease in 2s", i, c.id)
			}
		}
		if got := leaderOf(t, 0, cs...); got != leader {
			t.Fatalf("round %d: leadership moved from %s to %s by itself", i, leader.id, got.id)
		}
		handing = append(handing, window{from: time.Now()})
		if err := leader.stop(); err != nil {
			t.Fatalf("round %d: %s's Run = %v", i, leader.id, err)
		}
		next := leaderOf(t, retryPeriod+slack+retryPeriod, cs...)
		handing[len(handing)-1].to = time.Now()
		if next == leader {
			t.Fatalf("round %d: %s led again", i, leader.id)
		}
		leader.run() // back as a candidate, with the same Elector
	}
	samples, leaderless, err := s.stop()
	if err != nil {
		t.Errorf("%v; timeline:\n%s", err, env.tl)
	}
	for _, at := range leaderless {
		if !slices.ContainsFunc(handing, func(w window) bool { return w.contains(at) }) {
			t.Errorf("no leader at %s, outside any handover %v", at.Format("15:04:05.000"), handing)
			break
		}
	}
	t.Logf("%d samples, %d without a leader (during handovers)", samples, len(leaderless))

	if got := viewOf(env.lease(t)).Transitions; got != handovers {
		t.Errorf("leaseTransitions = %d, want %d", got, handovers)
	}
}

type window struct{ from, to time.Time }

func (w window) contains(t time.Time) bool { return !t.Before(w.from) && !t.After(w.to) }

// leaderSampler polls IsLeader of every candidate every millisecond, on its own
// goroutine, noting any moment with two leaders and every moment with none.
type leaderSampler struct {
	quit chan struct{}
	done chan struct{}

	samples    int
	leaderless []time.Time
	err        error
}

func sampleLeaders(t *testing.T, cs []*candidate) *leaderSampler {
	s := &leaderSampler{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			select {
			case <-s.quit:
				return
			case <-time.After(time.Millisecond):
			}
			at := time.Now()
			var leading []string
			for _, c := range cs {
				if c.e.IsLeader() {
					leading = append(leading, c.id)
				}
			}
			s.samples++
			switch {
			case len(leading) == 0:
				s.leaderless = append(s.leaderless, at)
			case len(leading) > 1 && s.err == nil:
				s.err = fmt.Errorf("%v lead at once, at %s", leading, at.Format("15:04:05.000"))
			}
		}
	}()
	t.Cleanup(func() { s.stop() }) // when the test ends early
	return s
}

// stop ends the sampling (at most once) and returns what it saw.
func (s *leaderSampler) stop() (samples int, leaderless []time.Time, err error) {
	select {
	case <-s.quit:
	default:
		close(s.quit)
	}
	<-s.done
	return s.samples, s.leaderless, s.err
}

func TestHandoverWhenRunEnds(t *testing.T) {
	tests := []struct {
		name    string
		release bool
		// bounds on the time from the old leader's Run returning to the standby leading
		atLeast, atMost time.Duration
		wantHolders     []string // the lease's holders as a watch sees them, from a on
	}{
		{"released: the standby takes over at its next attempt", true,
			0, retryPeriod + lease.Timing{RetryPeriod: retryPeriod}.MaxJitter() + slack, []string{"a", "", "b"}},
		{"kept: the standby waits for the lease to expire", false,
			leaseDuration, 2*time.Second + 2*retryPeriod + slack, []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t)
			// a's work takes a few renewal periods to stop, and meanwhile a keeps the
			// lease renewed: no successor may start while that work still runs.
			var atCancel, atReturn *object.Lease
			a := newCandidate(t, env, "a", candidateOptions{release: tt.release, windDown: func() {
				atCancel = env.leaseOrZero(t)
				bReads := env.front.readsBy("b")
				// The work stops once a has renewed the lease twice more, and b has made a
				// whole attempt to take it over, which must find it a's.
				versions, err := env.nextVersions(atCancel.ResourceVersion, 2)
				if err != nil {
					t.Errorf("a's lease while its work wound down: %v", err)
				}
				for _, v := range versions {
					if h := deref(v.Spec.HolderIdentity); h != "a" {
						t.Errorf("the lease went to %q while a's work wound down", h)
					}
				}
				if !env.front.awaitReads("b", bReads+2, 2*time.Second) {
					t.Error("b made no attempt on the lease in 2s while a's work wound down")
				}
				atReturn = env.leaseOrZero(t)
			}})
			leaderOf(t, 2*time.Second, a)
			b := newCandidate(t, env, "b", candidateOptions{})
			testwait.Eventually(t, 2*time.Second, func() bool { return b.e.Leader() == "a" }, "waiting for b to see a")

			w, err := env.leases.Watch(context.Background(), listwatch.WatchOptions{
				ResourceVersion: env.lease(t).ResourceVersion, IdleTimeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()

			if err := a.stop(); err != nil {
				t.Errorf("a's Run = %v, want nil", err)
			}
			aStopped := time.Now()
			if h := viewOf(atReturn).Holder; h != "a" {
				t.Errorf("holder as a's work returned = %q, want a", h)
			} else if !atReturn.Spec.RenewTime.After(atCancel.Spec.RenewTime.Time) {
				t.Errorf("a did not renew while its work wound down: renewTime %v, then %v",
					atCancel.Spec.RenewTime.Time, atReturn.Spec.RenewTime.Time)
			}
			leaderOf(t, tt.atMost+slack, b)
			took := time.Since(aStopped)
			if took < tt.atLeast || took > tt.atMost {
				t.Errorf("b led %v after a's Run returned, want within [%v, %v]", took, tt.atLeast, tt.atMost)
			}
			aReturned, _ := env.tl.last("a", "returned")
			bStarted := env.tl.await(t, "b", "started")
			if !bStarted.After(aReturned) {
				t.Errorf("b started before a's work returned; timeline:\n%s", env.tl)
			}

			// Every state the lease passed through, from a's last renewal to b's first.
			var holders []string
			var released *object.Lease
			for len(holders) == 0 || holders[len(holders)-1] != "b" {
				ev, err := w.Next()
				if err != nil {
					t.Fatal(err)
				}
				h := deref(ev.Object.Spec.HolderIdentity)
				if len(holders) == 0 || holders[len(holders)-1] != h {
					holders = append(holders, h)
				}
				if h == "" {
					released = ev.Object
				}
			}
			if d := cmp.Diff(tt.wantHolders, holders); d != "" {
				t.Errorf("holders (-want +got):\n%s", d)
			}
			if released != nil {
				if d := cmp.Diff(holderView{"", 1, 0}, viewOf(released)); d != "" {
					t.Errorf("released lease (-want +got):\n%s", d)
				}
			}
			if got := viewOf(env.lease(t)).Transitions; got != 1 {
				t.Errorf("leaseTransitions after the handover = %d, want 1", got)
			}
		})
	}
}

// A leader that cannot reach the apiserver must stop its work within RenewDeadline of its
// last renewal, before the standby, which waits LeaseDuration, can take over.
func TestLeaderCutOff(t *testing.T) {
	tests := []struct {
		name string
		cut  func(env *env)
	}{
		{"requests fail", func(env *env) {
			env.sim.Faults().FailRequests(1<<30, http.StatusServiceUnavailable, 0,
				func(r *http.Request) bool { return r.UserAgent() == "a" })
		}},
		{"requests hang", func(env *env) { env.front.hang("a") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t)
			a := newCandidate(t, env, "a", candidateOptions{})
			leaderOf(t, 2*time.Second, a)
			b := newCandidate(t, env, "b", candidateOptions{})
			testwait.Eventually(t, 2*time.Second, func() bool { return b.e.Leader() == "a" }, "waiting for b to see a")

			cut := time.Now()
			tt.cut(env)
			if err := a.returned(t, renewDeadline+slack); !errors.Is(err, ErrLeadershipLost) {
				t.Errorf("a's Run = %v, want ErrLeadershipLost", err)
			}
			lost, ok := env.tl.last("a", "cancelled")
			if !ok {
				t.Fatalf("a's work was never cancelled; timeline:\n%s", env.tl)
			}
			if _, ok := env.tl.last("a", "stopped"); !ok {
				t.Errorf("OnStoppedLeading not called; timeline:\n%s", env.tl)
			}
			// a last renewed at most a RetryPeriod (and a request) before the cut.
			if d := lost.Sub(cut); d > renewDeadline+slack || d < renewDeadline-2*retryPeriod {
				t.Errorf("a's work was cancelled %v after the cut, want about RenewDeadline (%v)", d, renewDeadline)
			}
			if a.e.IsLeader() || a.e.Check() != nil {
				t.Errorf("after losing: IsLeader() = %v, Check() = %v", a.e.IsLeader(), a.e.Check())
			}

			leaderOf(t, 2*time.Second+2*retryPeriod+slack, b)
			bStarted := env.tl.await(t, "b", "started")
			if !lost.Before(bStarted) {
				t.Errorf("b started leading at %v, before a's work was cancelled at %v", bStarted, lost)
			}
			t.Logf("a cancelled %v after the cut, b started %v after that", lost.Sub(cut), bStarted.Sub(lost))
			if d := cmp.Diff(holderView{"b", 2, 1}, viewOf(env.lease(t))); d != "" {
				t.Errorf("lease after the takeover (-want +got):\n%s", d)
			}
		})
	}
}

// A lease left by a candidate that died is taken over once this candidate has seen it
// unchanged for its leaseDurationSeconds, whatever the renewTime inside says: that was
// written by another machine's clock.
func TestExpiredLeaseTakenOver(t *testing.T) {
	str := func(s string) *string { return &s }
	i32 := func(n int32) *int32 { return &n }
	at := func(d time.Duration) *object.MicroTime { t := object.NewMicroTime(time.Now().Add(d)); return &t }
	tests := []struct {
		name            string
		spec            object.LeaseSpec
		atLeast, atMost time.Duration
		want            holderView
		keepsAcquire    bool
	}{
		{"renewed long ago by the holder's clock",
			object.LeaseSpec{HolderIdentity: str("dead"), LeaseDurationSeconds: i32(1), RenewTime: at(-time.Hour), AcquireTime: at(-2 * time.Hour), LeaseTransitions: i32(3)},
			time.Second, time.Second + 2*retryPeriod + slack, holderView{"a", 2, 4}, false},
		{"renewed in the future by a holder's skewed clock",
			object.LeaseSpec{HolderIdentity: str("dead"), LeaseDurationSeconds: i32(1), RenewTime: at(time.Hour), AcquireTime: at(time.Hour), LeaseTransitions: i32(3)},
			time.Second, time.Second + 2*retryPeriod + slack, holderView{"a", 2, 4}, false},
		{"no duration in the record: this candidate's own",
			object.LeaseSpec{HolderIdentity: str("dead"), LeaseTransitions: i32(3)},
			leaseDuration, leaseDuration + 2*retryPeriod + slack, holderView{"a", 2, 4}, false},
		{"released",
			object.LeaseSpec{HolderIdentity: str(""), LeaseDurationSeconds: i32(1), RenewTime: at(0), LeaseTransitions: i32(3)},
			0, slack, holderView{"a", 2, 4}, false},
		{"no holder field at all", object.LeaseSpec{}, 0, slack, holderView{"a", 2, 1}, false},
		{"held by this identity before a restart",
			object.LeaseSpec{HolderIdentity: str("a"), LeaseDurationSeconds: i32(15), RenewTime: at(0), AcquireTime: at(-time.Minute), LeaseTransitions: i32(3)},
			0, slack, holderView{"a", 2, 3}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t)
			env.putLease(t, tt.spec)
			start := time.Now()
			a := newCandidate(t, env, "a", candidateOptions{})
			leaderOf(t, tt.atMost+slack, a)
			took := time.Since(start)
			if took < tt.atLeast || took > tt.atMost {
				t.Errorf("a led after %v, want within [%v, %v]", took, tt.atLeast, tt.atMost)
			}
			l := env.lease(t)
			if d := cmp.Diff(tt.want, viewOf(l)); d != "" {
				t.Errorf("lease after the takeover (-want +got):\n%s", d)
			}
			acquired := l.Spec.AcquireTime.Time
			if tt.keepsAcquire {
				if !acquired.Equal(tt.spec.AcquireTime.Time) {
					t.Errorf("acquireTime = %v, want it kept at %v", acquired, tt.spec.AcquireTime.Time)
				}
			} else if acquired.Before(start.Truncate(time.Microsecond)) || !acquired.Equal(l.Spec.RenewTime.Time) {
				t.Errorf("acquireTime = %v, renewTime = %v: want both the takeover's time", acquired, l.Spec.RenewTime.Time)
			}
		})
	}
}

// Another writer changes the lease between a candidate's GET and its UPDATE. The update
// carries the resourceVersion read, the apiserver refuses it, and the candidate must not
// take the refusal for a win.
func TestConflictingWriteIsNeverAWin(t *testing.T) {
	str := func(s string) *string { return &s }
	i32 := func(n int32) *int32 { return &n }
	intruder := func(l *object.Lease) {
		now := object.NewMicroTime(time.Now())
		l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = str("intruder"), i32(30), &now
	}
	annotate := func(l *object.Lease) { l.Annotations = map[string]string{"note": "kept"} }
	tests := []struct {
		name         string
		leadFirst    bool                // interfere with a renewal rather than with the acquisition
		change       func(*object.Lease) // the other writer's
		wantLost     bool
		wantHolder   string
		wantLeading  bool
		wantAnnotate bool
	}{
		{"acquisition raced by another holder", false, intruder, false, "intruder", false, false},
		{"renewal raced by another holder", true, intruder, true, "intruder", false, false},
		{"renewal raced by an unrelated change", true, annotate, false, "a", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t)
			if !tt.leadFirst {
				env.putLease(t, object.LeaseSpec{HolderIdentity: str("dead"), LeaseDurationSeconds: i32(1)})
			}
			var raced sync.Once
			racedAt := make(chan struct{})
			var racedTime time.Time // once racedAt is closed
			interfere := func(w http.ResponseWriter, r *http.Request) bool {
				if r.UserAgent() == "a" && r.Method == http.MethodPut {
					raced.Do(func() {
						l := env.leaseOrZero(t)
						tt.change(l)
						if _, err := env.leases.Update(context.Background(), l); err != nil {
							t.Errorf("interfering write: %v", err)
						}
						racedTime = time.Now()
						close(racedAt)
					})
				}
				return false // a's own update goes on, now with a stale resourceVersion
			}
			var a *candidate
			if tt.leadFirst {
				a = newCandidate(t, env, "a", candidateOptions{})
				leaderOf(t, 2*time.Second, a)
				env.front.setIntercept(interfere)
			} else {
				env.front.setIntercept(interfere)
				a = newCandidate(t, env, "a", candidateOptions{})
			}
			select {
			case <-racedAt:
			case <-time.After(3 * time.Second):
				t.Fatal("a never sent an update")
			}
			if tt.wantLost {
				if err := a.returned(t, 2*retryPeriod+slack); !errors.Is(err, ErrLeadershipLost) {
					t.Errorf("a's Run = %v, want ErrLeadershipLost at its next attempt", err)
				}
			} else if n := env.front.readsBy("a") + 3; !env.front.awaitReads("a", n, 3*time.Second) {
				// Several more attempts: by a's third read of the lease from here, two whole
				// attempts have followed the raced one.
				t.Fatalf("a made fewer than two whole attempts in 3s after the raced write; timeline:\n%s", env.tl)
			}
			if got := a.e.IsLeader(); got != tt.wantLeading {
				t.Errorf("IsLeader() = %v, want %v; timeline:\n%s", got, tt.wantLeading, env.tl)
			}
			if !tt.leadFirst {
				if _, ok := env.tl.last("a", "started"); ok {
					t.Errorf("a's work started although its acquisition was refused; timeline:\n%s", env.tl)
				}
			}
			l := env.lease(t)
			if got := deref(l.Spec.HolderIdentity); got != tt.wantHolder {
				t.Errorf("holder = %q, want %q", got, tt.wantHolder)
			}
			if got := a.e.Leader(); got != tt.wantHolder {
				t.Errorf("Leader() = %q, want %q", got, tt.wantHolder)
			}
			// Renewals write back the lease as read: another writer's fields survive.
			if tt.wantAnnotate {
				if l.Spec.RenewTime == nil || !l.Spec.RenewTime.After(racedTime) {
					t.Errorf("renewTime %v: a has not renewed since the other writer's change at %v", l.Spec.RenewTime, racedTime)
				}
				if l.Annotations["note"] != "kept" {
					t.Errorf("annotations after renewals = %v, want the other writer's note kept", l.Annotations)
				}
			}
		})
	}
}
