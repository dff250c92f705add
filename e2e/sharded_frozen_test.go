package e2e

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kinformer/kinformer/internal/testrig/testwait"
)

// A member frozen from outside, against a real kube-apiserver with the
// ShardedListAndWatch gate and an audit log: three managers split 30 numbered namespaces
// (tenant-00 … tenant-29, which FNV-1a crowds into one 256th of the hash space) and the
// group's plan must balance them; then, with a workload going, the busiest member is
// stopped (SIGSTOP) for three lease durations and woken, and later m1 is stopped and a
// second process started with its ID, which must wait for m1's Lease to expire before
// it takes m1's place, while the old m1, woken, must find its Lease taken and wait in
// turn. The audit log then shows when each process's Lease claimed what, and that no
// process wrote outside its claims, past its renew deadline, or across another's writes.

// TestShardedManagerFrozen runs the story; its phases are subtests, so that the audit
// of the whole log runs even when one of them fails.
func TestShardedManagerFrozen(t *testing.T) {
	began := time.Now()
	e := startShardEnv(t, "frozen", true)
	kubeconfigs := e.memberKubeconfigs(t, []string{"m1", "m2", "m3", "m1b"})
	startProc(t, "fake-kubelet", "--kubeconfig", e.c.Kubeconfig, "--ready-after", "300ms")
	managers := map[string]*shardManager{}
	live := []string{"m1", "m2", "m3"}
	for _, id := range live {
		managers[id] = startShardManager(t, id, kubeconfigs[id])
	}
	e.waitSettled(t, live, managers, 30*time.Second)

	var namespaces []string
	replicas := map[string]int{}
	for i := range 30 {
		ns := fmt.Sprintf("tenant-%02d", i)
		namespaces = append(namespaces, ns)
		replicas[ns] = 3
	}
	finishPoll := e.startOverSpec(t)
	created := time.Now()
	e.kubectl(t, deploymentsDoc(namespaces, 3), "apply", "-f", "-")
	for _, ns := range namespaces {
		e.rollout(t, ns)
	}
	rolledOut := time.Since(created)

	// (a) The plan cuts the space where the tenants are: each manager caches about a
	// third of the objects.
	first := e.waitSteady(t, live, managers, namespaces, replicas, 0, 60*time.Second)
	firstAfter := time.Since(created)
	fb, fi := first.balance()
	t.Logf("balance: first settled with every cache complete %v after the Deployments were created: busiest %.2f × the mean, idlest %.2f, plan of %d slots (none: %v)",
		firstAfter.Round(time.Millisecond), fb, fi, first.st.plan().Len(), first.st.Plan.IsZero())
	// A plan cut from the first tenants' load is cut again once the planner's cool-down
	// has passed.
	waited, unstable := e.waitPlanStable(t, live, managers, 40*time.Second)
	t.Logf("balance: the plan stable %v later (%s)", waited.Round(time.Millisecond), orText(unstable, "stable"))
	s := e.waitSteady(t, live, managers, namespaces, replicas, 1.2, 60*time.Second)
	steadyAfter := time.Since(created)
	total := 0
	for _, id := range live {
		total += s.counts[id].objects()
	}
	for _, id := range live {
		c := s.counts[id]
		t.Logf("balance: %s acts on %.4g of the space, %d namespaces, caches %d deployments + %d replicasets + %d pods = %d objects (%.2f × the mean %.1f)",
			id, s.st.byID[id].Acting.Fraction(), len(s.split[id]), c.deployments, c.replicasets, c.pods, c.objects(),
			float64(c.objects())/(float64(total)/3), float64(total)/3)
	}
	busiest, idlest := s.balance()
	ms := managers["m1"].metrics()
	t.Logf("balance: busiest %.2f × the mean, idlest %.2f (bound 1.2); plan of %d slots; rolled out %v and balanced %v after the Deployments were created; "+
		"m1 (plans first) cut %s plans, its shardgroup_balance %s",
		busiest, idlest, s.st.plan().Len(), rolledOut.Round(time.Millisecond), steadyAfter.Round(time.Millisecond),
		sample(ms, "shardgroup_plans_total"), sample(ms, "shardgroup_balance"))
	if s.st.Plan.IsZero() {
		t.Errorf("the group has no plan once balanced: the equal plan cannot spread tenant-00…29")
	}

	// The freezes, recorded as they start: the audit counts what was on the wire then
	// apart, even if a phase fails before its process is woken.
	var freezes []freeze
	froze := t.Run("frozen past its lease", func(t *testing.T) {
		freezeMember(t, e, managers, live, namespaces, replicas, &freezes)
	})
	if froze {
		t.Run("same ID while stopped", func(t *testing.T) {
			restartSameID(t, e, managers, live, namespaces, replicas, kubeconfigs["m1b"], &freezes)
		})
	}
	finishPoll()

	t.Run("audit", func(t *testing.T) {
		a := readShardAudit(t, e, shardGroupName, namespaces)
		logPlans(t, e.name, a, created)
		a.checkWrites(t, shardChecks{env: e.name, leaseDuration: shardLease, renewDeadline: shardRenew, freezes: freezes})
	})
	t.Logf("done in %v", time.Since(began).Round(time.Millisecond))
}

// freezeMember stops the member with the most namespaces for three lease durations
// while pods are deleted in its namespaces and Deployments scaled, wakes it, and checks
// that it lost, came back, and wrote nothing past its deadline but what was on the wire.
func freezeMember(t *testing.T, e *shardEnv, managers map[string]*shardManager, live, namespaces []string, replicas map[string]int, freezes *[]freeze) {
	s := e.waitSteady(t, live, managers, namespaces, replicas, 0, 30*time.Second)
	victim := live[0]
	for _, id := range live {
		if len(s.split[id]) > len(s.split[victim]) {
			victim = id
		}
	}
	others := slices.DeleteFunc(slices.Clone(live), func(id string) bool { return id == victim })
	v := managers[victim]
	before := v.metrics()
	churn := e.churn(t, s.split[victim])
	churn.more(t, 10) // its workers are busy replacing pods when it freezes

	stopAt := time.Now()
	if err := v.p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	*freezes = append(*freezes, freeze{who: victim, stop: stopAt})
	f := &(*freezes)[len(*freezes)-1]
	t.Logf("SIGSTOP %s (%d namespaces: %v) at %s", victim, len(s.split[victim]), s.split[victim], stamp(stopAt))
	e.waitSettled(t, others, managers, 30*time.Second)
	tookOver := time.Since(stopAt)
	// While it sleeps, its namespaces are scaled up (by the others) and one of each
	// other member's.
	var scale []string
	scale = append(scale, s.split[victim][:min(3, len(s.split[victim]))]...)
	for _, id := range others {
		if len(s.split[id]) > 0 {
			scale = append(scale, s.split[id][0])
		}
	}
	for _, ns := range scale {
		e.kubectl(t, "", "scale", "-n", ns, "deployment/web", "--replicas=5")
		replicas[ns] = 5
	}
	// Until it has been stopped for three lease durations.
	<-time.After(time.Until(stopAt.Add(3 * shardLease)))
	contAt := time.Now()
	if err := v.p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	f.cont = contAt
	e.waitSettled(t, live, managers, 60*time.Second)
	rejoined := time.Since(contAt)
	churn.more(t, 10) // the workload goes on after the group settled
	deleted := churn.stop()
	for _, ns := range namespaces {
		e.rollout(t, ns)
	}
	rolledOut := time.Since(contAt)
	e.waitSteady(t, live, managers, namespaces, replicas, 0, 60*time.Second)
	t.Logf("%s frozen %v; the others act on the whole space %v after the SIGSTOP (lease %v); after the SIGCONT the group settled with all three in %v, "+
		"every Deployment rolled out in %v; %d pods deleted in its namespaces; scaled to 5: %v",
		victim, contAt.Sub(stopAt).Round(time.Millisecond), tookOver.Round(time.Millisecond), shardLease, rejoined.Round(time.Millisecond),
		rolledOut.Round(time.Millisecond), deleted, scale)
	if tookOver < shardLease-shardRetry-300*time.Millisecond {
		t.Errorf("the others took over %v after the SIGSTOP, before the Lease (%v) could expire", tookOver, shardLease)
	}

	// (f) It woke past its deadline: its Guard refused what its workers tried, and it
	// lost its Lease.
	ms := v.metrics()
	delta := func(name string, labels ...string) float64 {
		return number(ms, name, labels...) - number(before, name, labels...)
	}
	fencedDeadline := delta("shardgroup_fenced_writes_total", `reason="deadline"`)
	fencedNotActing := delta("shardgroup_fenced_writes_total", `reason="not-acting"`)
	losses := delta("shardgroup_losses_total")
	t.Logf("%s after waking: shardgroup_fenced_writes_total deadline +%v (now %s), not-acting +%v (now %s); shardgroup_losses_total +%v (now %s); rebalances %s",
		victim, fencedDeadline, sample(ms, "shardgroup_fenced_writes_total", `reason="deadline"`),
		fencedNotActing, sample(ms, "shardgroup_fenced_writes_total", `reason="not-acting"`),
		losses, sample(ms, "shardgroup_losses_total"), sample(ms, "shardgroup_rebalances_total"))
	if losses < 1 {
		t.Errorf("%s woke %v after its Lease expired and did not count a loss (shardgroup_losses_total +%v)", victim, contAt.Sub(stopAt)-shardLease, losses)
	}
	logLines(t, victim, v.p.output(), "stopping everything", "refused", "joined the group")

	out, code := e.shards(t)
	t.Logf("kinformer shards (exit %d):\n%s", code, out)
	if code != 0 {
		t.Errorf("kinformer shards exited %d after the frozen member came back", code)
	}

	// (c) What it wrote after it froze.
	a := readShardAudit(t, e, shardGroupName, namespaces)
	a.checkFrozen(t, shardChecks{env: e.name, leaseDuration: shardLease, renewDeadline: shardRenew}, *f)
}

// restartSameID stops m1 and starts a second process with its ID (and a ServiceAccount
// of its own): it must wait until m1's Lease expires, then take m1's place; the old m1,
// woken, must find its Lease taken, stop acting and wait, both reporting the duplicate.
func restartSameID(t *testing.T, e *shardEnv, managers map[string]*shardManager, live, namespaces []string, replicas map[string]int, kubeconfig string,
	freezes *[]freeze) {
	s := e.waitSteady(t, live, managers, namespaces, replicas, 0, 30*time.Second)
	old := managers["m1"]
	before := old.metrics()
	oldInc := s.st.byID["m1"].Incarnation
	busy := s.split["m1"]
	if len(busy) == 0 {
		busy = namespaces
	}
	churn := e.churn(t, busy)
	churn.more(t, 10)

	stopAt := time.Now()
	if err := old.p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	*freezes = append(*freezes, freeze{who: "m1", stop: stopAt})
	f := &(*freezes)[len(*freezes)-1]
	t.Logf("SIGSTOP the old m1 (%d namespaces) at %s", len(s.split["m1"]), stamp(stopAt))
	started := time.Now()
	nm := startShardManager(t, "m1", kubeconfig)
	// It waits: another live process holds m1's Lease.
	var waiting time.Duration
	testwait.Every(100*time.Millisecond).Eventually(t, 10*time.Second, func() bool {
		ms := nm.metrics()
		if sample(ms, "shardgroup_duplicate") == "1" && number(ms, "shardgroup_acting_fraction") == 0 {
			waiting = time.Since(started)
			return true
		}
		return false
	}, "the new m1 does not report that another process holds m1's Lease: %s", testwait.Lazy(func() any { return nm.p.output() }))
	// It takes the Lease over once the old one's has expired, and the group settles with
	// it.
	var took time.Duration
	testwait.Every(100*time.Millisecond).Eventually(t, 30*time.Second, func() bool {
		if inc := e.group(t).byID["m1"].Incarnation; inc != oldInc && inc != "" {
			took = time.Since(started)
			return true
		}
		return false
	}, "m1's Lease is still the old process's (incarnation %s)", oldInc)
	managers["m1"] = nm
	st := e.waitSettled(t, live, managers, 40*time.Second)
	acts := time.Since(started)
	t.Logf("the new m1 reported the duplicate %v after its start, took m1's Lease %v after it, and the group settled with it %v after it (%v after the SIGSTOP; lease %v)",
		waiting.Round(time.Millisecond), took.Round(time.Millisecond), acts.Round(time.Millisecond), time.Since(stopAt).Round(time.Millisecond), shardLease)
	if took < shardLease {
		t.Errorf("the new m1 took m1's Lease %v after its start, before the old one's (%v) could expire", took, shardLease)
	}
	var scale []string
	mine := st.split(live, namespaces)["m1"]
	for _, ns := range mine[:min(2, len(mine))] {
		if replicas[ns] < 5 {
			e.kubectl(t, "", "scale", "-n", ns, "deployment/web", "--replicas=5")
			replicas[ns] = 5
			scale = append(scale, ns)
		}
	}

	contAt := time.Now()
	if err := old.p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	f.cont = contAt
	// The old m1 finds its Lease taken: it stops acting, waits, and marks the Lease;
	// the holder sees the mark.
	why := ""
	testwait.Every(100*time.Millisecond).Eventually(t, 3*shardLease, func() bool {
		om, nmm := old.metrics(), nm.metrics()
		switch {
		case number(om, "shardgroup_losses_total") <= number(before, "shardgroup_losses_total"):
			why = "the old m1 counts no new loss"
		case number(om, "shardgroup_acting_fraction") != 0:
			why = "the old m1 acts on " + sample(om, "shardgroup_acting_fraction")
		case sample(om, "shardgroup_duplicate") != "1":
			why = "the old m1 does not report the duplicate"
		case sample(nmm, "shardgroup_duplicate") != "1":
			why = "the new m1 does not report the duplicate"
		default:
			return true
		}
		return false
	}, "after the SIGCONT: %s", testwait.Lazy(func() any { return why }))
	waited := time.Since(contAt)
	var out string
	var code int
	testwait.Every(500*time.Millisecond).Eventually(t, 3*shardLease, func() bool {
		out, code = e.shards(t)
		return strings.Contains(out, "!! DUPLICATE ID m1")
	}, "kinformer shards does not report the duplicate:\n%s", testwait.Lazy(func() any { return out }))
	t.Logf("after the SIGCONT the old m1 gave up and waits (%v); kinformer shards (exit %d):\n%s", waited.Round(time.Millisecond), code, out)
	if code != 0 {
		t.Errorf("kinformer shards exited %d with a duplicate ID waiting", code)
	}
	e.waitSettled(t, live, managers, 10*time.Second) // the new m1 still acts
	churn.more(t, 10)
	deleted := churn.stop()
	for _, ns := range namespaces {
		e.rollout(t, ns)
	}
	e.waitSteady(t, live, managers, namespaces, replicas, 0, 60*time.Second)
	om := old.metrics()
	t.Logf("the old m1: fenced writes deadline %s, not-acting %s, losses %s; %d pods deleted in m1's namespaces; scaled to 5: %v",
		sample(om, "shardgroup_fenced_writes_total", `reason="deadline"`), sample(om, "shardgroup_fenced_writes_total", `reason="not-acting"`),
		sample(om, "shardgroup_losses_total"), deleted, scale)
	logLines(t, "old m1", old.p.output(), "stopping everything", "another live process", "refused")
	logLines(t, "new m1", nm.p.output(), "another live process", "joined the group")
	if err := old.p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-old.p.exit

	// The audit: the old m1 wrote nothing past its deadline but what was on the wire;
	// the new one wrote nothing, its Lease included, before the old one's could expire.
	a := readShardAudit(t, e, shardGroupName, namespaces)
	c := shardChecks{env: e.name, leaseDuration: shardLease, renewDeadline: shardRenew}
	a.checkFrozen(t, c, *f)
	took1, ok := a.renewalAfter("m1b", time.Time{})
	if !ok {
		t.Fatalf("the new m1 (m1b) never wrote m1's Lease as its own")
	}
	last, ok := a.renewalBefore("m1", took1.at)
	if !ok {
		t.Fatalf("no renewal of the old m1 before the new one took its Lease at %s", stamp(took1.at))
	}
	expiry := last.at.Add(shardLease)
	first, wrote := a.firstWrite("m1b", time.Time{})
	t.Logf("the old m1's last renewal arrived %s: its Lease could expire from %s; the new m1 (m1b) took it at %s (%v later), marked it %d times while waiting, first wrote at %s: %s; the old m1 marked it %d times",
		stamp(last.at), stamp(expiry), stamp(took1.at), took1.at.Sub(expiry).Round(time.Millisecond), a.marks["m1b"],
		stampOr(first.received, "never"), first.what, a.marks["m1"])
	if took1.at.Before(expiry) {
		t.Errorf("the new m1 took m1's Lease at %s, before the old one's could expire (%s)", stamp(took1.at), stamp(expiry))
	}
	if !wrote {
		t.Errorf("the new m1 wrote nothing in the tenants' namespaces: nothing to check")
	} else if first.received.Before(expiry) {
		t.Errorf("the new m1 wrote at %s, before the old m1's Lease could expire (%s): %s", stamp(first.received), stamp(expiry), first)
	}
	if a.marks["m1b"] == 0 || a.marks["m1"] == 0 {
		t.Errorf("contender marks in the audit log: %d by the new m1 while it waited, %d by the old one after it woke; want both", a.marks["m1b"], a.marks["m1"])
	}
}

// logLines logs the lines of a process's output that contain any of words.
func logLines(t *testing.T, who, output string, words ...string) {
	t.Helper()
	n := 0
	for l := range strings.SplitSeq(output, "\n") {
		if slices.ContainsFunc(words, func(w string) bool { return strings.Contains(l, w) }) {
			if n++; n <= 12 {
				t.Logf("%s said: %s", who, l)
			}
		}
	}
	if n > 12 {
		t.Logf("%s said %d more such lines", who, n-12)
	}
}
