// Package reflector keeps a store in step with the apiserver: it lists, then watches from
// the list's resourceVersion, and recovers from everything a watch meets.
//
// Its loop is a state machine: each state carries what it needs (the open stream of a
// streaming list, whether a list is a relist, the failure a backoff waits out), one
// function, step, runs a state and returns the next, and Run is
//
//	for s := first; s != nil; s = step(s)
//
// These are all its transitions (TestTransitions runs each row against step):
//
//	Listing        the list is stored                            → Watching
//	Listing        the list fails                                → BackingOff → Listing
//	Listing        the shard changes before the list is stored   → Listing (again, with the new shard, the newest state)
//	StreamingList  the initial-events-end bookmark arrives       → Watching (in the same stream)
//	StreamingList  the server refuses or ignores the request     → Listing (list+watch for good)
//	StreamingList  no initial-events-end bookmark in time        → Listing (list+watch for good)
//	StreamingList  the stream fails                              → BackingOff → StreamingList
//	StreamingList  the shard changes before the bookmark         → StreamingList (again, with the new shard)
//	Watching       the server ends the stream on time            → Watching (from the last resourceVersion)
//	Watching       410 Gone, too large a resourceVersion         → Listing (a relist)
//	Watching       an event over MaxFrameSize                    → Listing (a relist: resuming would meet it again)
//	Watching       a stream that worked breaks                   → Watching (at once; the backoff starts over)
//	Watching       any other failure                             → BackingOff → Watching
//	Watching       the shard shrinks                             → Watching (from the last resourceVersion, the part lost dropped locally)
//	Watching       the shard grows                               → ListingAdded (the part gained, the newest state)
//	Watching       the shard moves to another field              → Listing (the newest state, with the new shard)
//	ListingAdded   the part gained is stored                     → Watching (the whole new shard from the last resourceVersion, the part's events up to its list dropped)
//	ListingAdded   the server refuses the list of the part       → Listing (the newest state, with the new shard)
//	ListingAdded   the list of the part fails                    → BackingOff → ListingAdded
//	ListingAdded   the shard changes before the part is stored   → ListingAdded (again, against what the store holds)
//	BackingOff     the wait is over                              → the state that failed
//	any state      ctx ends                                      → Stopped
//
// A relist is a streaming list again while the server does them. The first list asks for
// any state (resourceVersion "0", from the watch cache), or for the newest under
// Options.ConsistentLists; a relist for at least the newest resourceVersion the store
// holds; a list for a new shard for the newest state (a streaming list always reads the
// newest). A stream "worked" when it lasted a second or delivered an event: a reset then
// is most likely a passing fault, as a reset connection or a dead peer noticed by an
// HTTP/2 ping. "Any other failure" is a 429, a 5xx, a refused connection, a malformed
// frame, or a stream that ended within a second without an event (a server or proxy
// refusing watches must not make the loop spin). The backoff is exponential, 800 ms to
// 30 s with jitter, and starts over after 2 minutes without failures; a server's longer
// Retry-After wins. Every watch asks for a random timeoutSeconds and has an idle deadline
// past it, so a silently dead connection is noticed even over HTTP/1.1.
//
// Status says which state the loop is in (see State) and why the cache is not synced
// (the last error), so a cache that stays empty because of a 403 says so. A list that
// succeeded is in the status (Listed, the last error cleared) before the store is handed
// it, so a caller who sees the cache synced never sees the error of an attempt before.
//
// Events that arrived together (the stream's optional Buffered method says another is
// ready) are handed to a store that is a Batcher between Hold and Release, 64 at most
// per hold, so the store's consumer on another goroutine wakes once for them; an event
// that came alone is handed over unheld.
//
// A shard (Options.Shard) is data, not a state: every request of every state carries
// it (the list of a part that SetShard added carries that part), and the reflector drops
// what lies outside it wherever objects arrive (list pages, a streaming list's events,
// watch events) before the store sees them, since a server without the feature gate
// ignores it. Status.ShardFiltering says whether the server filtered, as judged from each
// list's metadata.shardInfo and from any object outside the shard that arrives. A
// ListedMetrics counts the objects lists deliver, before any is dropped: what a shard
// change costs.
//
// SetShard changes the shard of a running reflector, and the table's "shard" rows are
// what it does to the loop. The filter switches at once, for whatever is on its way. A
// fetch of the whole state under way (a list, or a streaming list before its bookmark)
// is of the old shard: SetShard ends its stream, or the list is abandoned before its next
// page, with nothing stored, and a list of the newest state with the new shard follows
// (a streaming list again while the server does them). It counts as no relist
// (Relists), since nothing failed.
//
// While the loop watches, the store holds the whole state of the old shard at a known
// resourceVersion R (the last one recorded, a bookmark's included), and a change costs
// only the difference. SetShard ends the watch. The part the shard lost is dropped from
// the store at once, with no request (the store's ReplaceWithin, see ScopedReplacer);
// a watch with the new, narrower, selector then resumes from R, rather than the old one
// going on: the old one would carry the events of the part lost until its timeout, all
// of them decoded to be dropped.
//
// The part the shard gained is listed alone (ListingAdded), and fresh: with
// shardSelector the part gained, in pages, at resourceVersion "" (a consistent read; the
// continue tokens keep its snapshot), so at the newest resourceVersion F. Not at R: R
// moves only with the events of the old shard and the bookmarks, so it may be older than
// writes another process made in the part gained just before handing it over (a sharded
// controller manager's member gives a part up only once its last write is answered, and
// the new owner, who acts once the channel is closed, must see that write). The list
// replaces what the store holds in that part, the rest untouched, and one watch with the
// whole new shard resumes from R: the events of the rest since R are news to the store,
// and it applies them; those of the part gained at F or before are not (the list saw
// them, or, for a DELETED, that the object was gone), and applying them would take an
// object back to an older state: until an event or a bookmark past F arrives, they are
// dropped, and the store hears each as a bookmark. resourceVersions compare since
// Kubernetes 1.35; should they not, the events are applied. A relist while that filter
// stands asks for at least F; should the watch from R meet a 410, the whole state is
// relisted, as after any 410.
//
// A server without the feature gate sends every object for that list: the filter keeps
// the part gained, and the list tells Status.ShardFiltering as any list does. A change
// that both gains and loses does both, the drop first. A SetShard during that list throws
// the list away before its next page or at the latest before it is stored, and what the
// store holds is weighed against the shard then current, so no part listed for a shard
// that is no longer current is ever stored. When the server refuses the list, the whole
// state is fetched with the new shard instead; other failures of that list back off and
// list the part again. A shard of another field, and a store that cannot replace a part
// (no ScopedReplacer), fetch the whole state too; a fetch for a new shard always reads the
// newest state, for the same reason.
//
// A shard that changes while the loop backs off takes effect on the next request: a list
// or streaming list asks for the new shard, and a watch, which could only follow the
// store's shard, gives way to the change above (the Watching rows, without a request).
// Each request carries the shard current when it is made, and only a state fetched with
// the shard still current is stored; the channel SetShard returns is closed once the
// store holds the whole new shard, the part gained as of its fresh list.
package reflector
