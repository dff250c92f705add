package lease

import (
	"context"
	"errors"
	"time"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// Outcome is what a write of a process's own Lease came to.
type Outcome int

const (
	// Written: the Lease says what was written.
	Written Outcome = iota
	// Refused: the change function refused the Lease as stored (held by another, say).
	Refused
	// Gone: the Lease was absent and the change function would not create it.
	Gone
	// Failed: the server refused or did not answer, or other writers kept coming first;
	// a timeout says nothing of whether the write was applied.
	Failed
)

// ErrRefused is what a change function returns to leave the Lease as it is stored.
var ErrRefused = errors.New("lease: the change was refused")

// Own is a process's own Lease, in namespace under name. It remembers the Lease as last
// read or written, so a renewal costs one request; and it times renewals: Deadline is
// RenewDeadline after the start of the last successful write, on the monotonic clock.
// It is not safe for concurrent use.
type Own struct {
	res     *listwatch.Resource[*object.Lease]
	name    string
	clk     clock.Clock
	timing  Timing
	cur     *object.Lease // nil: read it before the next write
	renewed time.Time     // start of the last successful write
}

// NewOwn is the Lease name of res's namespace, held with timing t on clk.
func NewOwn(res *listwatch.Resource[*object.Lease], name string, t Timing, clk clock.Clock) *Own {
	return &Own{res: res, name: name, clk: clk, timing: t}
}

// Name is the Lease's name.
func (o *Own) Name() string { return o.name }

// Current is the Lease as last read or written, nil when it must be read again.
func (o *Own) Current() *object.Lease { return o.cur }

// Observed records a newer version of the Lease read elsewhere (a list of its group),
// the base of the next write.
func (o *Own) Observed(l *object.Lease) { o.cur = l }

// Invalidate forgets the Lease as last seen: the next write reads it first.
func (o *Own) Invalidate() { o.cur = nil }

// Renewed is the start of the last successful write, the zero time before the first.
func (o *Own) Renewed() time.Time { return o.renewed }

// Deadline is RenewDeadline after Renewed: past it, the holder must have stopped
// acting.
func (o *Own) Deadline() time.Time { return o.renewed.Add(o.timing.RenewDeadline) }

// Forget drops the renewal record, as a holder that lost its Lease must: nothing it
// wrote before counts for it any more.
func (o *Own) Forget() { o.cur, o.renewed = nil, time.Time{} }

// Write changes the Lease and writes it. change receives the Lease as stored (a copy it
// may modify; nil when absent) and returns what to write: an update of it, or a Lease to
// create when it was absent; nil with ErrRefused leaves it (Refused), and nil without an
// error when it was absent declines to create it (Gone). Every update names the
// resourceVersion change was given, so a Lease someone else wrote meanwhile is read
// again and change asked again: up to three times, then Failed. On Written the renewal
// is recorded as starting when the write did, before the server applied it, so the
// others start counting the Lease's duration later than this process counts its
// deadline.
func (o *Own) Write(ctx context.Context, change func(cur *object.Lease) (*object.Lease, error)) (Outcome, error) {
	for range 3 {
		if o.cur == nil {
			l, err := o.res.Get(ctx, o.name)
			switch {
			case object.IsNotFound(err):
			case err != nil:
				return Failed, err
			default:
				o.cur = l
			}
		}
		var base *object.Lease
		if o.cur != nil {
			base = object.DeepCopy(o.cur)
		}
		next, err := change(base)
		switch {
		case errors.Is(err, ErrRefused):
			return Refused, err
		case err != nil:
			return Failed, err
		case next == nil && o.cur == nil:
			return Gone, nil
		case next == nil:
			return Refused, ErrRefused
		}
		start := o.clk.Now()
		var written *object.Lease
		if o.cur == nil {
			written, err = o.res.Create(ctx, next)
		} else {
			written, err = o.res.Update(ctx, next)
		}
		switch {
		case err == nil:
			o.cur, o.renewed = written, start
			return Written, nil
		case object.IsConflict(err), object.IsAlreadyExists(err), object.IsNotFound(err):
			o.cur = nil // someone else wrote it, made it or deleted it: read it again
		default:
			return Failed, err
		}
	}
	return Failed, errors.New("lease: other writers came first three times")
}

// Delete deletes the Lease as last read or written, naming its uid and resourceVersion,
// so that a Lease changed since is not deleted (a Conflict: read it and decide again).
// A Lease already gone is no error.
func (o *Own) Delete(ctx context.Context) error {
	if o.cur == nil {
		return errors.New("lease: delete before any read")
	}
	err := o.res.Delete(ctx, o.name, listwatch.DeleteOptions{
		Preconditions: &listwatch.Preconditions{UID: o.cur.UID, ResourceVersion: o.cur.ResourceVersion},
	})
	if err == nil || object.IsNotFound(err) {
		o.cur = nil
		return nil
	}
	if object.IsConflict(err) {
		o.cur = nil
	}
	return err
}
