package shardgroup

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/shard"
)

// FencedError is a write the member's Guard refused: it was not sent.
type FencedError struct {
	Group, Member string
	Write         listwatch.Write
	// Late is how long past the member's renew deadline the write came; 0 when the
	// member was within it (or has none) but does not act in the write's namespace.
	Late time.Duration
}

func (e *FencedError) Error() string {
	if e.Late > 0 {
		return fmt.Sprintf("shardgroup %s: member %s has not renewed its Lease within its renew deadline (passed %v ago), so it may no longer act: %s refused",
			e.Group, e.Member, e.Late.Round(time.Millisecond), e.Write)
	}
	if e.Write.Namespace == "" {
		return fmt.Sprintf("shardgroup %s: member %s acts on nothing: %s refused", e.Group, e.Member, e.Write)
	}
	return fmt.Sprintf("shardgroup %s: member %s does not act in namespace %q (its part of the group does not hold it): %s refused",
		e.Group, e.Member, e.Write.Namespace, e.Write)
}

// Guard returns the listwatch.Guard that fences this member's writes: give the client
// of everything that acts for the member (its controllers, their event recorders) to
// listwatch.Client.WithGuard. A write is sent only if, at the moment it goes on the
// wire, the member acts in its namespace (Acts) and its renew deadline has not passed;
// a cluster-scoped write, only within the deadline while the member acts on something.
// Anything else is refused with a *FencedError and counted
// (shardgroup_fenced_writes_total).
//
// The writes it lets through are tracked until answered, and each is cancelled if not
// answered by the deadline: before Release is called for a part, the member waits until
// none is in flight there, so that once it tells the others they may take over, nothing
// it sent can still be on its way. A write already on the wire when the process froze (or
// one the server still holds when its request is cancelled) is the one thing no
// client-side check can recall: the margin LeaseDuration − RenewDeadline absorbs it.
//
// Sharding by UID (Field shard.UID) fences writes by the deadline only: a request's
// path names no uid.
func (m *Member) Guard() listwatch.Guard { return guard{m} }

type guard struct{ m *Member }

func (g guard) Admit(w listwatch.Write) (func(), time.Duration, error) {
	m := g.m
	m.writes.mu.Lock()
	defer m.writes.mu.Unlock()
	// Under the lock that drain takes after the loop has published a snapshot: a write
	// either counts as in flight before the drain looks, or sees the snapshot that the
	// drain follows.
	s := m.state.Load()
	now := m.opts.Clock.Now()
	key := w.Namespace
	switch {
	case !s.validUntil.IsZero() && !now.Before(s.validUntil):
		return nil, 0, m.fenced(w, now.Sub(s.validUntil)+time.Nanosecond)
	case s.validUntil.IsZero() || s.acting.IsEmpty():
		return nil, 0, m.fenced(w, 0)
	case m.opts.Field == shard.Namespace && key != "" && !s.acting.Has(key):
		return nil, 0, m.fenced(w, 0)
	}
	m.writes.n[key]++
	// The write may take until the deadline to go out and be answered, not longer: one
	// still waiting for a connection then must not be sent after it.
	return sync.OnceFunc(func() { m.writes.done(key) }), s.validUntil.Sub(now), nil
}

func (m *Member) fenced(w listwatch.Write, late time.Duration) error {
	reason := "not-acting"
	if late > 0 {
		reason = "deadline"
	}
	if m.metrics != nil {
		m.metrics.fenced.WithLabelValues(reason).Inc()
	}
	return &FencedError{Group: m.opts.Group, Member: m.opts.ID, Write: w, Late: late}
}

// inflight counts the writes a member's Guard let through that have not been answered,
// by namespace ("" for cluster-scoped).
type inflight struct {
	mu      sync.Mutex
	n       map[string]int
	changed chan struct{} // closed and replaced whenever a write ends
}

func (f *inflight) init() {
	f.n = map[string]int{}
	f.changed = make(chan struct{})
}

func (f *inflight) done(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n[key]--; f.n[key] <= 0 {
		delete(f.n, key)
	}
	close(f.changed)
	f.changed = make(chan struct{})
}

// drain waits until no write is in flight in part (by its namespace's hash; cluster-
// scoped writes when all is set), or ctx ends: then it says which are.
func (m *Member) drain(ctx context.Context, part shard.Set, all bool) error {
	f := &m.writes
	for {
		f.mu.Lock()
		var busy []string
		// Sharded by UID, a write's namespace says nothing of its part: wait for all.
		all = all || m.opts.Field != shard.Namespace
		for key, n := range f.n {
			if n > 0 && (all || key != "" && part.Has(key)) {
				busy = append(busy, key)
			}
		}
		changed := f.changed
		f.mu.Unlock()
		if len(busy) == 0 {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			sort.Strings(busy)
			return fmt.Errorf("writes still in flight in %s: %w", strings.Join(busy, ", "), ctx.Err())
		}
	}
}
