package reflector

import (
	"errors"
	"fmt"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/shard"
)

// errShardChanged ends a fetch of the whole state that SetShard overtook: what it has is
// not the new shard, so none of it is stored.
var errShardChanged = errors.New("the shard changed")

// shardWaiter is a channel of SetShard's, closed once a whole state of generation gen,
// or a later one, is stored.
type shardWaiter struct {
	gen  int64
	done chan struct{}
}

// closedChan is closed from the start: the answer of a SetShard with nothing to wait for.
func closedChan() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}

// SetShard changes the reflector's shard (Options.Shard) to sel, as a sharded controller
// manager does when members join or leave and its part of the cluster grows or shrinks.
// It may be called from any goroutine, before Run (it then only sets the shard) or while
// Run runs. It refuses a selector that fails shard.Selector.Validate; the zero Selector
// is no shard.
//
// The client-side filter switches at once: once SetShard returns, every listed object and
// watch event outside sel is dropped before the store sees it, even one already on its
// way, so the store gains nothing outside sel beyond what it held. The loop then fetches
// the whole state again with sel (see the package doc's table): the open watch is ended
// and a relist (a streaming list while the server does them) follows at once; a list or
// streaming list under way is abandoned for a new one before its next request; a backoff
// under way is waited out first. The store is replaced by that list as by any relist:
// objects that left the shard are deleted, objects that stayed are reused (Reuser).
// Status.ShardFiltering goes back to ShardFilteringUnknown ("" for the zero Selector)
// until a request with sel tells.
//
// The channel is closed once a whole state fetched with sel, or with a shard set later,
// is in the store (for an Applier, once the store has applied it): that is what a caller
// waits for before acting on the part the shard gained. It is also closed when Run
// returns, and at once after it has, so a waiter never hangs on a stopped reflector; a
// reflector that never runs never closes it. A SetShard with the current shard (the
// same set of hashes of the same field) changes nothing and returns the channel of that
// shard: closed already, unless its whole state is still to come.
//
// The Store's methods must not call SetShard: the reflector holds a lock across each
// store call that SetShard takes. OnStatus subscribers and the Applier's function may.
func (r *Reflector[T]) SetShard(sel shard.Selector) (<-chan struct{}, error) {
	if err := sel.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", r.opts.Name, err)
	}
	r.storeMu.Lock()
	r.mu.Lock()
	cur := r.shard.Load()
	if sameShard(cur.sel, sel) {
		done := r.waitLocked(cur.gen)
		r.mu.Unlock()
		r.storeMu.Unlock()
		return done, nil
	}
	next := newShardState(sel, cur.gen+1)
	r.shard.Store(next)
	old := r.status
	r.status.ShardFiltering = ""
	if !sel.IsZero() {
		r.status.ShardFiltering = ShardFilteringUnknown
	}
	st := r.status
	done := r.waitLocked(next.gen)
	open := r.stream
	r.stream = nil
	r.mu.Unlock()
	r.storeMu.Unlock()

	if st.transition(old) {
		r.subscribers.Notify(st)
	}
	if st.ShardFiltering != old.ShardFiltering {
		r.tellShardFiltering(st.ShardFiltering)
	}
	r.log.Info("the shard changed: fetching the whole state again", "shard", next.text, "was", cur.text)
	if open != nil {
		open.Close() // the loop sees the shard changed, and relists
	}
	return done, nil
}

// sameShard reports whether a and b select the same hashes of the same field (any two
// Selectors without ranges select everything).
func sameShard(a, b shard.Selector) bool {
	return a.Normalize().String() == b.Normalize().String()
}

// waitLocked returns a channel closed once the store has applied a whole state of
// generation gen: already closed if it has, or if Run has returned. r.mu is held.
func (r *Reflector[T]) waitLocked(gen int64) chan struct{} {
	if r.appliedGen >= gen || r.status.State == StateStopped {
		return closedChan()
	}
	w := shardWaiter{gen: gen, done: make(chan struct{})}
	r.waiters = append(r.waiters, w)
	return w.done
}

// replace hands the store items, the whole state at rv fetched with sh, unless the shard
// has changed since sh: then it is not the shard's state, nothing is stored and replace
// returns false. The check and the Replace are one step under storeMu, which SetShard
// takes to change the shard. Once the store has applied it (at once, but for an
// Applier), the SetShard channels it answers are closed.
func (r *Reflector[T]) replace(items []T, rv string, sh *shardState) bool {
	r.storeMu.Lock()
	if r.shard.Load() != sh {
		r.storeMu.Unlock()
		return false
	}
	r.store.Replace(items, rv)
	r.mu.Lock()
	r.storedGen = sh.gen
	r.mu.Unlock()
	r.storeMu.Unlock()
	if a, ok := r.store.(Applier); ok {
		a.AfterReplace(func() { r.applied(sh.gen) })
	} else {
		r.applied(sh.gen)
	}
	return true
}

// applied notes that the store has applied a whole state of generation gen, and closes
// the SetShard channels it answers.
func (r *Reflector[T]) applied(gen int64) {
	var done []shardWaiter
	r.mu.Lock()
	r.appliedGen = max(r.appliedGen, gen)
	kept := r.waiters[:0]
	for _, w := range r.waiters {
		if w.gen <= r.appliedGen {
			done = append(done, w)
		} else {
			kept = append(kept, w)
		}
	}
	clear(r.waiters[len(kept):])
	r.waiters = kept
	r.mu.Unlock()
	for _, w := range done {
		close(w.done)
	}
}

// current returns the current shard, and whether the store holds a whole state of
// another one (or none), which no watch may follow.
func (r *Reflector[T]) current() (sh *shardState, stale bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sh = r.shard.Load()
	return sh, r.storedGen != sh.gen
}

// changed reports whether the shard is no longer sh.
func (r *Reflector[T]) changed(sh *shardState) bool { return r.shard.Load() != sh }

// track records w, opened with sh, as the stream SetShard closes. It returns false, and
// records nothing, when the shard has already changed from sh: the caller closes w.
func (r *Reflector[T]) track(w listwatch.Stream[T], sh *shardState) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shard.Load() != sh {
		return false
	}
	r.stream = w
	return true
}

// untrack forgets the open stream: the loop has closed it, or is about to.
func (r *Reflector[T]) untrack() {
	r.mu.Lock()
	r.stream = nil
	r.mu.Unlock()
}

// refetch is the state after the shard changed under a fetch of the whole state or a
// watch: the whole state again, with the new shard. Unlike a relist after a 410 it is no
// failure, and Relists does not count it.
func (r *Reflector[T]) refetch() state {
	r.log.Debug("fetching the whole state with the new shard", "shard", r.shard.Load().text)
	return r.fetchWhole(true)
}

// stop marks the reflector stopped as Run returns, and closes the SetShard channels
// still waiting: none of them will be answered now.
func (r *Reflector[T]) stop() {
	var waiting []shardWaiter
	r.update(func(st *Status) {
		st.State = StateStopped
		waiting, r.waiters = r.waiters, nil
		r.stream = nil
	})
	for _, w := range waiting {
		close(w.done)
	}
}
