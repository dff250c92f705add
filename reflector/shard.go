package reflector

import (
	"fmt"
	"slices"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
)

// ShardFiltering says who keeps the objects outside Options.Shard away from the store.
//
// The reflector always drops them itself, so the store holds exactly the shard either
// way. What differs is the cost: when the server filters, the other objects never
// travel; when it does not, every object of the resource is sent, decoded and hashed
// before most are dropped, and a list served whole (as from the watch cache) is held
// whole for a moment. So a shard that saves no bandwidth, CPU or peak memory, while its
// cache is the right size, is a reflector whose ShardFiltering is ShardFilteringClient.
type ShardFiltering string

const (
	// ShardFilteringUnknown: Options.Shard is set (or SetShard has just changed it) and
	// nothing has told yet about the current shard. Only a list tells for sure (by
	// metadata.shardInfo); a streaming list's events and bookmark carry no word of it, so
	// a reflector that streams its lists stays here until an object outside the shard
	// arrives, which proves the server ignored the selector. A shard change that lists
	// nothing (the shard shrank while the loop watched) takes the word the server gave
	// about the shard before.
	ShardFilteringUnknown ShardFiltering = "Unknown"
	// ShardFilteringServer: the last list came with the selector echoed in its
	// metadata.shardInfo, and nothing outside the shard has arrived since.
	ShardFilteringServer ShardFiltering = "Server"
	// ShardFilteringClient: the server ignored the selector (its list had no
	// metadata.shardInfo, as from a kube-apiserver without the ShardedListAndWatch
	// feature gate, or it sent an object outside the shard); the reflector alone filters.
	ShardFilteringClient ShardFiltering = "Client"
)

// ShardMetrics is an optional Metrics method set, for the client-side shard filter:
// ShardFiltering hears each change of Status.ShardFiltering, ShardDropped each batch
// of objects or events dropped as outside the shard (n > 0).
type ShardMetrics interface {
	ShardFiltering(f ShardFiltering)
	ShardDropped(n int)
}

// shardState is one shard of a reflector's life: Options.Shard, then each SetShard's.
// Requests are made with a snapshot of it, so that what comes back is judged against
// what was asked, and is stored only if the shard is still the current one.
type shardState struct {
	sel shard.Selector
	// text is sel on the wire: what a list's shardInfo must echo.
	text string
	// gen counts the changes: 0 for Options.Shard, then one more for each SetShard that
	// changed it.
	gen int64
	// verdict is the last word on whether the server filters (Server or Client) about a
	// shard before this one, or "": what Status.ShardFiltering takes when the change to
	// this shard needs no list, the only request that tells.
	verdict ShardFiltering
}

func newShardState(sel shard.Selector, gen int64) *shardState {
	return &shardState{sel: sel, text: sel.String(), gen: gen}
}

// inShard reports whether obj is in sh: always, for the zero Selector.
func inShard[T object.Object](sh *shardState, obj T) bool {
	if sh.sel.IsZero() {
		return true
	}
	if sh.sel.Field == shard.UID {
		return sh.sel.Matches(obj.Meta().UID)
	}
	return sh.sel.Matches(obj.Meta().Namespace)
}

// keepInShard drops the list page's objects outside asked, the part of the hash space the
// page was asked for, in place (the slots it frees are cleared, so what it dropped can be
// collected at once), and judges who filters for sh, the shard asked belongs to: the
// server, if it echoed the selector sent and sent nothing outside it.
func (r *Reflector[T]) keepInShard(items []T, info *object.ShardInfo, asked, sh *shardState) []T {
	if asked.sel.IsZero() {
		return items
	}
	var outside string // the first key dropped, for the log
	kept := slices.DeleteFunc(items, func(obj T) bool {
		if inShard(asked, obj) {
			return false
		}
		if outside == "" {
			outside = object.Key(obj)
		}
		return true
	})
	r.countDropped(len(items) - len(kept))
	switch {
	case sh.sel.IsZero():
		// The part SetShard added to make the shard the whole space: there is no shard to
		// judge the server's filtering for.
	case info == nil:
		r.judgeShard(sh, ShardFilteringClient, "the list has no metadata.shardInfo: the server ignores shardSelector "+
			"(a kube-apiserver without the ShardedListAndWatch feature gate does, silently)")
	case info.Selector != asked.text:
		r.judgeShard(sh, ShardFilteringClient, fmt.Sprintf("the list's metadata.shardInfo is %q, not the selector sent", info.Selector))
	case outside != "":
		r.judgeShard(sh, ShardFilteringClient, fmt.Sprintf("the list echoes the selector, yet holds %s, outside it", outside))
	default:
		r.judgeShard(sh, ShardFilteringServer, "the list's metadata.shardInfo echoes the selector")
	}
	return kept
}

// dropEvent passes over a watch event outside the current shard, or one that a part
// listed fresh already reflects (see freshPart), from a stream opened with sh. The server
// has still been followed this far, so the store hears of it as a bookmark, as it would
// have from a server that filtered. uid and namespace never change, so an object outside
// the shard was never stored and its MODIFIED or DELETED has nothing to undo; an object
// in the part of the shard that SetShard just gave up may be stored, and the loop drops
// that part from the store once the watch has ended.
func (r *Reflector[T]) dropEvent(ev listwatch.Event[T], sh *shardState) {
	if !inShard(sh, ev.Object) {
		// Outside what the stream asked for: the server ignored the selector. An event
		// inside it comes from the part the shard just lost, which is no fault.
		r.droppedOutside(ev.Object, "the "+string(ev.Type)+" event of", sh)
	}
	rv := ev.Object.Meta().ResourceVersion
	if b, ok := r.store.(Bookmarker); ok {
		b.Bookmark(rv)
	}
	r.opts.Metrics.Event(ev.Type)
	r.recordRV(rv)
}

// droppedOutside notes a streamed object or a watch event dropped as outside sh, the
// shard the stream asked for: proof that the server does not filter.
func (r *Reflector[T]) droppedOutside(obj T, what string, sh *shardState) {
	r.countDropped(1)
	r.judgeShard(sh, ShardFilteringClient, fmt.Sprintf("the server sent %s %s, outside the shard: it ignores shardSelector", what, object.Key(obj)))
}

func (r *Reflector[T]) countDropped(n int) {
	if n == 0 {
		return
	}
	r.update(func(st *Status) { st.ShardDropped += n })
	if m, ok := r.opts.Metrics.(ShardMetrics); ok {
		m.ShardDropped(n)
	}
}

// judgeShard records who filters, as the latest evidence about a request made with sh
// says, and tells the log and the metrics when that changes: in a steady state, once.
// Evidence about a shard that is no longer the current one is ignored: the status speaks
// of the current shard, from its first request on. A warning when the reflector finds
// itself filtering alone, since the operator who set a shard expected the server to,
// and only the log, the status and a metric can say why nothing got cheaper.
func (r *Reflector[T]) judgeShard(sh *shardState, f ShardFiltering, why string) {
	var was ShardFiltering
	current := false
	r.update(func(st *Status) {
		// Under mu, which SetShard holds as it changes the shard and resets the status.
		if current = r.shard.Load() == sh; current {
			was, st.ShardFiltering = st.ShardFiltering, f
		}
	})
	if !current || was == f {
		return
	}
	r.tellShardFiltering(f)
	if f == ShardFilteringClient {
		r.log.Warn("the server does not filter by shard: the reflector drops the objects outside it, so the store holds "+
			"the shard, but every object is still sent and decoded", "reason", why, "shard", sh.text)
		return
	}
	r.log.Info("the server filters by shard", "reason", why, "shard", sh.text)
}

// tellShardFiltering hands a change of Status.ShardFiltering to the metrics.
func (r *Reflector[T]) tellShardFiltering(f ShardFiltering) {
	if m, ok := r.opts.Metrics.(ShardMetrics); ok {
		m.ShardFiltering(f)
	}
}

// span is a part of the hash space of one field: what the store holds of it, or the part
// a shard change gained or lost. Unlike a shard.Selector, whose lack of ranges means the
// whole space, a span without ranges is nothing.
type span struct {
	// field is the field hashed; "" only for the whole space of the zero Selector, which
	// is the whole space of either field.
	field  shard.Field
	ranges []shard.Range // sorted and merged
}

// spanOf is the part of the space sel selects.
func spanOf(sel shard.Selector) span {
	if sel.IsZero() {
		return span{ranges: []shard.Range{shard.Whole()}}
	}
	return span{field: sel.Field, ranges: sel.Normalize().Ranges}
}

func (s span) empty() bool { return len(s.ranges) == 0 }

// whole reports whether s is the whole space, of whatever field.
func (s span) whole() bool { return len(s.ranges) == 1 && s.ranges[0] == shard.Whole() }

// diff says what a change from s to to takes away (lost: in s, not in to) and adds
// (gained: in to, not in s). ok is false when the two hash different fields: no part of
// one is then a part of the other (the whole space and nothing excepted).
func (s span) diff(to span) (lost, gained span, ok bool) {
	field := to.field
	if field == "" || to.whole() || to.empty() {
		field = s.field
	}
	if !s.whole() && !s.empty() && !to.whole() && !to.empty() && s.field != to.field {
		return span{}, span{}, false
	}
	lost = span{field: field, ranges: shard.Without(s.ranges, to.ranges)}
	gained = span{field: field, ranges: shard.Without(to.ranges, s.ranges)}
	return lost, gained, true
}

// without is s less the part d of it (one of diff's answers).
func (s span) without(d span) span {
	field := s.field
	if field == "" {
		field = d.field
	}
	return span{field: field, ranges: shard.Without(s.ranges, d.ranges)}
}

// selector is s as a shardSelector: the zero Selector (no parameter) for the whole space
// of no particular field. s is not empty.
func (s span) selector() shard.Selector {
	if s.field == "" {
		return shard.Selector{}
	}
	return shard.Selector{Field: s.field, Ranges: s.ranges}
}

// inSpan is the scope of a ReplaceWithin over s: whether an object lies in it.
func inSpan[T object.Object](s span) func(T) bool {
	sel := s.selector()
	if s.empty() {
		return func(T) bool { return false }
	}
	return func(obj T) bool {
		if sel.Field == shard.UID {
			return sel.Matches(obj.Meta().UID)
		}
		return sel.Matches(obj.Meta().Namespace)
	}
}
