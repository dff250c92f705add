package reflector

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
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
// way, so the store gains nothing outside sel beyond what it held. What the loop does then
// depends on where it is (see the package doc's table). While it watches, the change
// costs only the difference: SetShard ends the open watch; the objects of the part the
// shard lost are dropped from the store at once, without a request (for a store that is a
// ScopedReplacer; handlers of an informer hear them deleted); the part it gained, if any,
// is listed alone, fresh (a consistent read of the newest state: it has every write
// answered before the call, such as a previous owner's last ones, which the store's
// resourceVersion may be older than), and merged into the store; then one watch with sel
// resumes from the store's resourceVersion, passing over the events of the part gained
// that the list already reflects. Elsewhere (a list, a streaming list, a backoff before
// the first whole state), and when sel hashes another field than the shard before, the
// whole state is fetched again with sel, the newest: a list or streaming list under way
// is abandoned for a new one before its next request, a backoff under way is waited out
// first, and the store is replaced as by any relist (objects that left the shard are
// deleted, objects that stayed are reused, see Reuser). Status.ShardFiltering goes back
// to ShardFilteringUnknown ("" for the zero Selector) until a request with sel tells.
//
// The channel is closed once the store holds the whole state of sel, or of a shard set
// later (for an Applier, once the store has applied it): that is what a caller waits for
// before acting on the part the shard gained, which it then sees as of a read made after
// the call. (After a change that cost the difference, the part the shard kept is as of
// the resourceVersion the store was at: the watch that resumes from it brings what
// changed since, as it brings any change.) It is also closed when Run returns, and at
// once after it has, so a waiter never hangs on a stopped reflector; a reflector that
// never runs never closes it. A SetShard with the current shard (the same set of hashes
// of the same field) changes nothing and returns the channel of that shard: closed
// already, unless its whole state is still to come.
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
	// What the server did with the shard before is kept for a change that lists nothing.
	next.verdict = cur.verdict
	if f := r.status.ShardFiltering; f == ShardFilteringServer || f == ShardFilteringClient {
		next.verdict = f
	}
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
	r.log.Info("the shard changed", "shard", next.text, "was", cur.text)
	if open != nil {
		open.Close() // the loop sees the shard changed
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
	r.held = spanOf(sh.sel)
	r.fresh = nil // the whole state, all of it at rv
	r.holds(sh)
	r.storeMu.Unlock()
	r.afterApplied(sh.gen)
	return true
}

// holds records that the store has been handed the whole state of sh. storeMu is held.
func (r *Reflector[T]) holds(sh *shardState) {
	r.mu.Lock()
	r.storedGen = sh.gen
	r.mu.Unlock()
}

// afterApplied closes the SetShard channels of generation gen and before once the store
// has applied what it was handed: at once, but for an Applier.
func (r *Reflector[T]) afterApplied(gen int64) {
	if a, ok := r.store.(Applier); ok {
		a.AfterReplace(func() { r.applied(gen) })
	} else {
		r.applied(gen)
	}
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

// refetch is the state after the shard changed under a fetch of the whole state, or
// under a watch when the difference cannot be fetched alone: the whole state again, with
// the new shard, and the newest (a consistent read), as the list of a part gained is
// (see listAdded). Unlike a relist after a 410 it is no failure, and Relists does not
// count it.
func (r *Reflector[T]) refetch() state {
	r.log.Debug("fetching the whole state with the new shard", "shard", r.shard.Load().text)
	return r.fetchWhole(listing{resharded: true})
}

// settle is the state after the shard changed under a watch (or under the list of a
// part it gained): the store holds all of r.held at the last resourceVersion (the parts
// in r.fresh at their lists'), and the shard is now sh. The part of r.held outside sh is
// dropped from the store at once, with no request. What sh has beyond r.held is then listed (listingAdded); when there is
// nothing, the store holds sh and a watch with it resumes from the last resourceVersion.
// A store that cannot replace a part, and a shard of another field (no part of one is a
// part of the other), fetch the whole state instead.
func (r *Reflector[T]) settle() state {
	sh := r.shard.Load()
	scoped, ok := r.store.(ScopedReplacer[T])
	if !ok {
		return r.refetch()
	}
	lost, gained, ok := r.held.diff(spanOf(sh.sel))
	if !ok {
		return r.refetch()
	}
	r.storeMu.Lock()
	if r.shard.Load() != sh {
		// Changed again: a watching step finds the store stale and settles anew.
		r.storeMu.Unlock()
		return watching[T]{}
	}
	rv := r.LastSyncResourceVersion()
	if !lost.empty() {
		scoped.ReplaceWithin(inSpan[T](lost), nil, rv)
		r.held = r.held.without(lost)
		r.log.Info("dropped the part the shard lost", "shard", sh.text, "lost", lost.selector().String())
	}
	if !gained.empty() {
		r.storeMu.Unlock()
		return listingAdded{}
	}
	r.holds(sh)
	r.storeMu.Unlock()
	if v := sh.verdict; v != "" && !sh.sel.IsZero() && r.Status().ShardFiltering == ShardFilteringUnknown {
		// No list tells about sh: the server that served the shard before serves it.
		// Said before SetShard's channel closes, so that a caller woken by it reads it.
		r.judgeShard(sh, v, "the server did so with the shard before, of which this one is a part")
	}
	r.afterApplied(sh.gen)
	return watching[T]{}
}

// listAdded lists the part that the shard gained (what it has beyond r.held) fresh: a
// consistent list, at resourceVersion "" (in pages, whose continue tokens keep its
// snapshot), of the newest state, at some resourceVersion F. Fresh, because whoever owned
// the part before may have written there after R, the resourceVersion the store is at (a
// watch of a quiet part moves only on a bookmark), and a new owner must see its last
// writes, which the hand-over answered before this one acquired. The part replaces what
// the store holds there, the rest untouched; then one watch with the whole shard resumes
// from R, the rest's position, whose events since R are all news to the store. Those of
// the part gained up to F are not (the list saw them, or, for a DELETED, that the object
// is gone): they are dropped until the watch has passed F (see freshPart). The watch was
// closed before, so R no longer moves. A list that the shard changes under is thrown
// away, and what the store holds is settled against the new shard. The request refused,
// the whole state is fetched with the new shard; other failures back off, and try again.
func (r *Reflector[T]) listAdded(ctx context.Context) state {
	r.setState(StateListingAdded)
	sh := r.shard.Load()
	lost, gained, ok := r.held.diff(spanOf(sh.sel))
	if _, scoped := r.store.(ScopedReplacer[T]); !ok || !scoped || !lost.empty() || gained.empty() {
		return r.settle()
	}
	part := gained.selector()
	asked := &shardState{sel: part, text: part.String(), gen: sh.gen}
	rv := r.LastSyncResourceVersion()
	items, listRV, err := r.listPages(ctx, r.listOptions("", part), asked, sh)
	switch {
	case errors.Is(err, errShardChanged):
		return r.settle()
	case err != nil && (object.IsInvalid(err) || object.CodeOf(err) == http.StatusBadRequest):
		// No failure of the loop's (nothing it followed was lost), and no relist counted:
		// this is what every shard change cost before.
		r.log.Info("the part gained cannot be listed alone: fetching the whole state with the new shard",
			"reason", err, "shard", sh.text)
		return r.refetch()
	case err != nil:
		r.fail(err)
		return backingOff{err: err, then: listingAdded{}}
	}
	var ahead *freshPart[T]
	switch c, cerr := object.CompareResourceVersion(listRV, rv); {
	case cerr != nil:
		// A server before 1.35 promised no order. The events the watch replays of the part
		// gained are applied as they come: its objects may go back to a state the list had
		// passed, for as long as the replay lasts.
		r.log.Warn("the list of the part gained and the store's resourceVersion do not compare: the watch's replay of the part is applied",
			"reason", cerr, "list", listRV, "resourceVersion", rv, "shard", sh.text)
	case c < 0:
		// A consistent read older than what the store followed: what the part did between
		// the two would be lost to the watch from rv. A whole state is one state.
		r.log.Warn("the list of the part gained is older than the store: fetching the whole state with the new shard",
			"list", listRV, "resourceVersion", rv, "shard", sh.text)
		return r.refetch()
	case c > 0:
		ahead = &freshPart[T]{in: inSpan[T](gained), rv: listRV}
	}
	// The list has succeeded: the status says so before the store has it (see list).
	r.update(func(st *Status) { st.LastError = nil })
	if !r.merge(items, gained, rv, ahead, sh) {
		return r.settle()
	}
	r.log.Debug("listed the part gained", "objects", len(items), "resourceVersion", listRV, "watch from", rv, "part", asked.text)
	return watching[T]{}
}

// merge hands the store items, all the objects of gained as of a list fresher than rv,
// the resourceVersion the rest of the store is at, to replace what it holds there, unless
// the shard has changed since sh (then it returns false and stores nothing: the part was
// listed for a shard no longer current). The store then holds sh, and ahead, when the
// list is newer than rv, filters the watch that resumes from rv.
func (r *Reflector[T]) merge(items []T, gained span, rv string, ahead *freshPart[T], sh *shardState) bool {
	r.storeMu.Lock()
	if r.shard.Load() != sh {
		r.storeMu.Unlock()
		return false
	}
	r.store.(ScopedReplacer[T]).ReplaceWithin(inSpan[T](gained), items, rv)
	r.held = spanOf(sh.sel)
	if ahead != nil {
		r.fresh = append(r.fresh, *ahead)
	}
	r.holds(sh)
	r.storeMu.Unlock()
	r.afterApplied(sh.gen)
	return true
}

// freshPart is a part of the store ahead of the watch: a part that SetShard added, listed
// fresh at rv, while the rest of the store is at the older resourceVersion the watch
// resumes from (see listAdded). Until the watch has passed rv, an event of an object in
// the part at rv or before is one the list already reflects (a DELETED among them: the
// list did not have the object), and applying it would take the object back to an older
// state, or delete what the store never held: it is dropped (dropEvent), and the store
// hears it as a bookmark. resourceVersions compare since Kubernetes 1.35
// (object.CompareResourceVersion).
type freshPart[T object.Object] struct {
	in func(T) bool
	rv string
}

// known reports whether an event of obj is one a fresh part's list already reflects.
func (r *Reflector[T]) known(obj T) bool {
	for _, p := range r.fresh {
		if p.in(obj) {
			if c, err := object.CompareResourceVersion(obj.Meta().ResourceVersion, p.rv); err == nil && c <= 0 {
				return true
			}
		}
	}
	return false
}

// passed notes that the watch has reached rv (an event's or a bookmark's): the fresh
// parts listed at rv or before are no longer ahead of it, and their filter goes. One
// that rv does not compare with goes too, having nothing to judge by.
func (r *Reflector[T]) passed(rv string) {
	if len(r.fresh) == 0 || rv == "" {
		return
	}
	r.fresh = slices.DeleteFunc(r.fresh, func(p freshPart[T]) bool {
		c, err := object.CompareResourceVersion(rv, p.rv)
		return err != nil || c >= 0
	})
}

// relistRV is the resourceVersion a relist asks for at least: the newest state the store
// holds of any part, LastSyncResourceVersion or a fresh part's list, so that no object
// goes back to an older state.
func (r *Reflector[T]) relistRV() string {
	rv := r.LastSyncResourceVersion()
	for _, p := range r.fresh {
		if c, err := object.CompareResourceVersion(p.rv, rv); err == nil && c > 0 {
			rv = p.rv
		}
	}
	return rv
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
