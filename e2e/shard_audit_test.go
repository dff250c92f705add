package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kinformer/kinformer/shard"
	"github.com/kinformer/kinformer/shardgroup"
)

// The shard group's audit trail: what the managers wrote in the tests' namespaces, and
// what they claimed, over time, in their own Leases. The audit policy logs the writes of
// Deployments, ReplicaSets and Pods at Metadata level, and the writes of the Leases in
// kube-system at RequestResponse level, so that each Lease write's responseObject says
// what the member claimed (shard.kinformer.io/acting) once the write was stored.
//
// Every process is a ServiceAccount of its own (kinformer-shard-<name>), so the log tells
// the processes apart even when two of them run with one --shard-id.

// shardAuditPolicy logs, once the response is complete, every write to Deployments,
// ReplicaSets and Pods (their subresources too: status, scale, binding) at Metadata
// level, and every write of a Lease in kube-system with its request and response.
const shardAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
  resources:
  - group: "apps"
    resources: ["deployments", "deployments/status", "deployments/scale", "replicasets", "replicasets/status", "replicasets/scale"]
  - group: ""
    resources: ["pods", "pods/status", "pods/binding"]
- level: RequestResponse
  verbs: ["create", "update", "patch", "delete"]
  namespaces: ["kube-system"]
  resources:
  - group: "coordination.k8s.io"
    resources: ["leases"]
- level: None
`

// auditEvent is what the checks read of an audit.k8s.io/v1 Event.
type auditEvent struct {
	Stage     string
	Verb      string
	User      struct{ Username string }
	ObjectRef *struct {
		Resource, Namespace, Name, Subresource, APIGroup string
	}
	ResponseStatus *struct{ Code int }
	ResponseObject json.RawMessage
	// Received is when the request came, Done when its response was complete.
	Received time.Time `json:"requestReceivedTimestamp"`
	Done     time.Time `json:"stageTimestamp"`
}

// auditLease is what the checks read of a Lease in a responseObject.
type auditLease struct {
	Kind     string
	Metadata struct {
		Name, ResourceVersion string
		Labels, Annotations   map[string]string
	}
	Spec struct {
		HolderIdentity *string
	}
}

// auditWrite is a manager's write of a Deployment, ReplicaSet or Pod.
type auditWrite struct {
	who, ns        string
	received, done time.Time
	what           string
	code           int
}

func (w auditWrite) String() string {
	return fmt.Sprintf("%s by %s in %s (received %s, done %s)", w.what, w.who, w.ns, stamp(w.received), stamp(w.done))
}

// leaseWrite is a successful write of a Lease of the group, by a manager.
type leaseWrite struct {
	who, lease, verb string
	received, done   time.Time
	rv               int64 // 0 for a delete (its response is a Status)
	incarnation      string
	acting           shard.Set
	actingErr        error
	plan             string // the plan's text, on the group's plan
	isPlan           bool
}

// claim is a change of what a process's Lease claims: its own write (a renewal, which
// publishes its claims), or the end of its Lease (taken over by another incarnation of
// its ID, or deleted).
type claim struct {
	at, done time.Time // the write's arrival and completion
	acting   shard.Set
	renewal  bool   // the process's own successful write: it renewed its Lease
	why      string // for the others: "taken over by m1b", "deleted by m2"
}

// shardAudit is the audit log read: the managers' writes in the tests' namespaces, and
// the claims of each process (by ServiceAccount suffix) over time.
type shardAudit struct {
	writes   []auditWrite       // sorted by arrival
	claims   map[string][]claim // by process, sorted by arrival
	plans    []leaseWrite       // writes of the group's plan
	incOwner map[string]string  // incarnation → the process that wrote it first
	marks    map[string]int     // contender marks, by the process that wrote them
	elsewhere, lines, leaseWrites,
	leaseFailed int
}

// readShardAudit reads e's audit log: the writes of the group's managers in namespaces
// (all of them when nil), and the claims in the Leases of group.
func readShardAudit(t *testing.T, e *shardEnv, group string, namespaces []string) *shardAudit {
	t.Helper()
	f, err := os.Open(e.c.AuditLog)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	defer f.Close()
	ours := map[string]bool{}
	for _, ns := range namespaces {
		ours[ns] = true
	}
	a := &shardAudit{claims: map[string][]claim{}, incOwner: map[string]string{}, marks: map[string]int{}}
	var leases []leaseWrite
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		a.lines++
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit log line %d: %v", a.lines, err)
		}
		who, ok := strings.CutPrefix(ev.User.Username, shardUserPfx)
		if !ok || ev.Stage != "ResponseComplete" || ev.ObjectRef == nil {
			continue
		}
		code := 0
		if ev.ResponseStatus != nil {
			code = ev.ResponseStatus.Code
		}
		ref := ev.ObjectRef
		if ref.Resource == "leases" {
			a.leaseWrites++
			if code >= 300 {
				a.leaseFailed++
				continue
			}
			lw := leaseWrite{who: who, lease: ref.Name, verb: ev.Verb, received: ev.Received, done: ev.Done}
			var l auditLease
			if ev.Verb != "delete" {
				if err := json.Unmarshal(ev.ResponseObject, &l); err != nil || l.Kind != "Lease" {
					t.Fatalf("audit log line %d: %s of Lease %s answered no Lease (%v): %.300s", a.lines, ev.Verb, ref.Name, err, ev.ResponseObject)
				}
				if l.Metadata.Labels[shardgroup.GroupLabel] != group {
					continue
				}
				lw.rv, _ = strconv.ParseInt(l.Metadata.ResourceVersion, 10, 64)
				lw.incarnation = l.Metadata.Annotations[shardgroup.IncarnationAnnotation]
				lw.acting, lw.actingErr = shard.ParseSet(l.Metadata.Annotations[shardgroup.ActingAnnotation])
				lw.isPlan = l.Metadata.Labels[shardgroup.RoleLabel] == "plan"
				lw.plan = l.Metadata.Annotations[shardgroup.PlanAnnotation]
			} else if ref.Name == group {
				lw.isPlan = true
			}
			if lw.isPlan {
				a.plans = append(a.plans, lw)
				continue
			}
			leases = append(leases, lw)
			continue
		}
		if ev.Verb == "get" || ev.Verb == "list" || ev.Verb == "watch" {
			continue
		}
		what := ev.Verb + " " + ref.Resource
		if ref.Subresource != "" {
			what += "/" + ref.Subresource
		}
		what += " " + ref.Name
		if code >= 300 {
			what += fmt.Sprintf(" (%d)", code)
		}
		if namespaces != nil && !ours[ref.Namespace] {
			a.elsewhere++
			continue
		}
		a.writes = append(a.writes, auditWrite{who: who, ns: ref.Namespace, received: ev.Received, done: ev.Done, what: what, code: code})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	sort.SliceStable(a.writes, func(i, j int) bool { return a.writes[i].received.Before(a.writes[j].received) })
	a.buildClaims(t, leases)
	return a
}

// buildClaims turns the Lease writes into each process's claims over time. The writes of
// one Lease are put in the order etcd stored them (their resourceVersions); a write that
// brings a new incarnation into a Lease is that incarnation's first, and its writer the
// process it belongs to. A process's own writes publish its claims and renew its Lease;
// a write by another process keeping its incarnation is a contender's mark, and changes
// nothing; one that brings another incarnation, or a delete, ends its claims.
func (a *shardAudit) buildClaims(t *testing.T, leases []leaseWrite) {
	t.Helper()
	var writes, deletes []leaseWrite
	for _, lw := range leases {
		if lw.verb == "delete" {
			deletes = append(deletes, lw)
		} else {
			writes = append(writes, lw)
		}
	}
	sort.SliceStable(writes, func(i, j int) bool { return writes[i].rv < writes[j].rv })
	type incAt struct {
		at  time.Time
		inc string
	}
	history := map[string][]incAt{} // by Lease: its incarnation from a moment on
	cur := map[string]string{}
	for _, w := range writes {
		if w.actingErr != nil {
			t.Errorf("%s's write of Lease %s at %s: its claims do not parse: %v", w.who, w.lease, stamp(w.received), w.actingErr)
		}
		if prev := cur[w.lease]; w.incarnation != prev {
			if _, ok := a.incOwner[w.incarnation]; !ok {
				a.incOwner[w.incarnation] = w.who
			}
			if prev != "" {
				if p := a.incOwner[prev]; p != "" && p != a.incOwner[w.incarnation] {
					a.claims[p] = append(a.claims[p], claim{at: w.received, done: w.done, why: "its Lease taken over by " + w.who})
				}
			}
			cur[w.lease] = w.incarnation
			history[w.lease] = append(history[w.lease], incAt{w.received, w.incarnation})
		}
		owner := a.incOwner[w.incarnation]
		if owner != w.who {
			a.marks[w.who]++
			continue
		}
		a.claims[owner] = append(a.claims[owner], claim{at: w.received, done: w.done, acting: w.acting, renewal: true})
	}
	for _, d := range deletes {
		inc := ""
		for _, h := range history[d.lease] {
			if h.at.Before(d.received) {
				inc = h.inc
			}
		}
		if p := a.incOwner[inc]; p != "" {
			a.claims[p] = append(a.claims[p], claim{at: d.received, done: d.done, why: "its Lease deleted by " + d.who})
		}
	}
	for p, cs := range a.claims {
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].at.Before(cs[j].at) })
		a.claims[p] = cs
	}
}

// claimAt returns the index of the last change of who's claims that arrived before t,
// -1 if none did.
func (a *shardAudit) claimAt(who string, t time.Time) int {
	cs := a.claims[who]
	return sort.Search(len(cs), func(i int) bool { return !cs[i].at.Before(t) }) - 1
}

// renewalBefore returns who's last renewal that arrived before t.
func (a *shardAudit) renewalBefore(who string, t time.Time) (claim, bool) {
	cs := a.claims[who]
	for i := a.claimAt(who, t); i >= 0; i-- {
		if cs[i].renewal {
			return cs[i], true
		}
	}
	return claim{}, false
}

// renewalAfter returns who's first renewal that arrived after t.
func (a *shardAudit) renewalAfter(who string, t time.Time) (claim, bool) {
	for _, c := range a.claims[who] {
		if c.renewal && c.at.After(t) {
			return c, true
		}
	}
	return claim{}, false
}

// streak returns the first of the changes up to who's claims[i] that all hold ns: when
// its claim on ns, still standing at i, was written.
func (a *shardAudit) streak(who string, i int, ns string) claim {
	cs := a.claims[who]
	for i > 0 && cs[i-1].acting.Has(ns) {
		i--
	}
	return cs[i]
}

// freeze is a process stopped (SIGSTOP) from stop to cont: what it had on the wire then
// may land late.
type freeze struct {
	who        string
	stop, cont time.Time
}

// onWireMargin is how long after a SIGSTOP a request the process had already sent may
// still arrive at the apiserver (and be stamped received).
const onWireMargin = time.Second

// shardChecks are the bounds the audit is checked against.
type shardChecks struct {
	env                          string
	leaseDuration, renewDeadline time.Duration
	freezes                      []freeze
}

// auditReport counts what checkWrites saw.
type auditReport struct {
	writes, refused                                    int
	perWriter                                          map[string]int
	handovers, returns                                 int
	minGap                                             time.Duration
	unclaimed, late, precedence, inFlight, alternating int
	onWireLate                                         int
	droppedInFlight                                    int
	ambiguous                                          int
}

// checkWrites checks every write of the managers against the claims of the Leases and
// against the other writers:
//   - the writer's own Lease claimed the namespace when the write arrived, by a write
//     stored before it arrived (its latest Lease write then holds it, and the first
//     write of that claim was complete before);
//   - the writer had renewed its Lease within the renew deadline: the last of its own
//     Lease writes to arrive before the write arrived no more than RenewDeadline before
//     it (a request on the wire when the process was frozen, arriving within
//     onWireMargin of the SIGSTOP, is counted apart);
//   - no other process held an unexpired claim on the namespace (its last renewal less
//     than LeaseDuration before the write) that it had written before the writer's own
//     claim began: that member was acting there, or about to;
//   - namespace by namespace, sorted by arrival, the writes form runs of one writer,
//     and at each change of writer the last write of the one was complete before the
//     first of the next arrived, and two writers do not alternate within a lease
//     duration.
//
// It also counts, without failing, the writes still unanswered when their writer's
// Lease stopped claiming their namespace: a request the client gave up on (its context
// cancelled) while the server still held it, which the package documentation says no
// client-side check can recall. The interleaving check catches one that mattered.
func (a *shardAudit) checkWrites(t *testing.T, c shardChecks) auditReport {
	t.Helper()
	r := auditReport{perWriter: map[string]int{}, minGap: -1}
	violations := 0
	report := func(counter *int, format string, args ...any) {
		*counter++
		violations++
		if violations <= 25 {
			t.Errorf("%s: "+format, append([]any{c.env}, args...)...)
		}
	}
	frozen := func(w auditWrite) bool {
		for _, f := range c.freezes {
			if f.who == w.who && w.received.After(f.stop) && !w.received.After(f.stop.Add(onWireMargin)) {
				return true
			}
		}
		return false
	}
	byNS := map[string][]auditWrite{}
	droppedShown := 0
	for _, w := range a.writes {
		r.writes++
		r.perWriter[w.who]++
		if w.code >= 300 {
			r.refused++
		} else {
			// The interleaving is judged on what the server applied: a write it refused
			// (a precondition that failed because another member wrote meanwhile, as a
			// late write from a woken process does) changed nothing.
			byNS[w.ns] = append(byNS[w.ns], w)
		}
		cs := a.claims[w.who]
		i := a.claimAt(w.who, w.received)
		if i < 0 || !cs[i].acting.Has(w.ns) {
			held := "nothing yet"
			if i >= 0 {
				held = fmt.Sprintf("%.4g of the space, not %s (its Lease written at %s%s)", cs[i].acting.Fraction(), w.ns, stamp(cs[i].at), suffix(cs[i].why))
			}
			report(&r.unclaimed, "%s: its Lease claimed %s", w, held)
			continue
		}
		mine := a.streak(w.who, i, w.ns)
		if !mine.done.Before(w.received) {
			report(&r.unclaimed, "%s: its claim on the namespace (Lease written at %s) was not stored yet (complete at %s)", w, stamp(mine.at), stamp(mine.done))
		}
		if ren, ok := a.renewalBefore(w.who, w.received); !ok || w.received.Sub(ren.at) > c.renewDeadline {
			if frozen(w) {
				r.onWireLate++
			} else {
				report(&r.late, "%s: %v after its last renewal (arrived %s), past the renew deadline %v", w, w.received.Sub(ren.at).Round(time.Millisecond), stamp(ren.at), c.renewDeadline)
			}
		}
		// The next change of its claims that drops the namespace must come after the
		// write was answered.
		for _, next := range cs[i+1:] {
			if !next.at.Before(w.done) {
				break
			}
			if !next.acting.Has(w.ns) {
				r.droppedInFlight++
				if droppedShown++; droppedShown <= 5 {
					t.Logf("%s: %s: still in flight when its Lease stopped claiming %s (written at %s%s)", c.env, w, w.ns, stamp(next.at), suffix(next.why))
				}
				break
			}
		}
		for other := range a.claims {
			if other == w.who {
				continue
			}
			j := a.claimAt(other, w.received)
			if j < 0 || !a.claims[other][j].acting.Has(w.ns) {
				continue
			}
			ren, ok := a.renewalBefore(other, w.received)
			if !ok || !w.received.Before(ren.at.Add(c.leaseDuration)) {
				continue // expired: the others may take its part
			}
			theirs := a.streak(other, j, w.ns)
			switch {
			case theirs.done.Before(mine.at):
				report(&r.precedence, "%s: %s claimed %s first (Lease written at %s, done %s; %s's claim at %s) and its claim stood, renewed at %s",
					w, other, w.ns, stamp(theirs.at), stamp(theirs.done), w.who, stamp(mine.at), stamp(ren.at))
			case !mine.done.Before(theirs.at):
				r.ambiguous++ // both claims written at once: etcd's order is not in the log
			}
		}
	}
	for _, ns := range slices.Sorted(maps.Keys(byNS)) {
		ws := byNS[ns]
		var runs []writeRun
		for _, w := range ws {
			if n := len(runs); n > 0 && runs[n-1].who == w.who {
				run := &runs[n-1]
				run.last, run.writes, run.lastWhat = w.received, run.writes+1, w.what
				if w.done.After(run.lastDone) {
					run.lastDone, run.slowest = w.done, w
				}
				continue
			}
			runs = append(runs, writeRun{who: w.who, first: w.received, last: w.received, lastDone: w.done, writes: 1, firstWhat: w.what, lastWhat: w.what, slowest: w})
		}
		for i := 1; i < len(runs); i++ {
			prev, run := runs[i-1], runs[i]
			r.handovers++
			gap := run.first.Sub(prev.lastDone)
			if r.minGap < 0 || gap < r.minGap {
				r.minGap = gap
			}
			t.Logf("%s: hand-over in %s: %s (%d writes, %s..%s, last %s done %s) → %s (first %s at %s), gap %v", c.env, ns,
				prev.who, prev.writes, stamp(prev.first), stamp(prev.last), prev.lastWhat, stamp(prev.lastDone), run.who, run.firstWhat, stamp(run.first), gap.Round(time.Microsecond))
			if gap < 0 {
				report(&r.inFlight, "in %s, %s's write was still in flight when %s's first write (%s) arrived at %s: %s",
					ns, prev.who, run.who, run.firstWhat, stamp(run.first), prev.slowest)
			}
			if i >= 2 && runs[i-2].who == run.who {
				r.returns++
				if i >= 3 && runs[i-3].who == prev.who && run.first.Sub(runs[i-2].first) < c.leaseDuration {
					report(&r.alternating, "in %s, %s and %s alternate within %v: %s at %s, %s at %s, %s at %s, %s at %s", ns, prev.who, run.who, c.leaseDuration,
						runs[i-3].who, stamp(runs[i-3].first), runs[i-2].who, stamp(runs[i-2].first), prev.who, stamp(prev.first), run.who, stamp(run.first))
				}
			}
		}
	}
	t.Logf("%s: audit log: %d events, %d Lease writes by the managers (%d refused, %d contender marks %v), %d plan writes; "+
		"%d writes by the managers in the tests' namespaces (%d refused by the server), per writer %v, %d elsewhere; "+
		"%d hand-overs, %d returns to an earlier writer, smallest gap between writers %v; "+
		"violations: %d unclaimed, %d past the renew deadline, %d in a namespace another member claimed first, %d in flight across a hand-over, %d alternations; "+
		"%d on the wire at a SIGSTOP landing past the deadline; %d still in flight at the server when their writer's Lease dropped the namespace; %d judged against claims written at once",
		c.env, a.lines, a.leaseWrites, a.leaseFailed, sum(a.marks), a.marks, len(a.plans),
		r.writes, r.refused, r.perWriter, a.elsewhere,
		r.handovers, r.returns, r.minGap.Round(time.Microsecond),
		r.unclaimed, r.late, r.precedence, r.inFlight, r.alternating,
		r.onWireLate, r.droppedInFlight, r.ambiguous)
	if r.writes == 0 || r.handovers == 0 {
		t.Errorf("%s: %d writes by the managers and %d hand-overs in the audit log: the check saw nothing to check", c.env, r.writes, r.handovers)
	}
	return r
}

// frozenReport is what a frozen process wrote around its freeze.
type frozenReport struct {
	lastRenewal, deadline time.Time // its last renewal arriving before the SIGSTOP, and that + RenewDeadline
	rejoined              time.Time // its first renewal after waking (zero: none)
	onWire                int       // writes arriving after the SIGSTOP and before the deadline
	onWireLate            int       // and after the deadline, within onWireMargin of the SIGSTOP
	violations            int       // after the deadline and the margin, before it renewed again
	// completedLate counts the writes on the wire (arriving after the SIGSTOP, within the
	// deadline or the margin) whose response was complete only after the deadline: a
	// request whose headers went before the process froze and whose body followed when it
	// woke, say. The interleaving check says whether another writer came in between.
	completedLate int
}

// checkFrozen checks the writes of a process frozen by f: its deadline is its last
// renewal arriving before the SIGSTOP plus RenewDeadline (later than its own deadline,
// which counts from the start of that renewal, so a safe bound); writes arriving after
// the SIGSTOP were on the wire when it froze, or sent after it woke; until it renewed
// again, those arriving past its deadline and more than onWireMargin after the SIGSTOP
// are violations: its Guard should have refused them.
func (a *shardAudit) checkFrozen(t *testing.T, c shardChecks, f freeze) frozenReport {
	t.Helper()
	var r frozenReport
	ren, ok := a.renewalBefore(f.who, f.stop)
	if !ok {
		t.Errorf("%s: no renewal of %s's Lease before its SIGSTOP at %s in the audit log", c.env, f.who, stamp(f.stop))
		return r
	}
	r.lastRenewal, r.deadline = ren.at, ren.at.Add(c.renewDeadline)
	end := time.Time{}
	if next, ok := a.renewalAfter(f.who, f.stop.Add(onWireMargin)); ok {
		r.rejoined, end = next.at, next.at
	}
	for _, w := range a.writes {
		if w.who != f.who || !w.received.After(f.stop) || !end.IsZero() && !w.received.Before(end) {
			continue
		}
		late := ""
		if w.done.After(r.deadline) && !w.received.After(f.stop.Add(onWireMargin)) {
			r.completedLate++
			late = fmt.Sprintf("; its response was complete only %v after the SIGSTOP, %v past the deadline (SIGCONT at +%v)",
				w.done.Sub(f.stop).Round(time.Millisecond), w.done.Sub(r.deadline).Round(time.Millisecond), f.cont.Sub(f.stop).Round(time.Millisecond))
		}
		switch {
		case !w.received.After(r.deadline):
			r.onWire++
			t.Logf("%s: on the wire at %s's SIGSTOP, arrived within its deadline: %s%s", c.env, f.who, w, late)
		case !w.received.After(f.stop.Add(onWireMargin)):
			r.onWireLate++
			t.Logf("%s: on the wire at %s's SIGSTOP, arrived %v past its deadline: %s%s", c.env, f.who, w.received.Sub(r.deadline).Round(time.Millisecond), w, late)
		default:
			r.violations++
			t.Errorf("%s: %s wrote %v past its deadline %s (last renewal arrived %s, SIGSTOP %s, SIGCONT %s), before renewing again: %s",
				c.env, f.who, w.received.Sub(r.deadline).Round(time.Millisecond), stamp(r.deadline), stamp(r.lastRenewal), stamp(f.stop), stamp(f.cont), w)
		}
	}
	t.Logf("%s: frozen %s: SIGSTOP %s, SIGCONT %s (%v); last renewal before it arrived %s, deadline %s (SIGSTOP + %v); "+
		"writes arriving after the SIGSTOP: %d on the wire arriving within the deadline, %d on the wire arriving past it (within %v of the SIGSTOP), "+
		"%d of these on the wire complete only past the deadline, %d violations; renewed again at %s",
		c.env, f.who, stamp(f.stop), stamp(f.cont), f.cont.Sub(f.stop).Round(time.Millisecond), stamp(r.lastRenewal), stamp(r.deadline),
		r.deadline.Sub(f.stop).Round(time.Millisecond), r.onWire, r.onWireLate, onWireMargin, r.completedLate, r.violations, stampOr(r.rejoined, "never"))
	return r
}

// firstWrite returns who's first write arriving at or after from.
func (a *shardAudit) firstWrite(who string, from time.Time) (auditWrite, bool) {
	for _, w := range a.writes {
		if w.who == who && !w.received.Before(from) {
			return w, true
		}
	}
	return auditWrite{}, false
}

// writeRun is one manager's uninterrupted stretch of writes in a namespace.
type writeRun struct {
	who                   string
	first, last, lastDone time.Time
	writes                int
	firstWhat, lastWhat   string
	slowest               auditWrite // the write complete last
}

// stamp writes a moment as the audit log's timestamps read, to the microsecond.
func stamp(tm time.Time) string { return tm.UTC().Format("15:04:05.000000") }

func stampOr(tm time.Time, none string) string {
	if tm.IsZero() {
		return none
	}
	return stamp(tm)
}

func suffix(why string) string {
	if why == "" {
		return ""
	}
	return ", " + why
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
