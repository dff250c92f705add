package manager

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kinformer/kinformer/controllers"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/shard"
	"github.com/kinformer/kinformer/shardgroup"
)

// Sharding makes the manager one member of a shard group (package shardgroup): the
// group's members divide the namespaces between them through their Leases, and this
// manager caches and reconciles only those it is given, handing them over when members
// come and go without ever writing in a namespace another member writes in.
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
	// HandoverTimeout bounds each hand-over: taking a part over (listing it, waiting for
	// the caches) and giving one away [shardgroup.DefaultHandoverTimeout].
	HandoverTimeout time.Duration
}

// sharded is a manager's part in its shard group: the member, and what it does when the
// member takes namespaces over or gives them away. The member is the one source of
// truth of what this process acts on: the gate asks it before each sync (Acts), the
// client of the controllers and their event recorders before each write (Guard);
// acquire and release only fetch and drop the caches of the parts handed over.
type sharded struct {
	m      *Manager
	member *shardgroup.Member
	gate   *controllers.Gate

	mu sync.Mutex
	// cached is what the informers are to hold: every part acquired and not released
	// since. The member's Status is no measure of it: it is published after the member's
	// round, so an Acquire that follows another in the same round would read it without
	// the part the first one took, and shrink the caches under the member's feet (seen
	// from outside: a member acting on a namespace its informers no longer watched).
	// The callbacks run one at a time, each after the previous one returned.
	cached shard.Set
	// started: the informers run (they start with the first part acquired, so that they
	// never list the whole cluster).
	started bool
	// runCtx is what the informers run under once started.
	runCtx context.Context
}

// newSharded makes the member of the group, the gate that asks it before each sync, and
// the client, fenced by its Guard, that everything writing for it uses.
func (m *Manager) newSharded() (*sharded, *listwatch.Client, error) {
	s := &sharded{m: m}
	o := m.opts.Sharding
	member, err := shardgroup.New(m.opts.Client, shardgroup.Options{
		Group: o.Group, ID: o.ID, Namespace: o.Namespace,
		LeaseDuration: o.LeaseDuration, RenewDeadline: o.RenewDeadline, RetryPeriod: o.RetryPeriod,
		HandoverTimeout: o.HandoverTimeout,
		Field:           shard.Namespace, Acquire: s.acquire, Release: s.release, Acting: s.acting, Load: s.load,
		Logger: m.log, Registerer: m.registry,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("shard group %s: %w", o.Group, err)
	}
	s.member = member
	s.gate = &controllers.Gate{Owner: member}
	return s, m.opts.Client.WithGuard(member.Guard()), nil
}

// reshard makes the informers hold part, and returns the channel closed once they do.
// Only the difference is fetched: a part gained is listed alone, a part lost dropped
// from the caches without a request (see reflector.Reflector.SetShard).
func (s *sharded) reshard(part shard.Set) (<-chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sel, ok := part.Selector(shard.Namespace)
	if !ok {
		// Nothing to hold. An empty selector would select everything: keep the last
		// part's caches instead (nothing acts on them) until a part comes again.
		s.cached = shard.Set{}
		return closed(), nil
	}
	applied, err := s.m.factory.SetShard(sel)
	if err != nil {
		return nil, err
	}
	s.cached = part
	if !s.started {
		s.m.factory.Start(s.runCtx)
		s.started = true
	}
	return applied, nil
}

func closed() <-chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}

// acquire takes part over: the informers list it (and only it). The member acts on it,
// and the gate and the Guard let syncs and writes there through, once this returns.
// ctx ends at the hand-over's bound: a cache that cannot sync by then (a part too large
// to list, a server refusing) fails the acquisition, and the caches shrink back.
func (s *sharded) acquire(ctx context.Context, part shard.Set) error {
	// What the caches are to hold, not what they happen to hold: a part cached since the
	// member gave it up (a member that gave everything up keeps its last caches, see
	// reshard) is dropped now.
	before := s.held()
	applied, err := s.reshard(before.Union(part))
	if err == nil {
		select {
		case <-applied:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	if err == nil {
		err = s.m.waitForSync(ctx)
	}
	if err != nil {
		_, _ = s.reshard(before)
		return fmt.Errorf("caching %s: %w", part, err)
	}
	s.m.synced.Store(true)
	return nil
}

// acting queues every Deployment and ReplicaSet of a part the member now acts on: they
// may have changed while another member owned them, without an event saying so here,
// and the events of their listing met a gate that did not let them through yet.
func (s *sharded) acting(part shard.Set) {
	for _, c := range s.m.ctrls {
		if r, ok := c.(requeuer); ok {
			r.Requeue(part.Has)
		}
	}
}

// release gives part away. The member has already stopped acting there (Acts and the
// Guard refuse it) and waited for the writes its Guard let through; what is left is the
// work in flight: the gate cancels the syncs there and waits for them, the controllers
// forget what they expected there, and the informers drop it. A sync that ignores its
// cancellation beyond the renew deadline is reported and left: it can write nothing.
func (s *sharded) release(ctx context.Context, part shard.Set) error {
	o := s.m.opts.Sharding
	bound := o.RenewDeadline
	if bound == 0 {
		bound = shardgroup.DefaultRenewDeadline
	}
	if ctx.Err() != nil {
		// The member woke past its lease: the others have taken over already. The syncs
		// are cancelled (the gate did at the deadline) and their writes refused; there is
		// nothing to wait for.
		s.m.log.Info("releasing namespaces the group has already handed on", "err", ctx.Err())
	}
	dctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	if err := s.gate.Drain(dctx); err != nil && ctx.Err() == nil {
		s.m.log.Warn("handing namespaces over with syncs still running; their writes are refused", "err", err)
	}
	for _, c := range s.m.ctrls {
		if f, ok := c.(forgetter); ok {
			f.Forget(part.Has)
		}
	}
	// The member acts on part no more: the caches drop it.
	_, err := s.reshard(s.held().Minus(part))
	return err
}

// held is what the informers are to hold (see cached).
func (s *sharded) held() shard.Set {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cached
}

// load counts the objects in the informers' caches by namespace, each informer once:
// what the member publishes for the group's plan.
func (s *sharded) load() map[string]int64 {
	type counter interface{ CountByNamespace() map[string]int }
	seen := map[informer.Syncer]bool{}
	out := map[string]int64{}
	for _, c := range s.m.ctrls {
		for _, sy := range c.Syncers() {
			cn, ok := sy.(counter)
			if !ok || seen[sy] {
				continue
			}
			seen[sy] = true
			for ns, n := range cn.CountByNamespace() {
				out[ns] += int64(n)
			}
		}
	}
	return out
}

// requeuer is a controller that can queue every object of its own in some namespaces.
type requeuer interface {
	Requeue(owns func(namespace string) bool)
}

// forgetter is a controller that can drop what it expects of namespaces handed away.
type forgetter interface {
	Forget(gone func(namespace string) bool)
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
// in flight, then deletes its Lease so the others take over at once; the workers stop
// taking keys meanwhile.
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
