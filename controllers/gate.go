package controllers

import (
	"context"
	"strings"
	"sync"
)

// Gate lets a controller act only in the namespaces its process owns, and lets the
// process give namespaces away safely: a sharded controller manager owns a part of the
// cluster and hands parts over as members come and go, and the one rule it must never
// break is that two processes act in one namespace at the same moment.
//
// A WorkerPool with a Gate asks it before each sync (Enter) and tells it after (done).
// Owning more is immediate (Widen); owning less (Narrow) first stops new syncs in what is
// given away, then waits for the syncs already running there to end, so that once
// Narrow returns the process has stopped acting in those namespaces and may say so to
// the others. The ownership test and the count of running syncs change under one lock:
// no sync can slip in between the decision to give a namespace away and the wait.
//
// A sync that outlives Narrow's wait (its context ended: the process must have stopped
// acting by then, as a member whose Lease is lost must) has its context cancelled, so its
// requests stop where the client can stop them.
//
// The zero Gate owns nothing; a nil *Gate lets every sync through (no sharding).
type Gate struct {
	mu   sync.Mutex
	owns func(namespace string) bool
	// running holds the syncs in flight by namespace, each with the cancel of its
	// context; idle is closed (and replaced) whenever a sync ends, waking Narrow.
	running map[string]map[*sync.Once]context.CancelFunc
	idle    chan struct{}
}

// Enter reports whether a sync of key (namespace/name, or a cluster-scoped name) may
// run. If so, the sync runs under sctx (ctx, or less if the namespace is taken away by
// force) and the caller must call done when it ends.
func (g *Gate) Enter(ctx context.Context, key string) (sctx context.Context, done func(), ok bool) {
	if g == nil {
		return ctx, func() {}, true
	}
	ns := keyNamespace(key)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.owns == nil || !g.owns(ns) {
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

// Widen makes owns the gate's test: call it with a test that owns at least what the
// current one does (taking namespaces over), once the caches hold them.
func (g *Gate) Widen(owns func(namespace string) bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.owns = owns
}

// Narrow makes owns the gate's test, then waits until no sync runs in a namespace owns
// does not own. If ctx ends first, it cancels the contexts of those syncs and returns
// ctx's error; the new test holds either way, so no new sync starts in what was given
// away.
func (g *Gate) Narrow(ctx context.Context, owns func(namespace string) bool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.owns = owns
	for {
		var busy []context.CancelFunc
		for ns, syncs := range g.running {
			if owns == nil || !owns(ns) {
				for _, cancel := range syncs {
					busy = append(busy, cancel)
				}
			}
		}
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
			for _, cancel := range busy {
				cancel()
			}
			return ctx.Err()
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
