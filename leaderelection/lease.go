package leaderelection

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kinformer/kinformer/object"
)

// outcome is what one attempt to acquire or renew the lease found.
type outcome int

const (
	failed        outcome = iota // the lease could not be read or written, or another writer came first
	heldElsewhere                // another holder's lease has not expired
	holding                      // this candidate holds the lease, renewed by the attempt
)

// tryAcquireOrRenew reads the lease and, when this candidate may hold it, writes itself in
// as the holder. The write carries the resourceVersion that was read: if anyone wrote in
// between, the apiserver answers Conflict and the attempt fails, so two candidates can
// never both win.
func (e *Elector) tryAcquireOrRenew(ctx context.Context) outcome {
	start := time.Now()
	lease, err := e.leases.Get(ctx, e.cfg.Name)
	if object.IsNotFound(err) {
		return e.create(ctx, start)
	}
	if err != nil {
		return failed
	}
	e.observe(lease.Spec, time.Now())
	if e.heldElsewhere(lease.Spec) {
		return heldElsewhere
	}
	lease.Spec = e.claim(lease.Spec, start)
	written, err := e.leases.Update(ctx, lease)
	if err != nil {
		return failed
	}
	e.renewed(start)
	e.observe(written.Spec, time.Now())
	return holding
}

// create makes the lease with this candidate as its first holder. When another candidate
// created it first the answer is AlreadyExists, and the next attempt reads theirs.
func (e *Elector) create(ctx context.Context, start time.Time) outcome {
	spec := e.claim(object.LeaseSpec{}, start)
	// leaseTransitions counts handovers, and the first holder took the lease from nobody.
	spec.LeaseTransitions = ptr[int32](0)
	lease := &object.Lease{
		TypeMeta:   object.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
		ObjectMeta: object.ObjectMeta{Namespace: e.cfg.Namespace, Name: e.cfg.Name},
		Spec:       spec,
	}
	written, err := e.leases.Create(ctx, lease)
	if err != nil {
		return failed
	}
	e.renewed(start)
	e.observe(written.Spec, time.Now())
	return holding
}

// heldElsewhere reports whether another holder's lease is still running. Its duration
// counts from when this candidate saw the holder's record last change, on this process's
// monotonic clock. The renewTime in the record was written by the holder's clock:
// comparing it with this one would turn any skew between the two machines into a gap
// between leaderships, or an overlap.
func (e *Elector) heldElsewhere(spec object.LeaseSpec) bool {
	holder := deref(spec.HolderIdentity)
	if holder == "" || holder == e.cfg.Identity {
		return false // released, or ours
	}
	// The holder's declared duration is the promise that counts, so that candidates
	// configured differently agree on when a lease expires.
	d := e.cfg.LeaseDuration
	if s := deref(spec.LeaseDurationSeconds); s > 0 {
		d = time.Duration(s) * time.Second
	}
	return time.Since(e.observedAt) < d
}

// claim returns spec with this candidate as holder, renewed at now. Taking the lease from
// another holder, or from none after a release, is a transition and restarts acquireTime;
// a renewal keeps both. Members of the spec this package does not model stay as they are.
func (e *Elector) claim(spec object.LeaseSpec, now time.Time) object.LeaseSpec {
	at := object.NewMicroTime(now)
	if deref(spec.HolderIdentity) != e.cfg.Identity {
		spec.AcquireTime = ptr(at)
		spec.LeaseTransitions = ptr(deref(spec.LeaseTransitions) + 1)
	}
	spec.HolderIdentity = ptr(e.cfg.Identity)
	spec.LeaseDurationSeconds = ptr(e.leaseSeconds())
	spec.RenewTime = ptr(at)
	return spec
}

// leaseSeconds is LeaseDuration as the API stores it, in whole seconds, rounded up: the
// others waiting a little longer is safe, shorter is not.
func (e *Elector) leaseSeconds() int32 {
	return int32((e.cfg.LeaseDuration + time.Second - 1) / time.Second)
}

// observe records spec as the lease's current state. A live holder changes its record
// (renewTime at least) at every renewal; observedAt is when this candidate first saw the
// record as it is now.
func (e *Elector) observe(spec object.LeaseSpec, now time.Time) {
	b, err := json.Marshal(spec)
	if err != nil || !bytes.Equal(b, e.observedSpec) {
		e.observedSpec, e.observedAt = b, now
	}
	holder := deref(spec.HolderIdentity)
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
	ctx, cancel := context.WithTimeout(ctx, e.cfg.RenewDeadline)
	defer cancel()
	for {
		lease, err := e.leases.Get(ctx, e.cfg.Name)
		if err != nil {
			return fmt.Errorf("leaderelection: releasing lease: %w", err)
		}
		if deref(lease.Spec.HolderIdentity) != e.cfg.Identity {
			return nil // already taken over: nothing of ours to release
		}
		lease.Spec.HolderIdentity = ptr("")
		lease.Spec.LeaseDurationSeconds = ptr[int32](1)
		lease.Spec.RenewTime = ptr(object.NewMicroTime(time.Now()))
		written, err := e.leases.Update(ctx, lease)
		if object.IsConflict(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("leaderelection: releasing lease: %w", err)
		}
		e.observe(written.Spec, time.Now())
		return nil
	}
}

func ptr[T any](v T) *T { return &v }

// deref returns *p, or the zero value for nil: every field of a LeaseSpec is optional.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
