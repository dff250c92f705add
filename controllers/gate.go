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
// A WorkerPool with a Gate asks it before each sync (Enter) and tells it after (Exit).
// Owning more is immediate (Widen); owning less (Narrow) first stops new syncs in what is
// given away, then waits for the syncs already running there to end, so that once
// Narrow returns the process has stopped acting in those namespaces and may say so to
// the others. The ownership test and the count of running syncs change under one lock:
// no sync can slip in between the decision to give a namespace away and the wait.
//
// The zero Gate owns nothing; a nil *Gate lets every sync through (no sharding).
type Gate struct {
	mu   sync.Mutex
	owns func(namespace string) bool
	// running counts the syncs in flight by namespace; idle is closed (and replaced)
	// whenever a namespace's count drops to zero, waking Narrow.
	running map[string]int
	idle    chan struct{}
}

// Enter reports whether a sync of key (namespace/name, or a cluster-scoped name) may
// run; if so, the caller must call Exit(key) when it ends.
func (g *Gate) Enter(key string) bool {
	if g == nil {
		return true
	}
	ns := keyNamespace(key)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.owns == nil || !g.owns(ns) {
		return false
	}
	if g.running == nil {
		g.running = map[string]int{}
	}
	g.running[ns]++
	return true
}

// Exit ends a sync that Enter let through.
func (g *Gate) Exit(key string) {
	if g == nil {
		return
	}
	ns := keyNamespace(key)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running[ns]--; g.running[ns] <= 0 {
		delete(g.running, ns)
		if g.idle != nil {
			close(g.idle)
			g.idle = nil
		}
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
// does not own. It returns ctx's error if ctx ends first; the new test holds anyway, so
// no new sync starts in what was given away.
func (g *Gate) Narrow(ctx context.Context, owns func(namespace string) bool) error {
	g.mu.Lock()
	g.owns = owns
	for {
		busy := false
		for ns := range g.running {
			if owns == nil || !owns(ns) {
				busy = true
				break
			}
		}
		if !busy {
			g.mu.Unlock()
			return nil
		}
		if g.idle == nil {
			g.idle = make(chan struct{})
		}
		idle := g.idle
		g.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
		g.mu.Lock()
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
