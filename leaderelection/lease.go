package leaderelection

import (
	"context"
	"fmt"

	"github.com/kinformer/kinformer/lease"
	"github.com/kinformer/kinformer/object"
)

// tryAcquireOrRenew reads the lease and, when this candidate may hold it, writes itself in
// as the holder: lease.Written when it holds the lease now, renewed by the attempt;
// lease.Refused when another holder's lease has not expired; lease.Failed when the lease
// could not be read or written. The write carries the resourceVersion that was read, so
// when anyone wrote in between the apiserver answers Conflict, and the attempt judges the
// newer lease instead: two candidates can never both win.
func (e *Elector) tryAcquireOrRenew(ctx context.Context) lease.Outcome {
	// Every attempt reads the lease first. A standby must: a refused attempt writes
	// nothing, so its copy is only as fresh as its last read, and the holder's expiry is
	// judged from the record as the server has it now. The leader could renew from the
	// lease it wrote last, saving a request; it reads too, so that an attempt is the
	// same read, judgement and write whoever makes it.
	e.own.Invalidate()
	out, _ := e.own.Write(ctx, e.claim)
	if out == lease.Written {
		e.renewed(e.own.Renewed())
		e.observe(e.own.Current())
	}
	return out
}

// claim is the change of tryAcquireOrRenew: the lease as read with this candidate as its
// holder, or lease.ErrRefused while another holder's lease runs.
func (e *Elector) claim(cur *object.Lease) (*object.Lease, error) {
	now := e.clk.Now()
	if cur == nil {
		return &object.Lease{
			TypeMeta:   object.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
			ObjectMeta: object.ObjectMeta{Namespace: e.cfg.Namespace, Name: e.cfg.Name},
			// The first holder took the lease from nobody: leaseTransitions 0.
			Spec: lease.Stamp(object.LeaseSpec{}, e.cfg.Identity, e.timing, now),
		}, nil
	}
	e.observe(cur)
	if e.heldElsewhere(cur.Spec) {
		return nil, lease.ErrRefused
	}
	// client-go reads a Lease that exists without leaseTransitions as one of 0
	// transitions, so that taking it over is the first; lease.Take starts a spec without
	// the field at 0, as for a Lease it creates.
	if cur.Spec.LeaseTransitions == nil {
		cur.Spec.LeaseTransitions = ptr[int32](0)
	}
	cur.Spec = lease.Stamp(cur.Spec, e.cfg.Identity, e.timing, now)
	return cur, nil
}

// heldElsewhere reports whether another holder's lease is still running. Its duration
// (the holder's declared one, so that candidates configured differently agree) counts
// from when this candidate saw the holder's record last change, on its own clock: the
// renewTime in the record was written by the holder's clock, and comparing it with this
// one would turn any skew between the two machines into a gap between leaderships, or an
// overlap.
func (e *Elector) heldElsewhere(spec object.LeaseSpec) bool {
	holder := lease.Holder(spec)
	if holder == "" || holder == e.cfg.Identity {
		return false // released, or ours
	}
	return !e.expiry.Expired(e.cfg.Name)
}

// observe records l as the lease's current state, for its expiry and its holder.
func (e *Elector) observe(l *object.Lease) {
	e.expiry.ObserveLease(l)
	holder := lease.Holder(l.Spec)
	e.mu.Lock()
	e.leader = holder
	e.mu.Unlock()
	if holder != "" && holder != e.reported {
		e.reported = holder
		if f := e.cfg.Callbacks.OnNewLeader; f != nil {
			f(holder)
		}
	}
}

// release empties the holder of the lease, if this candidate still holds it, with a
// duration of one second, so that a standby takes over at its next attempt instead of
// after LeaseDuration. acquireTime and leaseTransitions stay: the next holder counts the
// transition. A conflict means someone else wrote the lease since it was read (an
// annotation, say): it is read again, and released if it is still ours.
func (e *Elector) release(ctx context.Context) error {
	ctx, cancel := e.withTimeout(ctx, e.cfg.RenewDeadline)
	defer cancel()
	e.own.Invalidate()
	out, err := e.own.Write(ctx, func(cur *object.Lease) (*object.Lease, error) {
		if cur == nil {
			return nil, nil
		}
		if lease.Holder(cur.Spec) != e.cfg.Identity {
			return nil, lease.ErrRefused // already taken over: nothing of ours to release
		}
		cur.Spec.HolderIdentity = ptr("")
		cur.Spec.LeaseDurationSeconds = ptr[int32](1)
		cur.Spec.RenewTime = ptr(object.NewMicroTime(e.clk.Now()))
		return cur, nil
	})
	switch out {
	case lease.Written:
		e.observe(e.own.Current())
		return nil
	case lease.Refused:
		return nil
	case lease.Gone:
		return fmt.Errorf("leaderelection: releasing lease %s/%s: it was deleted", e.cfg.Namespace, e.cfg.Name)
	default:
		return fmt.Errorf("leaderelection: releasing lease: %w", err)
	}
}

func ptr[T any](v T) *T { return &v }
