package shardgroup

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/lease"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
)

// owners is who the ledger shows working where, as an assignment.
func (h *harness) owners() shard.Assignment {
	a := shard.Assignment{}
	for _, tm := range h.all() {
		if s := h.led.holding(tm.name); !s.IsEmpty() {
			a[tm.id] = s
		}
	}
	return a
}

func (h *harness) lease(id string) (*object.Lease, bool) {
	h.t.Helper()
	l, err := h.leases.Get(context.Background(), leaseName(group, id))
	if object.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		h.t.Fatal(err)
	}
	return l, true
}

func TestOneMemberTakesEverythingAndLeaves(t *testing.T) {
	h := newHarness(t)
	a := h.start("a")
	took := h.until(time.Minute, "a acting on everything", func() bool { return h.converged("a") })
	if took > step {
		t.Errorf("a alone took %v to act on everything, want at once", took)
	}
	sel, ok := a.m.Acting()
	if want := (shard.Selector{Field: shard.Namespace, Ranges: []shard.Range{shard.Whole()}}); !ok || !cmp.Equal(sel, want) {
		t.Errorf("Acting() = %v, %v; want %v", sel, ok, want)
	}
	h.advance(5 * DefaultRetryPeriod) // a settled member publishes its load (none: it counts nothing)
	l, ok := h.lease("a")
	if !ok {
		t.Fatal("no Lease for a")
	}
	if d := cmp.Diff(map[string]string{GroupLabel: group}, l.Labels); d != "" {
		t.Errorf("labels (-want +got):\n%s", d)
	}
	whole := shard.WholeSet().String()
	wantAnn := map[string]string{ActingAnnotation: whole, TargetAnnotation: whole, IncarnationAnnotation: a.m.Status().Incarnation, LoadAnnotation: ""}
	if d := cmp.Diff(wantAnn, l.Annotations); d != "" {
		t.Errorf("annotations (-want +got):\n%s", d)
	}
	if got := lease.Holder(l.Spec); got != "a" {
		t.Errorf("holderIdentity %q, want a", got)
	}
	if got := *l.Spec.LeaseDurationSeconds; got != 15 {
		t.Errorf("leaseDurationSeconds %d, want 15", got)
	}

	// Renewals every RetryPeriod, and nothing else changes.
	rv := l.ResourceVersion
	h.advance(DefaultRetryPeriod)
	if l2, _ := h.lease("a"); l2.ResourceVersion == rv || !l2.Spec.RenewTime.After(l.Spec.RenewTime.Time) {
		t.Errorf("the Lease was not renewed in a RetryPeriod: rv %s → %s, renewTime %v → %v", rv, l2.ResourceVersion, l.Spec.RenewTime, l2.Spec.RenewTime)
	}

	if err := h.stop("a"); err != nil {
		t.Errorf("Run = %v, want nil", err)
	}
	if _, ok := h.lease("a"); ok {
		t.Error("a's Lease is still there after it left")
	}
	if len(h.owners()) != 0 {
		t.Errorf("work left behind: %v", h.owners())
	}
	if a.m.Acts("default") || admits(a, "default") {
		t.Error("Acts, or the Guard admits, after Run returned")
	}
}

// Members join one at a time; each takes about 1/N of the space, nearly all of it from
// the others, and shard.Moved says exactly how much moved.
func TestJoin(t *testing.T) {
	h := newHarness(t)
	h.start("a")
	h.until(time.Minute, "a converged", func() bool { return h.converged("a") })
	ids := []string{"a"}
	for _, id := range []string{"b", "c", "d"} {
		before := h.owners()
		h.start(id)
		next := append(slices.Clone(ids), id)
		took := h.until(time.Minute, id+" joined", func() bool { return h.converged(next...) })
		after := h.owners()

		plan := shard.EqualPlan(shard.DefaultBuckets)
		wantMoved := shard.Moved(plan.Assign(ids), plan.Assign(next))
		got := shard.Moved(before, after)
		if math.Abs(got-wantMoved) > 1e-9 {
			t.Errorf("%s joining: %.4f of the space changed hands, shard.Moved says %.4f", id, got, wantMoved)
		}
		if ideal := 1 / float64(len(next)); math.Abs(got-ideal) > 0.1 {
			t.Errorf("%s joining moved %.3f, want about 1/%d", id, got, len(next))
		}
		// A hand-over costs a few rounds: the others notice the newcomer (at once, through
		// their watch), release, and the newcomer claims and checks.
		if took > 3*DefaultRetryPeriod {
			t.Errorf("%s joining took %v of fake time, want a few rounds at most", id, took)
		}
		t.Logf("%s joined %v: moved %.3f (ideal %.3f)", id, took, got, 1/float64(len(next)))
		ids = next
	}
	st := h.member("a").m.Status()
	if d := cmp.Diff([]string{"a", "b", "c", "d"}, st.Members); d != "" {
		t.Errorf("a's members (-want +got):\n%s", d)
	}
}

// A member that stops dead (it neither renews nor releases; its context is not
// cancelled) keeps its part until its Lease expires in the others' eyes, then they take
// it over within a round or two; its own Guard refused writes from its renew deadline.
func TestMemberKilled(t *testing.T) {
	h := newHarness(t)
	h.startConverged("a", "b", "c")
	c := h.member("c")
	held := c.m.Status().Acting
	lastRenew := c.m.Status().RenewedAt
	killedAt, mark := h.clk.Now(), h.led.mark()
	h.kill("c")

	took := h.until(time.Minute, "a and b take c's part", func() bool { return h.converged("a", "b") })
	e, ok := h.led.first(mark, "acquire", held, "a", "b")
	if !ok {
		t.Fatalf("nobody acquired c's part; ledger:\n%s", h.led)
	}
	if earliest := lastRenew.Add(DefaultLeaseDuration); e.at.Before(earliest) {
		t.Errorf("%s acquired c's part at %v, before c's Lease could expire (%v)", e.member, e.at.Sub(epoch), earliest.Sub(epoch))
	}
	if latest := killedAt.Add(DefaultLeaseDuration + 2*DefaultRetryPeriod + step); e.at.After(latest) {
		t.Errorf("c's part taken over at %v, want by lease expiry and a retry period or two (%v)", e.at.Sub(epoch), latest.Sub(epoch))
	}
	t.Logf("c killed at %v (last renewal %v), its part taken at %v, converged after %v",
		killedAt.Sub(epoch), lastRenew.Sub(epoch), e.at.Sub(epoch), took)

	// Nobody will ever delete c's Lease but the others, once it has been silent for
	// long: staleFactor durations, and a round.
	gc := h.until(15*DefaultLeaseDuration, "c's Lease collected", func() bool { _, ok := h.lease("c"); return !ok })
	if since := h.clk.Now().Sub(lastRenew); since < staleFactor*DefaultLeaseDuration || since > staleFactor*DefaultLeaseDuration+DefaultLeaseDuration+DefaultRetryPeriod {
		t.Errorf("c's Lease collected %v after its last renewal, want %v and a round", since, staleFactor*DefaultLeaseDuration)
	}
	if !h.converged("a", "b") {
		t.Errorf("collecting c's Lease disturbed a and b:\n%s", h.statuses())
	}
	t.Logf("c's Lease collected %v later", gc)
}

// A member frozen past its Lease (SIGSTOP for 24 s) and then resumed: from its renew
// deadline on, its Guard refuses every write though its loop has not run (a process
// wakes with its goroutines mid-sync); the others take its part once its Lease expires;
// on waking it refuses what it would have written, finds its claims lapsed, releases
// everything, and joins again with nothing until the group gives it a part back.
func TestFrozenMemberResumes(t *testing.T) {
	h := newHarness(t)
	h.startConverged("a", "b", "c")
	c := h.member("c")
	held := c.m.Status().Acting
	var ns string // one of c's namespaces
	for _, s := range sampleNamespaces {
		if held.Has(s) {
			ns = s
			break
		}
	}
	lastRenew, mark := c.m.Status().RenewedAt, h.led.mark()
	h.freeze("c")
	h.advance(24 * time.Second) // checkActs at every step: c's Guard closes at its deadline
	if e, ok := h.led.first(mark, "acquire", held, "a", "b"); !ok || e.at.Before(lastRenew.Add(DefaultLeaseDuration)) {
		t.Fatalf("c's part not taken over after its Lease expired (%v, %v); ledger:\n%s", e, ok, h.led)
	}
	if !h.converged("a", "b") {
		t.Fatalf("a and b did not take c's part while it was frozen:\n%s", h.statuses())
	}

	// A write its sync goroutines go on to send as the process wakes, before its loop
	// has run a round, is refused, and says why.
	_, _, err := c.m.Guard().Admit(listwatch.Write{Method: http.MethodPost, Namespace: ns, Resource: "pods"})
	var fenced *FencedError
	if !errors.As(err, &fenced) || fenced.Late < 24*time.Second-DefaultRenewDeadline {
		t.Fatalf("c's write on waking: %v; want refused, well past its deadline", err)
	}
	if c.m.Acts(ns) {
		t.Fatalf("c acts on %s on waking", ns)
	}
	h.thaw("c") // SIGCONT
	took := h.until(time.Minute, "c back", func() bool { return h.converged("a", "b", "c") })
	if n := testutilCounter(t, c.reg, "shardgroup_losses_total"); n != 1 {
		t.Errorf("c's shardgroup_losses_total = %v, want 1", n)
	}
	if n := metricOf(t, c.reg, "shardgroup_fenced_writes_total", "reason", "deadline").GetCounter().GetValue(); n < 1 {
		t.Errorf("c's fenced writes (deadline) = %v, want at least the one refused", n)
	}
	t.Logf("c frozen 24 s (last renewal %v); back in the group %v after waking", lastRenew.Sub(epoch), took)
}

// A process started with the ID of a member that still lives (a pod force-deleted while
// its process runs on, a restart on another node) waits: it honours the other's claims
// as a peer's, both report the duplicate, and it takes over only once the other's Lease
// is released. Never two writers.
func TestSameIDWhileTheOldLives(t *testing.T) {
	h := newHarness(t)
	h.startConverged("a", "b")
	a := h.member("a")
	mark := h.led.mark()
	a2 := h.start("a2", withID("a"))
	h.until(time.Minute, "a2 waits and both report it", func() bool {
		return a2.m.Status().State == StateWaiting && a2.m.Status().Duplicate == a.m.Status().Incarnation &&
			a.m.Status().Duplicate == a2.m.Status().Incarnation
	})
	h.advance(3 * DefaultLeaseDuration) // a keeps renewing: a2 keeps waiting
	if _, ok := h.led.first(mark, "acquire", shard.WholeSet(), "a2"); ok || !h.converged("a", "b") {
		t.Fatalf("a2 acquired while a lived, or the group was disturbed:\n%s\nledger:\n%s", h.statuses(), h.led)
	}
	if n := metricOf(t, a.reg, "shardgroup_duplicate").GetGauge().GetValue(); n != 1 {
		t.Errorf("a's shardgroup_duplicate = %v, want 1", n)
	}
	g, err := ReadGroup(context.Background(), a.client, namespace, group)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(g.Members, func(s MemberState) bool { return s.ID == "a" }); i < 0 || !g.Members[i].Duplicate(h.clk.Now()) ||
		g.Members[i].Contender != a2.m.Status().Incarnation {
		t.Errorf("ReadGroup does not show the duplicate: %+v", g.Members)
	}

	// The old one goes (SIGTERM): the new one takes its Lease over at once.
	if err := h.stop("a"); err != nil {
		t.Fatal(err)
	}
	took := h.until(time.Minute, "a2 takes a's place", func() bool { return h.converged("a2", "b") })
	if st := a2.m.Status(); st.Duplicate != "" {
		t.Errorf("a2 still reports a duplicate: %+v", st)
	}
	t.Logf("a2 in a's place %v after a left", took)
}

// The same with the old process frozen (SIGSTOP) when the new one starts: the new one
// takes the Lease over once it expires; the old one, woken, finds it taken, stops,
// releases everything, and waits in its turn. Never two writers.
func TestSameIDWhileTheOldIsFrozen(t *testing.T) {
	h := newHarness(t)
	h.startConverged("a", "b")
	a := h.member("a")
	lastRenew := a.m.Status().RenewedAt
	h.freeze("a")
	a2 := h.start("a2", withID("a"))
	h.until(time.Minute, "a2 in a's place", func() bool { return h.converged("a2", "b") })
	if e, _ := h.led.first(0, "acquire", shard.WholeSet(), "a2"); e.at.Before(lastRenew.Add(DefaultLeaseDuration)) {
		t.Errorf("a2 acquired at %v, before a's Lease could expire (%v)", e.at.Sub(epoch), lastRenew.Add(DefaultLeaseDuration).Sub(epoch))
	}
	h.thaw("a")
	h.until(time.Minute, "a waits for a2", func() bool {
		st := a.m.Status()
		return st.State == StateWaiting && st.Duplicate == a2.m.Status().Incarnation && h.led.holding("a").IsEmpty()
	})
	h.advance(2 * DefaultLeaseDuration)
	if !h.converged("a2", "b") {
		t.Errorf("the woken a disturbed the group:\n%s", h.statuses())
	}
}

// On SIGTERM (Run's context cancelled) a member releases everything, publishes that,
// and deletes its Lease: the others take over at once, not after LeaseDuration.
func TestSIGTERMHandsOverAtOnce(t *testing.T) {
	h := newHarness(t)
	h.startConverged("a", "b", "c")
	held := h.member("c").m.Status().Acting
	at, mark := h.clk.Now(), h.led.mark()
	if err := h.stop("c"); err != nil {
		t.Fatalf("c's Run = %v, want nil", err)
	}
	if _, ok := h.lease("c"); ok {
		t.Error("c's Lease survived its leaving")
	}
	took := h.until(time.Minute, "a and b take c's part", func() bool { return h.converged("a", "b") })
	released, _ := h.led.first(mark, "released", held, "c")
	acquired, ok := h.led.first(mark, "acquire", held, "a", "b")
	if !ok {
		t.Fatalf("nobody acquired c's part; ledger:\n%s", h.led)
	}
	if d := acquired.at.Sub(at); d > 2*DefaultRetryPeriod {
		t.Errorf("c's part taken over %v after SIGTERM, want at once (a round or so), far from LeaseDuration", d)
	}
	t.Logf("SIGTERM at %v: c released at %v, a or b acquired at %v, converged after %v",
		at.Sub(epoch), released.at.Sub(epoch), acquired.at.Sub(epoch), took)
}

// A member cut off from the apiserver stops acting by its RenewDeadline, though it runs
// on; the others take over only after LeaseDuration; once the network heals it joins
// again and gets its share back.
func TestPartition(t *testing.T) {
	h := newHarness(t)
	h.startConverged("a", "b", "c")
	c := h.member("c")
	held := c.m.Status().Acting
	lastRenew := c.m.Status().RenewedAt
	cut, mark := h.clk.Now(), h.led.mark()
	h.partition("c")

	h.until(time.Minute, "c gives up", func() bool { return testutilCounter(t, c.reg, "shardgroup_losses_total") == 1 })
	stopped, ok := h.led.first(mark, "release", held, "c")
	if !ok {
		t.Fatalf("c lost its Lease without releasing; ledger:\n%s", h.led)
	}
	if deadline := lastRenew.Add(DefaultRenewDeadline); stopped.at.After(deadline.Add(step)) {
		t.Errorf("c stopped at %v, after its renew deadline %v", stopped.at.Sub(epoch), deadline.Sub(epoch))
	}
	if _, ok := c.m.Acting(); ok {
		t.Error("c still reports acting after losing its Lease")
	}

	h.until(time.Minute, "a and b take c's part", func() bool { return h.converged("a", "b") })
	taken, _ := h.led.first(mark, "acquire", held, "a", "b")
	if earliest := lastRenew.Add(DefaultLeaseDuration); taken.at.Before(earliest) {
		t.Errorf("%s took c's part at %v, before c's Lease could expire (%v)", taken.member, taken.at.Sub(epoch), earliest.Sub(epoch))
	}
	if n := testutilCounter(t, c.reg, "shardgroup_losses_total"); n != 1 {
		t.Errorf("c's shardgroup_losses_total = %v, want 1", n)
	}

	h.heal()
	took := h.until(time.Minute, "c back", func() bool { return h.converged("a", "b", "c") })
	t.Logf("cut at %v (c's last renewal %v): c stopped at %v, others took over at %v; healed, back after %v",
		cut.Sub(epoch), lastRenew.Sub(epoch), stopped.at.Sub(epoch), taken.at.Sub(epoch), took)
}

// Members started at the same instant claim the same parts at first (each sees only
// itself); the check read after every claim keeps any part from being acquired twice,
// and they settle on the assignment.
func TestStartTogether(t *testing.T) {
	for run := range 3 {
		h := newHarness(t)
		ids := []string{"a", "b", "c", "d"}
		for _, id := range ids {
			h.start(id)
		}
		took := h.until(2*time.Minute, "all converged", func() bool { return h.converged(ids...) })
		t.Logf("run %d: converged after %v; %d claims retracted for a member that also targeted them", run, took,
			strings.Count(h.logs.String(), "retracting a claim"))
		h.stopAll()
		h.led.check(t)
	}
}

// A Release that takes its time holds the hand-over: the part leaving stays claimed, its
// new owner waits, and nobody acts on it meanwhile, as long as the release keeps within
// HandoverTimeout (the releasing member keeps renewing).
func TestSlowRelease(t *testing.T) {
	h := newHarness(t)
	a := h.start("a")
	h.until(time.Minute, "a converged", func() bool { return h.converged("a") })
	open := h.led.gate("a")
	defer open()
	b := h.start("b")
	h.until(time.Minute, "a releasing", func() bool { return h.led.isHeld("a") })
	heldAt := h.clk.Now()
	releasing := shard.Assign([]string{"a", "b"}, shard.DefaultBuckets)["b"]
	if got := a.m.Status().Claimed; !got.Intersect(releasing).Equal(releasing) {
		t.Fatalf("a's claims %v do not cover what it releases", got)
	}
	h.advance(3 * DefaultLeaseDuration)
	if e, ok := h.led.first(0, "acquire", releasing, "b"); ok {
		t.Fatalf("b acquired %v while a's Release still ran", e.part)
	}
	for _, ns := range sampleNamespaces {
		if releasing.Has(ns) && (a.m.Acts(ns) || b.m.Acts(ns)) {
			t.Fatalf("someone acts on %s, which is being released", ns)
		}
	}
	if st := a.m.Status(); st.State != StateMember || !st.Acting.Equal(shard.WholeSet().Minus(releasing)) {
		t.Errorf("a during its Release: %s, acting %.3f; want renewing and acting on its own part", st.State, st.Acting.Fraction())
	}
	if err := a.m.Check(); err != nil {
		t.Errorf("Check during a hand-over within its bound: %v", err)
	}
	g, err := ReadGroup(context.Background(), h.member("a").client, namespace, group)
	if err != nil {
		t.Fatal(err)
	}
	if ms := g.Members; len(ms) != 2 || !ms[0].Acting.Equal(shard.WholeSet()) || !ms[1].Acting.IsEmpty() || !ms[1].Target.Equal(releasing) {
		t.Errorf("ReadGroup during the hand-over: %+v", ms)
	}

	openedAt := h.clk.Now()
	open()
	took := h.until(time.Minute, "b takes its part", func() bool { return h.converged("a", "b") })
	if took > 2*DefaultRetryPeriod {
		t.Errorf("b took %v after the Release returned, want at once", took)
	}
	if n := testutilHistogramCount(t, b.reg, "shardgroup_handover_duration_seconds"); n == 0 {
		t.Error("b observed no hand-over")
	}
	t.Logf("Release held from about %v to %v; b acting %v after it returned", heldAt.Sub(epoch), openedAt.Sub(epoch), took)
}

// A Release that never returns, not even when its context ends: past HandoverTimeout
// the member gives everything up the safe way (it stops acting at once and stops
// renewing, so the others take over once its Lease expires), and Check fails until the
// Release returns; then it joins again.
func TestStuckReleaseGivesUpSafely(t *testing.T) {
	h := newHarness(t)
	var hang atomic.Bool
	stuck := make(chan struct{})
	defer close(stuck)
	a := h.start("a", func(o *Options) {
		o.HandoverTimeout = time.Minute
		o.Release = func(ctx context.Context, part shard.Set) error {
			if hang.Load() {
				<-stuck // ignores ctx
			}
			return h.led.release(ctx, "a", part)
		}
	})
	h.until(time.Minute, "a converged", func() bool { return h.converged("a") })
	hang.Store(true)
	h.start("b")
	h.until(2*time.Minute, "a gives up", func() bool { return testutilCounter(t, a.reg, "shardgroup_losses_total") == 1 })
	if err := a.m.Check(); err == nil || !strings.Contains(err.Error(), "HandoverTimeout") {
		t.Errorf("Check of a stuck member = %v, want the stuck hand-over named", err)
	}
	for _, ns := range sampleNamespaces {
		if a.m.Acts(ns) || admits(a, ns) {
			t.Fatalf("a still acts on %s after giving up", ns)
		}
	}
	lostAt := h.clk.Now()
	took := h.until(time.Minute, "b takes everything", func() bool {
		st := h.member("b").m.Status()
		return st.Acting.Equal(shard.WholeSet()) && st.State == StateMember
	})
	if took+step < DefaultLeaseDuration-DefaultRenewDeadline {
		t.Errorf("b took a's part %v after a gave up, before a's Lease could expire", took)
	}
	t.Logf("a gave up at %v; b acting on everything %v later", lostAt.Sub(epoch), took)
}

// A write the Guard let through and that is still in flight holds the Release of its
// namespace back until it is answered: once the member says it has released, nothing it
// sent can land.
func TestReleaseWaitsForWritesInFlight(t *testing.T) {
	h := newHarness(t)
	a := h.start("a")
	h.until(time.Minute, "a converged", func() bool { return h.converged("a") })
	leaving := shard.Assign([]string{"a", "b"}, shard.DefaultBuckets)["b"]
	var ns string
	for _, s := range sampleNamespaces {
		if leaving.Has(s) {
			ns = s
			break
		}
	}
	done, within, err := a.m.Guard().Admit(listwatch.Write{Method: http.MethodPatch, Namespace: ns, Resource: "pods", Name: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if within <= 0 || within > DefaultRenewDeadline {
		t.Errorf("a write may take %v, want at most the time to the renew deadline", within)
	}
	mark := h.led.mark()
	h.start("b")
	h.advance(4 * DefaultRetryPeriod)
	if _, ok := h.led.first(mark, "release", leaving, "a"); ok {
		t.Fatal("Release was called while a write in its part was in flight")
	}
	if admits(a, ns) {
		t.Fatal("the Guard admits a new write in a namespace being handed over")
	}
	done()
	h.until(time.Minute, "a and b converged", func() bool { return h.converged("a", "b") })
}

// A failing Acquire gives the claim up and tries again later; nobody acts meanwhile.
func TestAcquireFails(t *testing.T) {
	h := newHarness(t)
	h.led.failAcquires("a", 2)
	a := h.start("a")
	h.until(time.Minute, "a converged", func() bool { return h.converged("a") })
	if st := a.m.Status(); !st.Acting.Equal(shard.WholeSet()) {
		t.Errorf("a acts on %v", st.Acting)
	}
}

// A member's Lease deleted by hand while it acts: the others keep honouring its claims
// until the deletion is a LeaseDuration old (they cannot tell it from a member still at
// work); the member notices at its next renewal, stops, and joins again.
func TestLeaseDeletedByHand(t *testing.T) {
	h := newHarness(t)
	h.startConverged("a", "b")
	held := h.member("b").m.Status().Acting
	at, mark := h.clk.Now(), h.led.mark()
	if err := h.leases.Delete(context.Background(), leaseName(group, "b"), listwatch.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.until(time.Minute, "b joins again", func() bool { return h.converged("a", "b") && h.member("b").m.Status().RenewedAt.After(at) })
	if e, ok := h.led.first(mark, "acquire", held, "a"); ok && e.at.Before(at.Add(DefaultLeaseDuration)) {
		t.Errorf("a acquired b's part %v after its Lease was deleted, before the deletion was LeaseDuration old", e.at.Sub(at))
	}
	if e, ok := h.led.first(mark, "release", held, "b"); !ok || e.at.After(at.Add(DefaultRetryPeriod+step)) {
		t.Errorf("b did not stop within a round of its Lease's deletion; ledger:\n%s", h.led)
	}
}

// A Lease of the group whose claims do not parse may claim anything: a member acquires
// nothing until it expires, then everything.
func TestUnreadableClaims(t *testing.T) {
	h := newHarness(t)
	x := testLease("x", "", "", "all of it", "")
	x.Namespace = namespace
	if _, err := h.leases.Create(context.Background(), x); err != nil {
		t.Fatal(err)
	}
	mark := h.led.mark()
	h.start("a")
	took := h.until(time.Minute, "a alone", func() bool { return h.converged("a") })
	e, _ := h.led.first(mark, "acquire", shard.WholeSet(), "a")
	if e.at.Before(epoch.Add(DefaultLeaseDuration)) {
		t.Errorf("a acquired %v at %v, before x's Lease expired", e.part, e.at.Sub(epoch))
	}
	if n := strings.Count(h.logs.String(), "claims do not parse"); n != 1 {
		t.Errorf("the unreadable claims were logged %d times, want once", n)
	}
	t.Logf("a acting on everything after %v", took)
}

// Numbered tenants, which FNV-1a crowds into one 256th of the space, all land on one
// member of an equal plan; once the members have settled and published their loads,
// the first of them cuts a plan where the load is, and the group hands over to it: each
// member ends with about a third of the objects.
func TestPlanBalancesByLoad(t *testing.T) {
	h := newHarness(t)
	objects := map[string]int64{}
	for i := range 30 {
		objects[fmt.Sprintf("tenant-%02d", i)] = 12
	}
	points := shard.PointsOf(objects)
	for _, id := range []string{"a", "b", "c"} {
		h.start(id, func(o *Options) {
			o.Load = func() map[string]int64 { return objects } // each member keeps what it acts on
		})
	}
	took := h.until(5*time.Minute, "a plan by load, converged on", func() bool {
		return h.converged("a", "b", "c") && h.member("a").m.Status().Plan.Len() == 30
	})
	a, _ := h.expected([]string{"a", "b", "c"}, []string{"a", "b", "c"})
	if b := shard.Balance(a, points); b > 1.2 {
		t.Errorf("the busiest member holds %.2f × the mean", b)
	}
	if b := shard.Balance(shard.Assign([]string{"a", "b", "c"}, shard.DefaultBuckets), points); b < 2.9 {
		t.Errorf("an equal plan would have held %.2f × the mean: the test shows nothing", b)
	}
	if n := testutilCounter(t, h.member("a").reg, "shardgroup_plans_total"); n != 1 {
		t.Errorf("a cut %v plans, want 1", n)
	}
	// The plan stands: with every member's load within bounds, nobody cuts again.
	h.advance(2 * planCooldown * DefaultLeaseDuration)
	if n := testutilCounter(t, h.member("a").reg, "shardgroup_plans_total"); n != 1 || !h.converged("a", "b", "c") {
		t.Errorf("the plan was cut again (%v) or the group moved", n)
	}
	t.Logf("balanced after %v: busiest %.2f × the mean", took, shard.Balance(a, points))
}

// Options.Acting hears of a part once Acts and the Guard let it through, never before:
// a controller that queues its keys there must find the gate open.
func TestActingIsAnnouncedOnceOpen(t *testing.T) {
	h := newHarness(t)
	var mu sync.Mutex
	var heard []string
	h.start("a", func(o *Options) {
		o.Acting = func(part shard.Set) {
			mu.Lock()
			defer mu.Unlock()
			for _, ns := range sampleNamespaces {
				if part.Has(ns) && !h.member("a").m.Acts(ns) {
					heard = append(heard, "closed "+ns)
					return
				}
			}
			heard = append(heard, fmt.Sprintf("%.3f", part.Fraction()))
		}
	})
	h.until(time.Minute, "a converged", func() bool { return h.converged("a") })
	h.start("b")
	h.until(time.Minute, "a, b converged", func() bool { return h.converged("a", "b") })
	mu.Lock()
	defer mu.Unlock()
	if d := cmp.Diff([]string{"1.000"}, heard); d != "" {
		t.Errorf("a heard (-want +got):\n%s", d)
	}
}

// A Lease deleted by hand while its holder is frozen and another process of its ID
// waits: the waiting one honours the deleted Lease's claims for a LeaseDuration from
// the deletion, like every member that saw them, and only then takes the ID's place.
func TestDeletedLeaseHoldsOffAWaitingDuplicate(t *testing.T) {
	h := newHarness(t)
	h.startConverged("a", "b")
	a2 := h.start("a2", withID("a"))
	h.until(time.Minute, "a2 waits", func() bool { return a2.m.Status().State == StateWaiting })
	h.freeze("a") // its deadline still ahead: it would write the moment it wakes
	if err := h.leases.Delete(context.Background(), leaseName(group, "a"), listwatch.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted, mark := h.clk.Now(), h.led.mark()
	took := h.until(time.Minute, "a2 in a's place", func() bool { return h.converged("a2", "b") })
	if e, ok := h.led.first(mark, "acquire", shard.WholeSet(), "a2"); !ok || e.at.Before(deleted.Add(DefaultLeaseDuration)) {
		t.Errorf("a2 acquired at %v, before the deletion (%v) was LeaseDuration old", e.at.Sub(epoch), deleted.Sub(epoch))
	}
	t.Logf("a2 in a's place %v after the deletion", took)
}

// A member woken from a freeze past its Lease with a write still in flight calls Release
// all the same (after a loss it is the one chance to stop the work), and does not join
// again while its claims still stand.
func TestFinalReleaseIsCalledWithAWriteInFlight(t *testing.T) {
	h := newHarness(t)
	h.startConverged("a", "b")
	a := h.member("a")
	var ns string
	for _, n := range sampleNamespaces {
		if a.m.Acts(n) {
			ns = n
			break
		}
	}
	done, _, err := a.m.Guard().Admit(listwatch.Write{Method: http.MethodPost, Namespace: ns, Resource: "pods"})
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	mark := h.led.mark()
	h.freeze("a")
	h.until(time.Minute, "b takes everything", func() bool { return h.member("b").m.Status().Acting.Equal(shard.WholeSet()) })
	h.thaw("a")
	h.until(time.Minute, "a is back", func() bool { return h.converged("a", "b") })
	if _, ok := h.led.first(mark, "released", shard.WholeSet(), "a"); !ok {
		t.Errorf("a's Release after the loss was never called\n%s", h.logTail(30))
	}
}
