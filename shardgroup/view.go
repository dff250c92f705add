package shardgroup

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/lease"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
)

// view is what one member knows of the group: the others' Leases, its own Lease when
// another incarnation holds it, and the group's plan, from its consistent lists and its
// watch. Both write it, hence the lock; the rounds read it.
//
// Expiry is judged as leader election judges it (lease.Expiry): by when this process saw
// a Lease change, on its own clock, plus the Lease's duration.
type view struct {
	self, group string // this member's Lease name, and the group's (the plan's name)
	id, inc     string // this member's ID and incarnation: its own Lease, so written, is no peer

	clk clock.Clock

	mu     sync.Mutex
	expiry *lease.Expiry
	obs    map[string]*observed // by Lease name
	// forgotten holds Leases dropped as gone without claims, with the resourceVersion
	// at which they were known gone: a watch that lags behind the lists must not bring
	// them back with an older event.
	forgotten map[string]string
	plan      seenPlan
	// ghosts are the claims of Leases deleted while they claimed something, replaced
	// since by a new Lease of the same name: they stand until their duration has run
	// out since the deletion was seen, whatever the new Lease says.
	ghosts []ghost
	// contender is what another process of this member's ID last wrote on this member's
	// own Lease (ContenderAnnotation), and contenderAt when that was first seen.
	contender   string
	contenderAt time.Time
}

// observed is one Lease of the group as last seen.
type observed struct {
	uid, rv     string
	holder      string
	incarnation string
	acting      shard.Set // claimed hashes
	target      shard.Set
	actErr      error // the acting annotation did not parse: acting is everything
	load        []shard.Point
	hasLoad     bool
	contender   string // ContenderAnnotation as written
	// gone: the Lease was deleted (or missing from a list) while it still claimed
	// something. Its holder may not know yet (nobody deletes a member's Lease but the
	// member, after publishing an empty claim; a hand that did must not hand its part to
	// a second member at once): the claims stand until the duration runs out, counted
	// from when the deletion was seen.
	gone bool
}

// ghost is what a replaced Lease claimed, and until when.
type ghost struct {
	name, holder, incarnation string
	acting, target            shard.Set
	until                     time.Time
}

// seenPlan is the group's plan as last seen.
type seenPlan struct {
	lease *object.Lease // nil: none in the group
	plan  shard.Plan    // zero: none, or it did not parse
	err   error
	at    time.Time // when this version was first seen
}

func newView(self, group, id, inc string, clk clock.Clock, dflt time.Duration) *view {
	return &view{self: self, group: group, id: id, inc: inc, clk: clk, expiry: lease.NewExpiry(clk, dflt),
		obs: map[string]*observed{}, forgotten: map[string]string{}}
}

// isPlan reports whether l is the group's plan rather than a member's Lease.
func (v *view) isPlan(l *object.Lease) bool { return l.Labels[RoleLabel] == "plan" }

// ours reports whether l is this member's own Lease as this incarnation writes it.
func (v *view) ours(l *object.Lease) bool {
	return l.Name == v.self && l.Annotations[IncarnationAnnotation] == v.inc
}

// observeList records a consistent list of the group's Leases at resourceVersion
// listRV: every Lease in it is current, every one missing from it is gone, unless the
// watch has shown a version of it newer than the list.
func (v *view) observeList(items []*object.Lease, listRV string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	seen := make(map[string]bool, len(items))
	planSeen := false
	for _, l := range items {
		seen[l.Name] = true
		if v.isPlan(l) {
			planSeen = true
		}
		v.observeLocked(l)
	}
	if !planSeen {
		v.plan = seenPlan{at: v.plan.at}
	}
	for name, o := range v.obs {
		if !seen[name] && !newer(o.rv, listRV) {
			v.goneLocked(name, o, listRV)
		}
	}
}

// observe records one Lease from a watch event, and reports whether anything the rounds
// act on changed (a renewal alone only restarts its duration).
func (v *view) observe(l *object.Lease) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.observeLocked(l)
}

// deleted records a Lease's deletion from a watch event, which carries the Lease as it
// was when deleted: a member leaving publishes an empty claim first, so only a Lease
// deleted with claims leaves them standing.
func (v *view) deleted(l *object.Lease) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.isPlan(l) {
		v.plan = seenPlan{at: v.plan.at}
		return true
	}
	if v.ours(l) {
		return false
	}
	v.observeLocked(l) // its last state, if newer than ours
	o := v.obs[l.Name]
	if o == nil {
		return false
	}
	return v.goneLocked(l.Name, o, l.ResourceVersion)
}

// goneLocked records that the Lease name, last seen as o, no longer exists at
// resourceVersion rv.
func (v *view) goneLocked(name string, o *observed, rv string) bool {
	// Claims of a Lease already expired stopped counting then; and one that claims
	// nothing holds nothing up.
	if expired := v.expiry.Expired(name); expired || o.acting.IsEmpty() && o.actErr == nil {
		delete(v.obs, name)
		v.expiry.Forget(name)
		v.forgotten[name] = rv
		return !expired
	}
	if !o.gone {
		o.gone = true
		v.expiry.Restart(name)
		return true
	}
	return false
}

func (v *view) observeLocked(l *object.Lease) bool {
	if v.isPlan(l) {
		return v.observePlanLocked(l)
	}
	if v.ours(l) {
		// This incarnation's own: whatever another one wrote here before is over.
		delete(v.obs, l.Name)
		if c := l.Annotations[ContenderAnnotation]; c != v.contender {
			v.contender, v.contenderAt = c, v.clk.Now()
			return c != ""
		}
		return false
	}
	prev := v.obs[l.Name]
	if prev != nil && prev.uid == l.UID && !newer(l.ResourceVersion, prev.rv) {
		return false // this version, or an older one a lagging watch delivered
	}
	if prev != nil && prev.gone && prev.uid != l.UID && !v.expiry.Expired(l.Name) {
		// A Lease made anew under the name of one deleted with claims (by its member
		// restarted, or by another process of its ID) does not void those claims: the
		// process that held them may not know yet.
		v.ghosts = append(v.ghosts, ghost{name: l.Name, holder: prev.holder, incarnation: prev.incarnation,
			acting: prev.acting, target: prev.target, until: v.expiry.ExpiresAt(l.Name)})
		v.expiry.Forget(l.Name)
	}
	if rv, ok := v.forgotten[l.Name]; ok {
		if !newer(l.ResourceVersion, rv) {
			return false // from before it was known gone
		}
		delete(v.forgotten, l.Name)
	}
	o := &observed{uid: l.UID, rv: l.ResourceVersion, holder: lease.Holder(l.Spec),
		incarnation: l.Annotations[IncarnationAnnotation], contender: l.Annotations[ContenderAnnotation]}
	// A Lease of the group without the annotation claims nothing: every member writes it
	// from its first write on. One that does not parse may claim anything.
	if text, ok := l.Annotations[ActingAnnotation]; ok {
		o.acting, o.actErr = shard.ParseSet(text)
		if o.actErr != nil {
			o.acting = shard.WholeSet()
		}
	}
	o.target, _ = shard.ParseSet(l.Annotations[TargetAnnotation])
	if text, ok := l.Annotations[LoadAnnotation]; ok {
		if pts, err := parseLoad(text); err == nil {
			o.load, o.hasLoad = pts, true
		}
	}
	v.obs[l.Name] = o
	v.expiry.ObserveLease(l, l.Annotations[ActingAnnotation], o.incarnation)
	return prev == nil || prev.gone || prev.holder != o.holder || prev.incarnation != o.incarnation ||
		!prev.acting.Equal(o.acting) || !prev.target.Equal(o.target) || (prev.actErr == nil) != (o.actErr == nil) ||
		prev.contender != o.contender
}

// observePlanLocked records the group's plan.
func (v *view) observePlanLocked(l *object.Lease) bool {
	cur := v.plan.lease
	if cur != nil && cur.UID == l.UID && !newer(l.ResourceVersion, cur.ResourceVersion) {
		return false
	}
	p := seenPlan{lease: l, at: v.clk.Now()}
	p.plan, p.err = shard.ParsePlan(l.Annotations[PlanAnnotation])
	if p.err != nil {
		p.plan = shard.Plan{}
	}
	changed := cur == nil || !p.plan.Equal(v.plan.plan)
	if !changed {
		p.at = v.plan.at // a write that changed nothing of the plan starts no cool-down
	}
	v.plan = p
	return changed
}

// newer reports whether resourceVersion a comes after b. Versions that are not the
// decimal numbers Kubernetes writes since 1.35 are taken as newer when they differ:
// treating a Lease as changed only delays its expiry.
func newer(a, b string) bool {
	c, err := object.CompareResourceVersion(a, b)
	if err != nil {
		return a != b
	}
	return c > 0
}

// peer is another member's Lease (or this member's own, held by another incarnation) as
// a round judges it.
type peer struct {
	name, holder, incarnation string
	acting, target            shard.Set
	live                      bool // not expired and not deleted: a member the assignment counts
	actErr                    error
	load                      []shard.Point
	hasLoad                   bool
	contender                 string
	expiresAt                 time.Time
}

// peers returns the Leases whose claims stood at asOf, the moment the read they come
// from began: every Lease not yet expired, deleted ones included until their duration
// has run out since the deletion was seen. Judged at the read's start, not at the moment
// it is looked at: a read answered (or looked at) late must not let a Lease expire whose
// renewal the server stored after the read was served.
func (v *view) peers(asOf time.Time) []peer {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []peer
	for name, o := range v.obs {
		exp := v.expiry.ExpiresAt(name)
		if !asOf.Before(exp) {
			if o.gone {
				delete(v.obs, name)
				v.expiry.Forget(name)
			}
			continue
		}
		out = append(out, peer{name: name, holder: o.holder, incarnation: o.incarnation, acting: o.acting, target: o.target,
			live: !o.gone && o.holder != "", actErr: o.actErr, load: o.load, hasLoad: o.hasLoad,
			contender: o.contender, expiresAt: exp})
	}
	kept := v.ghosts[:0]
	for _, g := range v.ghosts {
		if asOf.Before(g.until) {
			kept = append(kept, g)
			out = append(out, peer{name: g.name + " (deleted)", holder: g.holder, incarnation: g.incarnation,
				acting: g.acting, target: g.target, expiresAt: g.until})
		}
	}
	v.ghosts = kept
	slices.SortFunc(out, func(a, b peer) int { return strings.Compare(a.name, b.name) })
	return out
}

// predecessor returns this member's own Lease, as of the read that began at asOf, when
// another incarnation of its ID holds it and its claims stand (deleted or not: a Lease
// deleted by hand leaves its holder's claims standing for a duration), with that
// incarnation. (A Lease of its name that another ID holds is no predecessor: writing it
// is refused as foreign.)
func (v *view) predecessor(asOf time.Time) (inc string, expiresAt time.Time, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, g := range v.ghosts {
		if g.name == v.self && g.holder == v.id && g.incarnation != v.inc && asOf.Before(g.until) {
			return g.incarnation, g.until, true
		}
	}
	o := v.obs[v.self]
	if o == nil || o.holder != v.id {
		return "", time.Time{}, false
	}
	exp := v.expiry.ExpiresAt(v.self)
	if !asOf.Before(exp) {
		return "", time.Time{}, false
	}
	return o.incarnation, exp, true
}

// duplicate returns the incarnation of another process of this member's ID that wrote
// on this member's Lease within two durations (it renews its mark every duration), ""
// when none did.
func (v *view) duplicate(d time.Duration) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.contender == "" || !v.clk.Now().Before(v.contenderAt.Add(2*d)) {
		return ""
	}
	inc, _, _ := strings.Cut(v.contender, " ")
	return inc
}

// currentPlan returns the group's plan, zero when there is none (or it did not parse),
// and when this version was first seen.
func (v *view) currentPlan() seenPlan {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.plan
}

// staleFactor is how many of its durations a Lease must have gone unchanged before the
// members delete it: a member killed outright never deletes its own, and members named
// after a Deployment's pods would otherwise leave one behind at every rollout. Its claims
// stopped counting after one duration; the rest is patience with a member cut off for
// long, which finds its Lease gone when it comes back, as a loss, and makes a new one.
const staleFactor = 10

// staleLease names a Lease to collect, with the preconditions of its deletion.
type staleLease struct{ name, uid, rv string }

// stale returns the members' Leases unchanged for staleFactor durations.
func (v *view) stale(now time.Time) []staleLease {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []staleLease
	for name, o := range v.obs {
		seen := v.expiry.SeenAt(name)
		if !o.gone && now.Sub(seen) >= staleFactor*v.expiry.ExpiresAt(name).Sub(seen) {
			out = append(out, staleLease{name: name, uid: o.uid, rv: o.rv})
		}
	}
	return out
}
