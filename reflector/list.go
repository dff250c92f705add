package reflector

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
)

// list fetches the full state in pages and hands it to the store. The first list asks
// for resourceVersion "0" (any state, served from the apiserver's watch cache), or for
// the newest ("", a consistent read) under Options.ConsistentLists; a relist asks for at
// least the newest one the store holds (relistRV), and for the newest state when that
// one is no longer available; the list of a shard that changed asks for the newest
// state, as the list of a part it gained does (see listAdded). It fails with
// errShardChanged, storing nothing, when SetShard changes the shard before the list is
// stored.
func (r *Reflector[T]) list(ctx context.Context, l listing) error {
	r.setState(StateListing)
	sh := r.shard.Load()
	rv := "0"
	switch {
	case l.resharded:
		rv = ""
	case l.relist:
		rv = r.relistRV()
	case r.opts.ConsistentLists:
		rv = ""
	}
	items, listRV, err := r.listPages(ctx, r.listOptions(rv, sh.sel), sh, sh)
	if err != nil && (object.IsGone(err) || isTooLargeRV(err)) && rv != "" {
		items, listRV, err = r.listPages(ctx, r.listOptions("", sh.sel), sh, sh)
	}
	if err != nil {
		return err
	}
	// The list has succeeded: the status says so before the store has it, so that a
	// caller who sees the cache synced never sees the error of a failed attempt before.
	listed := r.Status().Listed
	r.update(func(st *Status) { st.Listed, st.LastError = true, nil })
	if !r.replace(items, listRV, sh) {
		r.update(func(st *Status) { st.Listed = listed }) // thrown away: nothing was handed over
		return errShardChanged
	}
	r.recordRV(listRV)
	r.log.Debug("listed", "objects", len(items), "resourceVersion", listRV)
	return nil
}

// listPages lists with opts, following continue tokens. opts asks for the shard asked
// (sh, the current shard, or the part of it that SetShard added); sh is judged by what
// the pages say about shards. A token that expires mid-way (410) restarts the list once,
// unpaginated, at the newest state; but a list at an exact resourceVersion fails with
// that 410, since no other state will do. Once the shard is no longer sh, no page more is
// asked for (errShardChanged).
func (r *Reflector[T]) listPages(ctx context.Context, opts listwatch.ListOptions, asked, sh *shardState) ([]T, string, error) {
	r.opts.Metrics.List()
	first := opts
	var items []T
	listRV := ""
	cur := r.fetchPage(ctx, opts) // and the page after it, once its token is known: see pages.go
	for {
		ahead, token := r.next(ctx, cur, opts, sh)
		page, err := cur.result()
		if err != nil || page.Continue != token {
			ahead.abandon() // nothing follows a failed page; a page told another token has its own
			ahead = nil
		}
		if err != nil && opts.Continue != "" && object.IsGone(err) && first.ResourceVersionMatch != "Exact" {
			// The pages so far are of a state the server no longer has: start over at
			// the newest one, whole.
			items, listRV = nil, ""
			opts = first
			opts.ResourceVersion, opts.ResourceVersionMatch, opts.Limit = "", "", 0
			page, err = r.lw.List(ctx, opts)
		}
		if err != nil {
			return nil, "", err
		}
		if listRV == "" {
			listRV = page.ResourceVersion
		}
		r.countListed(len(page.Items))
		sent := len(page.Items)
		page.Items = r.keepInShard(page.Items, page.ShardInfo, asked, sh)
		r.reuse(page.Items)
		if items == nil && sent > 0 && page.RemainingItemCount != nil && *page.RemainingItemCount > 0 && *page.RemainingItemCount <= maxItemsHint {
			// The server says how many are to come (about: objects may come and go
			// meanwhile): room for them at once, instead of doubling through a million;
			// for the share of them kept, when the server does not filter by shard.
			more := int(*page.RemainingItemCount) * len(page.Items) / sent
			items = make([]T, 0, len(page.Items)+more)
		}
		items = append(items, page.Items...)
		if page.Continue == "" {
			return items, listRV, nil
		}
		if r.changed(sh) {
			ahead.abandon()
			return nil, "", errShardChanged
		}
		opts.Continue, opts.ResourceVersion, opts.ResourceVersionMatch = page.Continue, "", ""
		if ahead == nil {
			ahead = r.fetchPage(ctx, opts)
		}
		cur = ahead
	}
}

// maxItemsHint bounds the room a list makes for the items a server says are to come: a
// wrong count must not make it allocate gigabytes (beyond it, the slice grows as
// objects arrive).
const maxItemsHint = 1 << 22

// countListed hands the metrics the number of objects a list page or a streaming list
// delivered.
func (r *Reflector[T]) countListed(n int) {
	if m, ok := r.opts.Metrics.(ListedMetrics); ok && n > 0 {
		m.Listed(n)
	}
}

// listOptions are the options of a list at rv ("0": any state, "": the newest, else at
// least rv) in the part of the hash space sel.
func (r *Reflector[T]) listOptions(rv string, sel shard.Selector) listwatch.ListOptions {
	opts := listwatch.ListOptions{LabelSelector: r.opts.LabelSelector, FieldSelector: r.opts.FieldSelector, Shard: sel,
		ResourceVersion: rv, Limit: r.opts.PageSize, MaxFrameSize: r.opts.MaxFrameSize, Decode: r.opts.Decode}
	if rv != "" && rv != "0" {
		opts.ResourceVersionMatch = "NotOlderThan"
	}
	return opts
}

// reuse swaps each listed object that the store already holds in the same state for the
// stored one (see Reuser), as each page arrives, so a relist never holds two copies of
// what did not change.
func (r *Reflector[T]) reuse(items []T) {
	if reuser, ok := r.store.(Reuser[T]); ok {
		for i, obj := range items {
			items[i] = reuser.Reuse(obj)
		}
	}
}

// errNoInitialEventsEnd is a streaming list whose end bookmark did not come in time.
var errNoInitialEventsEnd = errors.New("streaming list: no initial-events-end bookmark in time")

// streamList fetches the initial state as a stream of ADDED events ending with the
// initial-events-end bookmark, hands it to the store in one Replace, and goes on watching
// in the same stream. Any sign that the server is not doing a streaming list switches
// the reflector to list+watch for good: a refusal, an event other than ADDED before the
// bookmark, or no bookmark within InitialEventsTimeout. A SetShard before the bookmark
// ends the stream (it is tracked for SetShard to close) and starts another with the new
// shard, storing nothing.
func (r *Reflector[T]) streamList(ctx context.Context) state {
	r.setState(StateStreamingList)
	sh := r.shard.Load()
	opts := r.watchOptions(sh)
	opts.SendInitialEvents, opts.ResourceVersionMatch = true, "NotOlderThan"
	r.opts.Metrics.Watch()
	w, err := r.lw.Watch(ctx, opts)
	if err != nil {
		if object.IsInvalid(err) || object.CodeOf(err) == http.StatusBadRequest {
			return r.fallBack(err)
		}
		return r.failed(err, streamingList{})
	}
	if !r.track(w, sh) {
		w.Close()
		return r.refetch()
	}
	stopOnCancel := context.AfterFunc(ctx, w.Close) // see watch
	defer stopOnCancel()
	var timedOut bool
	var mu sync.Mutex
	timer := r.clock.AfterFunc(r.opts.InitialEventsTimeout, func() {
		mu.Lock()
		timedOut = true
		mu.Unlock()
		w.Close()
	})
	end := func() {
		timer.Stop()
		w.Close()
		r.untrack()
	}
	var items []T
	streamed := 0 // objects the stream delivered, for ListedMetrics
	defer func() { r.countListed(streamed) }()
	for {
		ev, err := w.Next()
		if err != nil {
			end()
			mu.Lock()
			late := timedOut
			mu.Unlock()
			switch {
			case r.changed(sh):
				return r.refetch() // SetShard closed it, or it will
			case late:
				return r.fallBack(errNoInitialEventsEnd)
			}
			return r.failed(err, streamingList{})
		}
		switch ev.Type {
		case listwatch.Added:
			streamed++
			if !inShard(sh, ev.Object) {
				// No shardInfo comes with a streaming list: an object outside the shard is
				// the only sign that the server ignored the selector.
				r.droppedOutside(ev.Object, "the streamed object", sh)
				continue
			}
			items = append(items, ev.Object)
		case listwatch.Bookmark:
			if ev.Object.Meta().Annotations[listwatch.InitialEventsEndAnnotation] != "true" {
				continue
			}
			timer.Stop()
			rv := ev.Object.Meta().ResourceVersion
			listed := r.Status().Listed
			r.update(func(st *Status) { st.Listed, st.LastError = true, nil }) // before the store has it, as in list
			if !r.replace(items, rv, sh) {
				r.update(func(st *Status) { st.Listed = listed })
				end()
				return r.refetch()
			}
			r.recordRV(rv)
			r.log.Debug("streamed the list", "objects", len(items), "resourceVersion", rv)
			return watching[T]{open: w}
		default:
			// A server that does not know sendInitialEvents answers with a plain watch:
			// its ADDED events are not a complete state and the end bookmark never
			// comes. Retrying would do the same forever.
			end()
			return r.fallBack(fmt.Errorf("server sent %s before the initial-events-end bookmark: it does not support streaming lists", ev.Type))
		}
	}
}

// fallBack gives up streaming lists for good, and lists instead.
func (r *Reflector[T]) fallBack(why error) state {
	r.log.Warn("streaming list given up for list+watch", "reason", why)
	err := fmt.Errorf("%s: streaming list given up for list+watch: %w", r.opts.Name, why)
	r.update(func(st *Status) {
		st.StreamingFallback, st.StreamingFallbackReason, st.LastError = true, err, err
	})
	return listing{}
}

// isTooLargeRV reports the apiserver's "Too large resource version" (the RV is newer than
// its watch cache), which like 410 asks for a fresh list.
func isTooLargeRV(err error) bool {
	se, ok := object.AsStatus(err)
	if !ok {
		return false
	}
	if d := se.Status.Details; d != nil {
		for _, c := range d.Causes {
			if c.Type == "ResourceVersionTooLarge" {
				return true
			}
		}
	}
	return strings.Contains(se.Status.Message, "Too large resource version")
}
