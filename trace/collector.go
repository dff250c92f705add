package trace

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/object"
)

// Options configure a Collector. Zero values pick the defaults in brackets.
type Options struct {
	// Every follows one watch frame in Every [100]; 1 follows every event.
	Every int
	// Last is the mark that completes an event [Taken]. Without a workqueue behind the
	// handler there is no Enqueued nor Taken: use Delivered.
	Last Stage
	// MaxInFlight bounds the events followed at once [1024]. Beginning one more drops
	// the oldest, which by then has most likely been lost on the way (see Bounds in the
	// package doc).
	MaxInFlight int
	// Report receives every event that reached Last. It runs on the goroutine that made
	// the last mark, outside the collector's lock: keep it short, as it delays that
	// goroutine's next event.
	Report func(Record)
	// Clock reads the time for the marks from Queued on [the wall clock]; listwatch
	// reads time.Now for its own three.
	Clock clock.Clock
}

// Stats counts what a Collector did.
type Stats struct {
	Frames   uint64 // Sample calls: one per frame, and one per read that met a stream's end
	Followed uint64 // events begun
	Reported uint64 // events that reached Last
	Dropped  uint64 // events given up: the oldest to make room, or one begun again
	InFlight int    // events followed now
}

// Collector correlates the marks of each followed event and reports the event when it
// reaches its last mark. It is the Tracer to hand to the engine; its methods are safe
// for concurrent use, and it runs no goroutine.
type Collector struct {
	every  uint64
	last   Stage
	report func(Record)
	clock  clock.Clock

	frames atomic.Uint64 // frames asked about by Sample
	live   atomic.Int64  // events in flight: while 0, Mark returns after one load

	mu       sync.Mutex
	byObject map[objectID][]*entry // events in flight by object, rarely more than one each
	ring     []*entry              // events in flight by slot, in the order begun; nil is free
	next     int                   // the slot of the next event: that of the oldest one
	stats    Stats
}

var _ Tracer = (*Collector)(nil)

// objectID names an object; with a resourceVersion, one state of it: one event.
type objectID struct{ namespace, name string }

// entry is an event in flight and its slot in the ring.
type entry struct {
	Record
	slot int
}

// NewCollector returns a collector.
func NewCollector(opts Options) *Collector {
	if opts.Every <= 0 {
		opts.Every = 100
	}
	if opts.Last == Started || opts.Last > Taken {
		opts.Last = Taken
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = 1024
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	return &Collector{every: uint64(opts.Every), last: opts.Last, report: opts.Report, clock: opts.Clock,
		byObject: map[objectID][]*entry{}, ring: make([]*entry, opts.MaxInFlight)}
}

// Sample follows the first frame and every Every-th after it.
func (c *Collector) Sample() bool { return (c.frames.Add(1)-1)%c.every == 0 }

// Begin starts following an event with the marks listwatch took. An event already in
// flight under the same object and resourceVersion (a watch resumed from before it
// delivers it again) starts over.
func (c *Collector) Begin(eventType string, obj object.Object, started, read, decoded time.Time) {
	m := obj.Meta()
	id := objectID{m.Namespace, m.Name}
	e := &entry{Record: Record{Type: eventType, Namespace: m.Namespace, Name: m.Name,
		ResourceVersion: m.ResourceVersion, Last: c.last}}
	e.Marks[Started], e.Marks[Read], e.Marks[Decoded] = started, read, decoded

	c.mu.Lock()
	c.stats.Followed++
	if again := c.find(id, m.ResourceVersion); again != nil {
		c.remove(again)
		c.stats.Dropped++
	}
	if oldest := c.ring[c.next]; oldest != nil {
		c.remove(oldest)
		c.stats.Dropped++
	}
	e.slot, c.ring[c.next] = c.next, e
	c.next = (c.next + 1) % len(c.ring)
	c.byObject[id] = append(c.byObject[id], e)
	c.live.Add(1)
	done := c.finishIfComplete(e) // only when Last is a listwatch mark
	c.mu.Unlock()
	if done {
		c.emit(e.Record)
	}
}

// Mark records that obj's event reached s. An event not followed, a mark after Last and
// a mark already taken (a second handler, a resync re-delivering the object) change
// nothing. Marks may come in any order; the event is complete when it has them all.
func (c *Collector) Mark(s Stage, obj object.Object) {
	if c.live.Load() == 0 || s > c.last {
		return
	}
	m := obj.Meta()
	c.mu.Lock()
	e := c.find(objectID{m.Namespace, m.Name}, m.ResourceVersion)
	if e == nil || !e.Marks[s].IsZero() {
		c.mu.Unlock()
		return
	}
	e.Marks[s] = c.clock.Now()
	done := c.finishIfComplete(e)
	c.mu.Unlock()
	if done {
		c.emit(e.Record)
	}
}

// MarkKey is Mark for a stage that knows only the object's key (namespace/name), as a
// worker taking it from a workqueue does: it marks every followed event of that object
// that has reached the mark before s but not s. A workqueue holds a key once however
// many events added it, and the worker that takes it serves them all.
func (c *Collector) MarkKey(s Stage, key string) {
	if c.live.Load() == 0 || s == Started || s > c.last {
		return
	}
	ns, name, namespaced := strings.Cut(key, "/")
	if !namespaced {
		ns, name = "", key
	}
	c.mu.Lock()
	var reached, done []*entry
	for _, e := range c.byObject[objectID{ns, name}] {
		if !e.Marks[s-1].IsZero() && e.Marks[s].IsZero() {
			reached = append(reached, e)
		}
	}
	if len(reached) > 0 {
		now := c.clock.Now()
		for _, e := range reached {
			e.Marks[s] = now
			if c.finishIfComplete(e) {
				done = append(done, e)
			}
		}
	}
	c.mu.Unlock()
	for _, e := range done {
		c.emit(e.Record)
	}
}

// Stats returns the counts so far.
func (c *Collector) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Frames, s.InFlight = c.frames.Load(), int(c.live.Load())
	return s
}

func (c *Collector) find(id objectID, rv string) *entry {
	for _, e := range c.byObject[id] {
		if e.ResourceVersion == rv {
			return e
		}
	}
	return nil
}

// finishIfComplete stops following e once it has every mark up to Last. The caller
// reports it after unlocking; nothing else can reach e by then.
func (c *Collector) finishIfComplete(e *entry) bool {
	for s := Started; s <= e.Last; s++ {
		if e.Marks[s].IsZero() {
			return false
		}
	}
	c.remove(e)
	c.stats.Reported++
	return true
}

func (c *Collector) remove(e *entry) {
	id := objectID{e.Namespace, e.Name}
	list := c.byObject[id]
	if i := slices.Index(list, e); i >= 0 {
		list = slices.Delete(list, i, i+1)
	}
	if len(list) == 0 {
		delete(c.byObject, id)
	} else {
		c.byObject[id] = list
	}
	c.ring[e.slot] = nil
	c.live.Add(-1)
}

func (c *Collector) emit(r Record) {
	if c.report != nil {
		c.report(r)
	}
}
