// Package trace follows sampled watch events through kinformer's data path and reports,
// for each one, how long it spent in every stage: the pipeline the README draws, timed.
//
//	bytes on the wire ─read─▶ frame ─decode─▶ object ─fifo─▶ deltafifo ─store─▶ indexer
//	      ─handler─▶ handler ─queue─▶ workqueue ─worker─▶ worker
//
// # Marks
//
// A stage ends at a mark, taken where the event crosses from one part of the engine to
// the next. Each mark is taken before the next part can act on the event, so the marks
// of one event are made in order even though several goroutines make them:
//
//	Started    listwatch: the watch's reader has the frame's first byte (at once when an
//	           earlier read brought it, else when the read that brings it returns: the
//	           wait on an idle stream belongs to no event)
//	Read       listwatch: the frame's last byte has arrived
//	Decoded    listwatch: the event's object is built
//	Queued     reflector: it hands the event to the deltafifo (just before Add, Update or
//	           Delete, which may let the informer pop it at once)
//	Stored     informer: the event, popped from the FIFO, is in the indexer (the
//	           handlers are told after this mark)
//	Delivered  informer: the notification has left a handler's buffer, just before the
//	           handler is called
//	Enqueued   the handler: just before it puts the object's key on a workqueue
//	Taken      the worker: a worker got the key from the workqueue (a worker has only
//	           the key: Collector.MarkKey)
//
// The engine makes the marks up to Delivered; the last two are the caller's, as the
// workqueue is (`kinformer watch --trace` runs one with a worker to make them).
//
// A span is named after what the event was doing until the mark that ends it: read,
// decode, fifo (the reflector's turn), store (into the FIFO, waiting there, then the
// indexer update), handler (fan-out, then waiting in the handler's buffer), queue (the
// handler's own work), worker (waiting in the workqueue). Record.String prints one line
// per event:
//
//	trace MODIFIED default/web-1 rv=1234: read 12µs → decode 41µs → fifo 3µs → store 8µs → handler 95µs → queue 4µs → worker 20µs = 183µs
//
// # Sampling and cost
//
// A nil Tracer is tracing off: every hook in listwatch, reflector and informer is behind
// one nil check. With a Tracer, the watch asks Sample once per frame, before reading it,
// and takes clock readings only for sampled frames. The decision is not carried along
// with the event: later stages find a followed event by what they all see, the object's
// namespace, name and resourceVersion (a resourceVersion names one state of one object).
// While no sampled event is in flight that costs an unsampled event one atomic load per
// stage; while one is, a map lookup under a mutex.
//
// # Bounds
//
// A followed event may never reach its last mark: the reflector drops an event outside
// its shard (a server that ignores the shard selector sends them), the FIFO drops a
// repeated delete, a full handler buffer coalesces it into a newer state of the object,
// a handler does not enqueue it, the informer stops. A Collector therefore keeps at most MaxInFlight events
// and drops the oldest to make room (Stats counts them), so memory stays bounded
// whatever the pipeline loses. Relists are not watch events and are not followed; nor
// are a streaming list's initial events, which the reflector hands over as one relist.
package trace
