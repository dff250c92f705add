package fakekubelet

import (
	"context"
	"time"
)

// keepAlive renews the node's Lease every RenewInterval and writes its status every
// StatusInterval, until ctx ends. Both are timed on the kubelet's clock, from the start of
// the last attempt; a failed one is tried again sooner, after a backoff that doubles from
// a second up to its interval. The first of each was done by Run before it.
func (a *nodeAgent) keepAlive(ctx context.Context) {
	now := a.clock.Now()
	lease := schedule{interval: a.k.renewInterval(), due: now.Add(a.k.renewInterval())}
	status := schedule{interval: a.k.opts.StatusInterval, due: now.Add(a.k.opts.StatusInterval)}
	wake := make(chan struct{}, 1)
	timer := a.clock.AfterFunc(earliest(lease.due, status.due).Sub(now), func() {
		select {
		case wake <- struct{}{}:
		default: // a wake-up is pending already
		}
	})
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		}
		// The status first: when it registers the Node again, a Lease created next is
		// owned by the new Node and not collected with the old one.
		if now := a.clock.Now(); !now.Before(status.due) {
			status.done(now, a.attempt(ctx, "writing the node's status", a.heartbeat))
		}
		if now := a.clock.Now(); !now.Before(lease.due) {
			lease.done(now, a.attempt(ctx, "renewing the node's lease", a.renewLease))
		}
		timer.Reset(earliest(lease.due, status.due).Sub(a.clock.Now()))
	}
}

// attempt runs one write, bounded by the lease's renewal interval (a renewal that takes
// longer is late anyway), and logs its failure.
func (a *nodeAgent) attempt(ctx context.Context, what string, write func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, a.k.renewInterval())
	defer cancel()
	err := write(ctx)
	if err != nil && ctx.Err() == nil && a.k.opts.Logf != nil {
		a.k.opts.Logf("fakekubelet: node %s: %s: %v", a.k.opts.NodeName, what, err)
	}
	return err
}

// schedule is when a periodic write is due next.
type schedule struct {
	interval time.Duration
	due      time.Time
	backoff  time.Duration // after the last failure; 0 after a success
}

// done records an attempt started at start.
func (s *schedule) done(start time.Time, err error) {
	if err == nil {
		s.backoff = 0
		s.due = start.Add(s.interval)
		return
	}
	s.backoff = min(max(2*s.backoff, time.Second), s.interval)
	s.due = start.Add(s.backoff)
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
