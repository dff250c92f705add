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
//	Listing        the shard changes before the list is stored   → Listing (again, with the new shard)
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
//	Watching       the shard changes                             → Listing (a relist with the new shard)
//	BackingOff     the wait is over                              → the state that failed
//	any state      ctx ends                                      → Stopped
//
// A relist is a streaming list again while the server does them. A stream "worked" when
// it lasted a second or delivered an event: a reset then is most likely a passing fault,
// as a reset connection or a dead peer noticed by an HTTP/2 ping. "Any other failure"
// is a 429, a 5xx, a refused connection, a malformed frame, or a stream that ended within
// a second without an event (a server or proxy refusing watches must not make the loop
// spin). The backoff is exponential, 800 ms to 30 s with jitter, and starts over after 2
// minutes without failures; a server's longer Retry-After wins. Every watch asks for a
// random timeoutSeconds and has an idle deadline past it, so a silently dead connection
// is noticed even over HTTP/1.1.
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
// it, and the reflector drops what lies outside it wherever objects arrive (list pages,
// a streaming list's events, watch events) before the store sees them, since a server
// without the feature gate ignores it. Status.ShardFiltering says whether the server
// filtered, as judged from each list's metadata.shardInfo and from any object outside
// the shard that arrives.
//
// SetShard changes the shard of a running reflector, and the table's three "shard
// changes" rows are what it does to the loop. The filter switches at once, for whatever
// is on its way; but the store's whole state and the watch that follows it are of the
// old shard, so the loop fetches the whole state again with the new one: SetShard ends
// the open stream (a watch's, or a streaming list's before its bookmark), and a list is
// abandoned before its next page, with nothing stored. A relist is then a streaming list
// again while the server does them, as after a 410, but counts as no relist (Relists),
// since nothing failed. A shard that changes while the loop backs off takes effect on
// the next request: a list or streaming list asks for the new shard, and a watch, which
// could only follow the old shard's state, gives way to a relist with the new one (the
// Watching row, without a request). Each request carries the shard current when it is
// made, and only a whole state fetched with the shard still current is stored; the
// channel SetShard returns is closed once one is.
package reflector
