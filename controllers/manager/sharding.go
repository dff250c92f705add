package manager

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kinformer/kinformer/controllers"
	"github.com/kinformer/kinformer/shard"
	"github.com/kinformer/kinformer/shardgroup"
)

// Sharding makes the manager one member of a shard group (package shardgroup): the
// group's members divide the namespaces between them through their Leases, and this
// manager caches and reconciles only those it is given, handing them over when members
// come and go without ever acting in a namespace another member acts in.
type Sharding struct {
	// Group names the group; every member uses the same name. Required.
	Group string
	// ID names this member: unique among the running members, lower case (a pod name).
	ID string
	// Namespace holds the members' Leases [kube-system].
	Namespace string
	// LeaseDuration, RenewDeadline and RetryPeriod time the Leases as leader election
	// does [15 s / 10 s / 2 s].
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// sharded is a manager's part in its shard group: the member, and what it does when the
// member takes namespaces over or gives them away.
type sharded struct {
	m      *Manager
	member *shardgroup.Member
	gate   *controllers.Gate

	mu sync.Mutex
	// owned are the ranges the controllers act on: what the gate lets through.
	owned []shard.Range
	// started: the informers run (they start with the first ranges acquired, so that they
	// never list the whole cluster).
	started bool
	// runCtx is what the informers run under once started.
	runCtx context.Context
}

// newSharded makes the member of the group; the controllers get gate in their options.
func (m *Manager) newSharded(gate *controllers.Gate) (*sharded, error) {
	s := &sharded{m: m, gate: gate}
	o := m.opts.Sharding
	member, err := shardgroup.New(m.opts.Client, shardgroup.Options{
		Group: o.Group, ID: o.ID, Namespace: o.Namespace,
		LeaseDuration: o.LeaseDuration, RenewDeadline: o.RenewDeadline, RetryPeriod: o.RetryPeriod,
		Field: shard.Namespace, Acquire: s.acquire, Release: s.release,
		Logger: m.log, Registerer: m.registry,
	})
	if err != nil {
		return nil, fmt.Errorf("shard group %s: %w", o.Group, err)
	}
	s.member = member
	return s, nil
}

// selector is the shard of ranges, and whether there is one (a selector without ranges
// would select everything).
func selector(ranges []shard.Range) (shard.Selector, bool) {
	if len(ranges) == 0 {
		return shard.Selector{}, false
	}
	return shard.Selector{Field: shard.Namespace, Ranges: ranges}.Normalize(), true
}

// owns is the gate's test for ranges: nothing when there are none.
func owns(ranges []shard.Range) func(string) bool {
	sel, ok := selector(ranges)
	if !ok {
		return func(string) bool { return false }
	}
	return sel.Matches
}

// acquire takes ranges over: the informers list them (the factory's shard grows), and
// only once the caches hold them does the gate let syncs in, and every Deployment and
// ReplicaSet there is queued, since they may have changed while another member owned
// them without an event saying so here.
func (s *sharded) acquire(ctx context.Context, ranges []shard.Range) error {
	s.mu.Lock()
	grown := append(append([]shard.Range(nil), s.owned...), ranges...)
	sel, _ := selector(grown)
	applied, err := s.m.factory.SetShard(sel)
	if err == nil && !s.started {
		s.m.factory.Start(s.runCtx)
		s.started = true
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}
	select {
	case <-applied:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := s.m.waitForSync(ctx); err != nil {
		return err
	}
	s.m.synced.Store(true)
	s.mu.Lock()
	s.owned = grown
	s.gate.Widen(owns(grown))
	s.mu.Unlock()
	added := owns(ranges)
	for _, c := range s.m.ctrls {
		if r, ok := c.(requeuer); ok {
			r.Requeue(added)
		}
	}
	return nil
}

// release gives ranges away: the gate stops new syncs there at once and waits for the
// running ones, which is what the member waits for before telling the others. The
// informers then drop what they no longer need (without waiting for it).
func (s *sharded) release(ctx context.Context, ranges []shard.Range) error {
	s.mu.Lock()
	kept := shard.Without(s.owned, ranges)
	s.mu.Unlock()
	if err := s.gate.Narrow(ctx, owns(kept)); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.owned = kept
	if sel, ok := selector(kept); ok {
		// Nothing waits on it: the gate already keeps the controllers out.
		_, _ = s.m.factory.SetShard(sel)
	}
	return nil
}

// requeuer is a controller that can queue every object of its own in some namespaces.
type requeuer interface {
	Requeue(owns func(namespace string) bool)
}

// Member is the manager's member of its shard group, nil without Sharding.
func (m *Manager) Member() *shardgroup.Member {
	if m.shards == nil {
		return nil
	}
	return m.shards.member
}

// run takes part in the group and runs the workers, until ctx ends. The workers start at
// once: the gate keeps them out of every namespace until the group gives this member
// some. On ctx's end (SIGTERM) the member releases everything, which waits for the syncs
// in flight (they finish under syncCtx), then deletes its Lease so the others take over
// at once; the workers stop taking keys meanwhile.
func (s *sharded) run(ctx, syncCtx context.Context) error {
	s.mu.Lock()
	s.runCtx = ctx
	s.mu.Unlock()
	var wg sync.WaitGroup
	for name, c := range s.m.ctrls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.m.log.Info("starting workers", "controller", name, "workers", s.m.opts.Workers)
			c.Run(ctx, syncCtx, s.m.opts.Workers)
		}()
	}
	s.m.log.Info("joining the shard group", "group", s.m.opts.Sharding.Group, "id", s.m.opts.Sharding.ID)
	err := s.member.Run(ctx)
	wg.Wait()
	return err
}
