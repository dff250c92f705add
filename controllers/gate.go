package controllers

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kinformer/kinformer/clock"
)

// Owner says which namespaces a process acts in at this moment: a shardgroup.Member is
// one. Acts turns false on its own once Deadline has passed (the process did not renew
// its claim in time), before anything else has noticed.
type Owner interface {
	Acts(namespace string) bool
	// Deadline is when Acts turns false everywhere unless the owner renews first; the
	// zero time when it acts on nothing.
	Deadline() time.Time
}

// Gate lets a controller sync only in the namespaces its process owns, as its Owner
// says: a sharded controller manager owns a part of the cluster and hands parts over as
// members come and go, and the one rule it must never break is that two processes act in
// one namespace at the same moment.
//
// A WorkerPool with a Gate asks it before each sync (Enter) and tells it after (done).
// The Gate cancels the context of every running sync in a namespace its Owner no longer
// acts in: at the Owner's deadline, by a timer of its own, without waiting for anything
// else to notice (a process that wakes from a freeze has its workers mid-sync), and when
// Drain is called after the Owner gave namespaces away. The writes a sync sends are fenced
// separately, at the moment they are sent (shardgroup.Member.Guard): the Gate saves the
// work of syncs that could not write anyway.
//
// The ownership test and the record of running syncs are read under one lock, so no
// sync can slip in between the Owner's change and a Drain.
//
// A nil *Gate lets every sync through (no sharding); a Gate without an Owner lets none.
type Gate struct {
	Owner Owner
	// Clock times the deadline [clock.Real].
	Clock clock.Clock

	mu sync.Mutex
	// running holds the syncs in flight by namespace, each with the cancel of its
	// context; idle is closed (and replaced) whenever a sync ends, waking Drain.
	running map[string]map[*sync.Once]context.CancelFunc
	idle    chan struct{}
	timer   clock.Timer
	armed   time.Time // when timer fires
}

// Enter reports whether a sync of key (namespace/name, or a cluster-scoped name) may
// run. If so, the sync runs under sctx (ctx, or less once the namespace is no longer
// owned) and the caller must call done when it ends.
func (g *Gate) Enter(ctx context.Context, key string) (sctx context.Context, done func(), ok bool) {
	if g == nil {
		return ctx, func() {}, true
	}
	ns := keyNamespace(key)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.Owner == nil || !g.Owner.Acts(ns) {
		return nil, nil, false
	}
	if g.running == nil {
		g.running = map[string]map[*sync.Once]context.CancelFunc{}
	}
	if g.running[ns] == nil {
		g.running[ns] = map[*sync.Once]context.CancelFunc{}
	}
	sctx, cancel := context.WithCancel(ctx)
	once := new(sync.Once)
	g.running[ns][once] = cancel
	g.armLocked()
	return sctx, func() { once.Do(func() { g.exit(ns, once) }) }, true
}

func (g *Gate) exit(ns string, once *sync.Once) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if cancel := g.running[ns][once]; cancel != nil {
		cancel()
	}
	delete(g.running[ns], once)
	if len(g.running[ns]) == 0 {
		delete(g.running, ns)
	}
	if g.idle != nil {
		close(g.idle)
		g.idle = nil
	}
}

func (g *Gate) clock() clock.Clock {
	if g.Clock == nil {
		return clock.Real{}
	}
	return g.Clock
}

// armLocked sets the timer for the Owner's deadline while syncs run, unless it is set
// for that moment already.
func (g *Gate) armLocked() {
	if len(g.running) == 0 {
		return
	}
	at := g.Owner.Deadline()
	if at.IsZero() || g.timer != nil && g.armed.Equal(at) {
		return
	}
	if g.timer != nil {
		g.timer.Stop()
	}
	clk := g.clock()
	g.armed = at
	g.timer = clk.AfterFunc(max(at.Sub(clk.Now()), 0), g.expire)
}

// expire cancels the syncs in namespaces the Owner no longer acts in (its deadline
// passed), and waits for the next deadline if syncs still run.
func (g *Gate) expire() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.timer = nil
	g.cancelLocked()
	g.armLocked()
}

// cancelLocked cancels the syncs in namespaces the Owner no longer acts in, and returns
// their namespaces, one for each sync.
func (g *Gate) cancelLocked() (gone []string) {
	for ns, syncs := range g.running {
		if g.Owner.Acts(ns) {
			continue
		}
		for _, cancel := range syncs {
			cancel()
			gone = append(gone, ns)
		}
	}
	return gone
}

// Drain cancels the syncs running in namespaces the Owner no longer acts in, and waits
// for them to end, or for ctx to end: it then says which namespaces still have a sync
// that ignored its cancellation. Such a sync can write nothing where its process's
// Guard fences it, but it holds a worker.
func (g *Gate) Drain(ctx context.Context) error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for {
		busy := g.cancelLocked()
		if len(busy) == 0 {
			return nil
		}
		if g.idle == nil {
			g.idle = make(chan struct{})
		}
		idle := g.idle
		g.mu.Unlock()
		select {
		case <-idle:
			g.mu.Lock()
		case <-ctx.Done():
			g.mu.Lock()
			sort.Strings(busy)
			return fmt.Errorf("%d sync(s) ignored their cancellation, in %s: %w", len(busy), strings.Join(slices.Compact(busy), ", "), ctx.Err())
		}
	}
}

// keyNamespace is the namespace of a queue key: what comes before the slash, "" for a
// cluster-scoped object.
func keyNamespace(key string) string {
	ns, _, found := strings.Cut(key, "/")
	if !found {
		return ""
	}
	return ns
}
