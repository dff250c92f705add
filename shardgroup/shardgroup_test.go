package shardgroup

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
)

// owners returns, for every bucket, the member the ledger shows working on it.
func (h *harness) owners() []string { return h.led.holders() }

// movedFraction is the share of buckets whose owner differs between two ledgers' views.
func movedFraction(before, after []string) float64 {
	n := 0
	for b := range before {
		if before[b] != after[b] {
			n++
		}
	}
	return float64(n) / float64(len(before))
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
	l, ok := h.lease("a")
	if !ok {
		t.Fatal("no Lease for a")
	}
	wantMeta := map[string]string{GroupLabel: group}
	if d := cmp.Diff(wantMeta, l.Labels); d != "" {
		t.Errorf("labels (-want +got):\n%s", d)
	}
	wantAnn := map[string]string{ActingAnnotation: "256:0-255", TargetAnnotation: "256:0-255"}
	if d := cmp.Diff(wantAnn, l.Annotations); d != "" {
		t.Errorf("annotations (-want +got):\n%s", d)
	}
	if got := deref(l.Spec.HolderIdentity); got != "a" {
		t.Errorf("holderIdentity %q, want a", got)
	}
	if got := deref(l.Spec.LeaseDurationSeconds); got != 15 {
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
	if slices.ContainsFunc(h.owners(), func(s string) bool { return s != "" }) {
		t.Errorf("work left behind: %v", h.owners())
	}
	if a.m.Acts("default") {
		t.Error("Acts after Run returned")
	}
}

// Members join one at a time; each takes about 1/N of the space, all of it from the
// others, and shard.Moved says exactly how much moved.
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

		wantMoved := shard.Moved(shard.Assign(ids, buckets), shard.Assign(next, buckets))
		got := movedFraction(before, after)
		if math.Abs(got-wantMoved) > 1e-9 {
			t.Errorf("%s joining: %.4f of the buckets changed hands, shard.Moved says %.4f", id, got, wantMoved)
		}
		if ideal := 1 / float64(len(next)); math.Abs(got-ideal) > 0.1 {
			t.Errorf("%s joining moved %.3f, want about 1/%d", id, got, len(next))
		}
		for b := range before {
			if before[b] != after[b] && after[b] != id {
				t.Errorf("bucket %d moved from %s to %s, not to the newcomer %s", b, before[b], after[b], id)
			}
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
// cancelled) keeps its buckets until its Lease expires in the others' eyes, then they
// are taken over within a round or two.
func TestMemberKilled(t *testing.T) {
	h := newHarness(t)
	for _, id := range []string{"a", "b", "c"} {
		h.start(id)
	}
	h.until(time.Minute, "a, b, c converged", func() bool { return h.converged("a", "b", "c") })
	c := h.member("c")
	held := c.m.Status().Acting
	lastRenew := c.m.Status().RenewedAt
	killedAt, mark := h.clk.Now(), h.led.mark()
	h.freeze("c")

	took := h.until(time.Minute, "a and b take c's buckets", func() bool { return h.converged("a", "b") })
	e, ok := h.led.first(mark, "acquire", held, "a", "b")
	if !ok {
		t.Fatalf("nobody acquired c's buckets; ledger:\n%s", h.led)
	}
	if earliest := lastRenew.Add(DefaultLeaseDuration); e.at.Before(earliest) {
		t.Errorf("%s acquired c's buckets at %v, before c's Lease could expire (%v)", e.member, e.at.Sub(epoch), earliest.Sub(epoch))
	}
	if latest := killedAt.Add(DefaultLeaseDuration + 2*DefaultRetryPeriod + step); e.at.After(latest) {
		t.Errorf("c's buckets taken over at %v, want by lease expiry and a retry period or two (%v)", e.at.Sub(epoch), latest.Sub(epoch))
	}
	t.Logf("c killed at %v (last renewal %v), its buckets taken at %v, converged after %v",
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

// On SIGTERM (Run's context cancelled) a member releases everything, publishes that,
// and deletes its Lease: the others take over at once, not after LeaseDuration.
func TestSIGTERMHandsOverAtOnce(t *testing.T) {
	h := newHarness(t)
	for _, id := range []string{"a", "b", "c"} {
		h.start(id)
	}
	h.until(time.Minute, "a, b, c converged", func() bool { return h.converged("a", "b", "c") })
	held := h.member("c").m.Status().Acting
	at, mark := h.clk.Now(), h.led.mark()
	if err := h.stop("c"); err != nil {
		t.Fatalf("c's Run = %v, want nil", err)
	}
	if _, ok := h.lease("c"); ok {
		t.Error("c's Lease survived its leaving")
	}
	took := h.until(time.Minute, "a and b take c's buckets", func() bool { return h.converged("a", "b") })
	released, _ := h.led.first(mark, "released", held, "c")
	acquired, ok := h.led.first(mark, "acquire", held, "a", "b")
	if !ok {
		t.Fatalf("nobody acquired c's buckets; ledger:\n%s", h.led)
	}
	if d := acquired.at.Sub(at); d > 2*DefaultRetryPeriod {
		t.Errorf("c's buckets taken over %v after SIGTERM, want at once (a round or so), far from LeaseDuration", d)
	}
	t.Logf("SIGTERM at %v: c released at %v, a or b acquired at %v, converged after %v",
		at.Sub(epoch), released.at.Sub(epoch), acquired.at.Sub(epoch), took)
}

// A member cut off from the apiserver stops acting by its RenewDeadline, though it runs
// on; the others take over only after LeaseDuration; once the network heals it joins
// again and gets its share back.
func TestPartition(t *testing.T) {
	h := newHarness(t)
	for _, id := range []string{"a", "b", "c"} {
		h.start(id)
	}
	h.until(time.Minute, "a, b, c converged", func() bool { return h.converged("a", "b", "c") })
	c := h.member("c")
	held := c.m.Status().Acting
	lastRenew := c.m.Status().RenewedAt
	cut, mark := h.clk.Now(), h.led.mark()
	h.partition("c")

	h.until(time.Minute, "c gives up", func() bool { return c.m.Status().Lost })
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

	h.until(time.Minute, "a and b take c's buckets", func() bool { return h.converged("a", "b") })
	taken, _ := h.led.first(mark, "acquire", held, "a", "b")
	if earliest := lastRenew.Add(DefaultLeaseDuration); taken.at.Before(earliest) {
		t.Errorf("%s took c's buckets at %v, before c's Lease could expire (%v)", taken.member, taken.at.Sub(epoch), earliest.Sub(epoch))
	}
	if n := testutilCounter(t, c.reg, "shardgroup_losses_total"); n != 1 {
		t.Errorf("c's shardgroup_losses_total = %v, want 1", n)
	}

	h.heal()
	took := h.until(time.Minute, "c back", func() bool { return h.converged("a", "b", "c") })
	t.Logf("cut at %v (c's last renewal %v): c stopped at %v, others took over at %v; healed, back after %v",
		cut.Sub(epoch), lastRenew.Sub(epoch), stopped.at.Sub(epoch), taken.at.Sub(epoch), took)
}

// Members started at the same instant claim the same buckets at first (each sees only
// itself); the check read after every claim keeps any bucket from being acquired twice,
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

// A Release that takes its time holds the hand-over: the leaving buckets stay claimed,
// their new owner waits, and nobody acts on them meanwhile, however long it takes (the
// releasing member keeps renewing).
func TestSlowRelease(t *testing.T) {
	h := newHarness(t)
	a := h.start("a")
	h.until(time.Minute, "a converged", func() bool { return h.converged("a") })
	open := h.led.gate("a")
	defer open()
	b := h.start("b")
	h.until(time.Minute, "a releasing", func() bool { return h.led.isHeld("a") })
	heldAt := h.clk.Now()
	releasing := setOf(shard.Assign([]string{"a", "b"}, buckets)["b"], buckets)
	if got := a.m.Status().Claimed; !got.Intersect(releasing).Equal(releasing) {
		t.Fatalf("a's claims %v do not cover what it releases", got)
	}
	h.advance(3 * DefaultLeaseDuration)
	if e, ok := h.led.first(0, "acquire", releasing, "b"); ok {
		t.Fatalf("b acquired %v while a's Release still ran", e.buckets)
	}
	for _, ns := range sampleNamespaces {
		if releasing.Has(BucketOf(shard.Hash(ns), buckets)) && (a.m.Acts(ns) || b.m.Acts(ns)) {
			t.Fatalf("someone acts on %s, whose bucket is being released", ns)
		}
	}
	if st := a.m.Status(); st.Lost || !st.Acting.Equal(allBuckets(buckets).Minus(releasing)) {
		t.Errorf("a during its Release: lost %v, acting %d buckets; want renewing and acting on its own part", st.Lost, st.Acting.Len())
	}
	ms, err := Members(context.Background(), h.member("a").client, namespace, group)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || !ms[0].Acting.Equal(allBuckets(buckets)) || !ms[1].Acting.IsEmpty() || !ms[1].Target.Equal(releasing) {
		t.Errorf("Members during the hand-over: %+v", ms)
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

// A failing Acquire gives the claim up and tries again later; nobody acts meanwhile.
func TestAcquireFails(t *testing.T) {
	h := newHarness(t)
	h.led.failAcquires("a", 2)
	a := h.start("a")
	h.until(time.Minute, "a converged", func() bool { return h.converged("a") })
	if st := a.m.Status(); st.Acting.Len() != buckets {
		t.Errorf("a acts on %d buckets", st.Acting.Len())
	}
}

// A member's Lease deleted by hand while it acts: the others keep honouring its claims
// until the deletion is a LeaseDuration old (they cannot tell it from a member still at
// work); the member notices at its next renewal, stops, and joins again.
func TestLeaseDeletedByHand(t *testing.T) {
	h := newHarness(t)
	for _, id := range []string{"a", "b"} {
		h.start(id)
	}
	h.until(time.Minute, "a, b converged", func() bool { return h.converged("a", "b") })
	held := h.member("b").m.Status().Acting
	at, mark := h.clk.Now(), h.led.mark()
	if err := h.leases.Delete(context.Background(), leaseName(group, "b"), defaultDelete()); err != nil {
		t.Fatal(err)
	}
	h.until(time.Minute, "b joins again", func() bool { return h.converged("a", "b") && h.member("b").m.Status().RenewedAt.After(at) })
	if e, ok := h.led.first(mark, "acquire", held, "a"); ok && e.at.Before(at.Add(DefaultLeaseDuration)) {
		t.Errorf("a acquired b's buckets %v after its Lease was deleted, before the deletion was LeaseDuration old", e.at.Sub(at))
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
	x.Namespace, x.UID, x.ResourceVersion = namespace, "", ""
	if _, err := h.leases.Create(context.Background(), x); err != nil {
		t.Fatal(err)
	}
	mark := h.led.mark()
	h.start("a")
	took := h.until(time.Minute, "a alone", func() bool { return h.converged("a") })
	e, _ := h.led.first(mark, "acquire", allBuckets(buckets), "a")
	if e.at.Before(epoch.Add(DefaultLeaseDuration)) {
		t.Errorf("a acquired %v at %v, before x's Lease expired", e.buckets, e.at.Sub(epoch))
	}
	if n := strings.Count(h.logs.String(), "claims do not parse"); n != 1 {
		t.Errorf("the unreadable claims were logged %d times, want once", n)
	}
	t.Logf("a acting on everything after %v", took)
}
