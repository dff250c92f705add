package shardgroup

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kinformer/kinformer/lease"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// errHeld refuses a write of this member's Lease while another live incarnation holds
// it; errForeign, one that another group or member holds.
var (
	errHeld    = fmt.Errorf("%w: another process of this ID holds the Lease", lease.ErrRefused)
	errForeign = fmt.Errorf("%w: the Lease is not this member's", lease.ErrRefused)
)

// read lists the group's Leases with a consistent read (resourceVersion ""), the newest
// state etcd has, and records them. It returns whether it could, and this member's own
// Lease as listed (nil when absent); readAt is when the read began, the moment the
// round judges expiry at.
func (r *runner) read(ctx context.Context) (ok bool, own *object.Lease) {
	r.readAt = r.o.Clock.Now()
	list, err := r.m.leases.List(ctx, listwatch.ListOptions{LabelSelector: GroupLabel + "=" + r.o.Group})
	if err != nil {
		r.m.log.Debug("listing the group's Leases", "err", err)
		return false, nil
	}
	r.view.observeList(list.Items, list.ResourceVersion)
	for _, l := range list.Items {
		if l.Name != r.m.name {
			continue
		}
		own = l
		// A newer version of its own Lease than it wrote last (an annotation added by
		// hand or by a contender, or a write given up on that landed anyway) is the
		// base of the next write.
		if cur := r.own.Current(); cur != nil && l.UID == cur.UID && newer(l.ResourceVersion, cur.ResourceVersion) {
			r.own.Observed(l)
		}
	}
	return true, own
}

// join makes this incarnation a member: it writes its Lease, with no claims, unless
// another live process of its ID holds it.
func (r *runner) join() state {
	if r.leaving {
		return nil // nothing of this incarnation's is published or acted on
	}
	r.renewAt = r.o.Clock.Now().Add(r.o.RetryPeriod + jitter(r.o.RetryPeriod/5))
	ctx, cancel := r.requestContext(joining{})
	defer cancel()
	ok, _ := r.read(ctx)
	if !ok {
		return joining{}
	}
	r.updateTarget(r.view.peers(r.readAt))
	if inc, _, held := r.view.predecessor(r.readAt); held {
		return r.startWaiting(inc)
	}
	out, err := r.own.Write(ctx, r.take)
	switch {
	case out == lease.Written:
		r.wrote(r.published)
		r.reason, r.duplicate = "", ""
		r.m.log.Info("joined the group", "lease", r.m.name, "incarnation", r.inc)
		r.again = true // claim at once
		return member{}
	case errors.Is(err, errForeign):
		r.err = err
		return nil
	case errors.Is(err, errHeld):
		inc, _, _ := r.view.predecessor(r.o.Clock.Now())
		return r.startWaiting(inc)
	}
	r.m.log.Debug("writing the Lease", "err", err)
	return joining{}
}

// take is the write of join: the Lease made or taken over by this incarnation.
func (r *runner) take(cur *object.Lease) (*object.Lease, error) {
	if cur == nil {
		cur = &object.Lease{
			TypeMeta:   object.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
			ObjectMeta: object.ObjectMeta{Namespace: r.o.Namespace, Name: r.m.name},
		}
	} else {
		if err := r.checkOwner(cur); err != nil {
			return nil, err
		}
		// A version newer than the list (the write was retried after a conflict) is
		// judged as the list's would be. Judged late is safe here: the write names the
		// version read, so a renewal stored since makes it fail.
		r.view.observe(cur)
		if _, _, held := r.view.predecessor(r.o.Clock.Now()); held {
			return nil, errHeld
		}
	}
	cur.Spec = lease.Take(cur.Spec, r.o.ID, r.o.timing(), r.o.Clock.Now())
	setLabel(cur, GroupLabel, r.o.Group)
	setAnnotation(cur, IncarnationAnnotation, r.inc)
	setAnnotation(cur, ActingAnnotation, "")
	setAnnotation(cur, TargetAnnotation, r.target.String())
	delete(cur.Annotations, LoadAnnotation)
	delete(cur.Annotations, ContenderAnnotation)
	return cur, nil
}

// checkOwner refuses a Lease of this member's name that another group or member holds:
// group names that prefix one another can make the same <group>-<id>.
func (r *runner) checkOwner(l *object.Lease) error {
	if g := l.Labels[GroupLabel]; g != r.o.Group {
		return fmt.Errorf("%w: shardgroup: Lease %s/%s is labelled %s=%q, not group %q", errForeign, r.o.Namespace, r.m.name, GroupLabel, g, r.o.Group)
	}
	if h := lease.Holder(l.Spec); h != "" && h != r.o.ID {
		return fmt.Errorf("%w: shardgroup: Lease %s/%s is held by %q, not %q", errForeign, r.o.Namespace, r.m.name, h, r.o.ID)
	}
	return nil
}

// startWaiting reports another live process of this member's ID, once, and waits for
// its Lease to be released or to expire.
func (r *runner) startWaiting(other string) state {
	if r.duplicate != other {
		r.m.log.Error("another live process holds this member's Lease: two processes run with this ID; this one acts on nothing until that Lease is released or expires",
			"lease", r.m.name, "holder incarnation", other, "incarnation", r.inc)
	}
	r.duplicate = other
	r.reason = fmt.Sprintf("another process of ID %s (incarnation %s) holds its Lease", r.o.ID, other)
	return waiting{other: other}
}

// waitFor is a round of waiting: read the group again, and join once the other
// incarnation's Lease is gone or expired; meanwhile mark it, every LeaseDuration, so
// that its holder and `kinformer shards` know of this process.
func (r *runner) waitFor(s waiting) state {
	if r.leaving {
		return nil
	}
	r.renewAt = r.o.Clock.Now().Add(r.o.RetryPeriod)
	ctx, cancel := r.requestContext(s)
	defer cancel()
	if ok, _ := r.read(ctx); !ok {
		return s
	}
	r.updateTarget(r.view.peers(r.readAt))
	inc, _, held := r.view.predecessor(r.readAt)
	if !held {
		r.m.log.Info("the other process's Lease is gone or expired: joining", "lease", r.m.name)
		r.again = true
		return joining{}
	}
	if inc != s.other {
		s = r.startWaiting(inc).(waiting)
	}
	if now := r.o.Clock.Now(); r.markedAt.IsZero() || now.Sub(r.markedAt) >= r.o.LeaseDuration {
		out, err := r.own.Write(ctx, r.mark(inc))
		if out == lease.Written {
			r.markedAt = now
		} else {
			r.m.log.Debug("marking the Lease held by the other process", "err", err)
		}
	}
	return s
}

// mark writes ContenderAnnotation, and nothing else, on the Lease incarnation other
// holds.
func (r *runner) mark(other string) func(cur *object.Lease) (*object.Lease, error) {
	return func(cur *object.Lease) (*object.Lease, error) {
		if cur == nil || cur.Annotations[IncarnationAnnotation] != other {
			return nil, fmt.Errorf("%w: the Lease changed hands", lease.ErrRefused)
		}
		setAnnotation(cur, ContenderAnnotation, r.inc+" "+r.o.Clock.Now().UTC().Format(time.RFC3339))
		return cur, nil
	}
}

// leave deletes the Lease, which now claims nothing, so that the others count this
// member out at once. The delete names the version written, so a Lease changed since is
// read again (and emptied again) first.
func (r *runner) leave(ctx context.Context) bool {
	err := r.own.Delete(ctx)
	if err != nil {
		r.m.log.Debug("deleting the Lease", "err", err)
		r.again = object.IsConflict(err)
		return false
	}
	r.m.log.Info("left the group")
	return true
}

// collect deletes the Leases of members long gone (see staleFactor). The delete names
// the version seen, so a Lease renewed meanwhile stays; several members collecting the
// same Lease is harmless.
func (r *runner) collect(ctx context.Context) {
	for _, s := range r.view.stale(r.o.Clock.Now()) {
		err := r.m.leases.Delete(ctx, s.name, listwatch.DeleteOptions{
			Preconditions: &listwatch.Preconditions{UID: s.uid, ResourceVersion: s.rv},
		})
		if err == nil {
			r.m.log.Info("deleted the Lease of a member long gone", "lease", s.name)
		} else if !object.IsNotFound(err) && !object.IsConflict(err) {
			r.m.log.Debug("deleting a stale Lease", "lease", s.name, "err", err)
		}
	}
}

func setLabel(l *object.Lease, k, v string) {
	if l.Labels == nil {
		l.Labels = map[string]string{}
	}
	l.Labels[k] = v
}

func setAnnotation(l *object.Lease, k, v string) {
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[k] = v
}
