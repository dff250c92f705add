package shardgroup

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kinformer/kinformer/object"
)

// view is what one member knows of the others' Leases, from its consistent lists and its
// watch. Both write it, hence the lock; the round reads it.
//
// Expiry is judged as client-go judges a leader's lease: by when this process saw a
// Lease change, on its own clock, plus the Lease's duration. The renewTime inside was
// written by another machine's clock and is never compared with this one's.
type view struct {
	self    string // this member's Lease name, left out of the view
	buckets int    // this member's division of the space

	mu  sync.Mutex
	obs map[string]*observed // by Lease name
	// forgotten holds Leases dropped as gone without claims, with the resourceVersion
	// at which they were known gone: a watch that lags behind the lists must not bring
	// them back with an older event.
	forgotten map[string]forgotten
}

type forgotten struct {
	rv string
	at time.Time
}

// observed is one Lease of the group as last seen.
type observed struct {
	uid, rv  string
	stamp    string // see stampOf
	holder   string
	duration time.Duration
	acting   BucketSet // claimed hashes, in this member's division
	target   BucketSet // likewise
	actErr   error     // the acting annotation did not parse: acting is everything
	at       time.Time // when this version was first seen: its duration counts from here
	// gone: the Lease was deleted (or missing from a list) while it still claimed
	// buckets. Its holder may not know yet (nobody deletes a member's Lease but the
	// member, after publishing an empty claim; a hand that did must not hand its buckets
	// to a second member at once): the claims stand until the duration runs out, counted
	// from when the deletion was seen.
	gone bool
}

func newView(self string, buckets int) *view {
	return &view{self: self, buckets: buckets, obs: map[string]*observed{}, forgotten: map[string]forgotten{}}
}

// observeList records a consistent list of the group's Leases at resourceVersion listRV,
// read at now: every Lease in it is current, every one missing from it is gone, unless
// the watch has shown a version of it newer than the list.
func (v *view) observeList(items []*object.Lease, listRV string, now time.Time, defaultDuration time.Duration) {
	v.mu.Lock()
	defer v.mu.Unlock()
	seen := make(map[string]bool, len(items))
	for _, l := range items {
		seen[l.Name] = true
		v.observeLocked(l, now, defaultDuration)
	}
	for name, o := range v.obs {
		if !seen[name] && !newer(o.rv, listRV) {
			v.goneLocked(name, o, listRV, now)
		}
	}
	// A watch lags by seconds at worst; after a LeaseDuration nothing it could still
	// deliver would matter.
	for name, f := range v.forgotten {
		if now.Sub(f.at) > defaultDuration {
			delete(v.forgotten, name)
		}
	}
}

// observe records one Lease from a watch event, and reports whether anything the rounds
// act on changed (a renewal alone only restarts its duration).
func (v *view) observe(l *object.Lease, now time.Time, defaultDuration time.Duration) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.observeLocked(l, now, defaultDuration)
}

// deleted records a Lease's deletion from a watch event, which carries the Lease as it
// was when deleted: a member leaving publishes an empty claim first, so only a Lease
// deleted with claims leaves them standing.
func (v *view) deleted(l *object.Lease, now time.Time, defaultDuration time.Duration) bool {
	if l.Name == v.self {
		return false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	// The event carries the resourceVersion of the deletion, a change in itself; what
	// the holder wrote last is told by its own renewTime and claims.
	if prev := v.obs[l.Name]; prev != nil && prev.uid == l.UID && prev.stamp == stampOf(l) {
		return v.goneLocked(l.Name, prev, l.ResourceVersion, now)
	}
	v.observeLocked(l, now, defaultDuration) // its last state, newer than ours
	o := v.obs[l.Name]
	if o == nil {
		return false
	}
	return v.goneLocked(l.Name, o, l.ResourceVersion, now)
}

// stampOf is what a Lease's holder last wrote in it: its renewal, on its own clock, and
// its claims.
func stampOf(l *object.Lease) string {
	renew := ""
	if t := l.Spec.RenewTime; t != nil {
		renew = t.UTC().Format(object.RFC3339Micro)
	}
	return renew + " " + deref(l.Spec.HolderIdentity) + " " + l.Annotations[ActingAnnotation]
}

// goneLocked records that the Lease name, last seen as o, no longer exists at
// resourceVersion rv.
func (v *view) goneLocked(name string, o *observed, rv string, now time.Time) bool {
	// Claims of a Lease already expired stopped counting then; and one that claims
	// nothing holds nothing up.
	if expired := !now.Before(o.at.Add(o.duration)); expired || o.acting.IsEmpty() && o.actErr == nil {
		delete(v.obs, name)
		v.forgotten[name] = forgotten{rv: rv, at: now}
		return !expired
	}
	if !o.gone {
		o.gone, o.at = true, now
		return true
	}
	return false
}

func (v *view) observeLocked(l *object.Lease, now time.Time, defaultDuration time.Duration) bool {
	if l.Name == v.self {
		return false
	}
	prev := v.obs[l.Name]
	if prev != nil && prev.uid == l.UID && !newer(l.ResourceVersion, prev.rv) {
		return false // this version, or an older one a lagging watch delivered
	}
	if f, ok := v.forgotten[l.Name]; ok {
		if !newer(l.ResourceVersion, f.rv) {
			return false // from before it was known gone
		}
		delete(v.forgotten, l.Name)
	}
	o := &observed{uid: l.UID, rv: l.ResourceVersion, stamp: stampOf(l), holder: deref(l.Spec.HolderIdentity), at: now, duration: defaultDuration}
	if s := deref(l.Spec.LeaseDurationSeconds); s > 0 {
		o.duration = time.Duration(s) * time.Second
	}
	// A Lease of the group without the annotation claims nothing: every member writes
	// it from its first write on. One that does not parse may claim anything.
	if text, ok := l.Annotations[ActingAnnotation]; ok {
		acting, err := ParseBucketSet(text)
		o.acting, o.actErr = inDivision(acting, v.buckets), err
		if err != nil {
			o.acting = allBuckets(v.buckets)
		}
	} else {
		o.acting = newBucketSet(v.buckets)
	}
	if text, ok := l.Annotations[TargetAnnotation]; ok {
		if target, err := ParseBucketSet(text); err == nil {
			o.target = inDivision(target, v.buckets)
		}
	}
	if o.target.Total() == 0 {
		o.target = newBucketSet(v.buckets)
	}
	v.obs[l.Name] = o
	return prev == nil || prev.gone || prev.holder != o.holder || !prev.acting.Equal(o.acting) ||
		!prev.target.Equal(o.target) || (prev.actErr == nil) != (o.actErr == nil)
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

// peer is one other member's Lease as a round judges it.
type peer struct {
	name, holder   string
	acting, target BucketSet
	live           bool // not expired and not deleted: a member the assignment counts
	actErr         error
	expiresAt      time.Time
}

// peers returns the others whose claims stand at now: every Lease not yet expired,
// deleted ones included until their duration has run out since the deletion was seen.
func (v *view) peers(now time.Time) []peer {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []peer
	for name, o := range v.obs {
		exp := o.at.Add(o.duration)
		if !now.Before(exp) {
			if o.gone {
				delete(v.obs, name)
			}
			continue
		}
		out = append(out, peer{name: name, holder: o.holder, acting: o.acting, target: o.target,
			live: !o.gone && o.holder != "", actErr: o.actErr, expiresAt: exp})
	}
	slices.SortFunc(out, func(a, b peer) int { return strings.Compare(a.name, b.name) })
	return out
}

// staleFactor is how many of its durations a Lease must have gone unchanged before the
// members delete it: a member killed outright never deletes its own, and members named
// after a Deployment's pods would otherwise leave one behind at every rollout. Its claims
// stopped counting after one duration; the rest is patience with a member cut off for
// long, which finds its Lease gone when it comes back, as a loss, and makes a new one.
const staleFactor = 10

// staleLease names a Lease to collect, with the preconditions of its deletion.
type staleLease struct{ name, uid, rv string }

// stale returns the Leases unchanged for staleFactor durations at now.
func (v *view) stale(now time.Time) []staleLease {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []staleLease
	for name, o := range v.obs {
		if !o.gone && now.Sub(o.at) >= staleFactor*o.duration {
			out = append(out, staleLease{name: name, uid: o.uid, rv: o.rv})
		}
	}
	return out
}

func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

func ptr[T any](v T) *T { return &v }
