package events

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// Event types.
const (
	Normal  = "Normal"
	Warning = "Warning"
)

// Options configure a Recorder.
type Options struct {
	// Component names the writer in source.component and reportingComponent
	// ("replicaset-controller").
	Component string
	// Host is source.host and reportingInstance (default: none).
	Host string
	// QueueSize bounds the events waiting to be written [1000].
	QueueSize int
	// Burst and Refill shape each object's token bucket [25, 5 min].
	Burst  int
	Refill time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Ref names the object an event is about.
type Ref struct {
	APIVersion, Kind string
	Meta             *object.ObjectMeta
}

// reference copies what an event says about the object.
func (ref Ref) reference() ObjectReference {
	m := ref.Meta
	return ObjectReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Namespace: m.Namespace,
		Name: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion}
}

// Recorder queues events and writes them to the apiserver from Run.
type Recorder struct {
	client *listwatch.Client
	info   listwatch.ResourceInfo
	opts   Options
	queue  chan pending

	mu      sync.Mutex
	buckets map[string]*bucket       // by involved object UID
	written map[aggregateKey]*series // recent events, for aggregation

	dropped atomic.Int64
	stamp   int64 // the last name stamp used; only Run's goroutine touches it
}

// pending is an event waiting in the queue.
// It holds a copy of the involved object's reference, taken when the event was
// recorded: the caller goes on changing its object (a revision written after the event)
// while the event waits.
type pending struct {
	involved             ObjectReference
	typ, reason, message string
	at                   time.Time
}

// aggregateKey identifies repeats of one event.
type aggregateKey struct{ uid, typ, reason, message string }

// series is an Event already written, updated by its repeats.
type series struct {
	namespace, name string
	count           int32
	last            time.Time
}

type bucket struct {
	tokens float64
	at     time.Time
}

// aggregationWindow is how long a repeat updates the Event already written.
const aggregationWindow = 10 * time.Minute

// NewRecorder returns a recorder writing through c.
func NewRecorder(c *listwatch.Client, opts Options) (*Recorder, error) {
	info, err := c.Discover(context.Background(), "events")
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = 1000
	}
	if opts.Burst <= 0 {
		opts.Burst = 25
	}
	if opts.Refill <= 0 {
		opts.Refill = 5 * time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Recorder{client: c, info: info, opts: opts, queue: make(chan pending, opts.QueueSize),
		buckets: map[string]*bucket{}, written: map[aggregateKey]*series{}}, nil
}

// Eventf queues an event about ref. It never blocks: an event beyond the object's rate or
// the queue's room is dropped (see Dropped).
func (r *Recorder) Eventf(ref Ref, typ, reason, format string, args ...any) {
	now := r.opts.Now()
	if !r.allow(ref.Meta.UID, now) {
		r.dropped.Add(1)
		return
	}
	select {
	case r.queue <- pending{involved: ref.reference(), typ: typ, reason: reason, message: fmt.Sprintf(format, args...), at: now}:
	default:
		r.dropped.Add(1)
	}
}

// Dropped returns how many events were dropped by rate limits or a full queue.
func (r *Recorder) Dropped() int64 { return r.dropped.Load() }

// allow takes a token from the object's bucket.
func (r *Recorder) allow(uid string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.buckets[uid]
	if b == nil {
		b = &bucket{tokens: float64(r.opts.Burst), at: now}
		r.buckets[uid] = b
	}
	b.tokens = min(float64(r.opts.Burst), b.tokens+float64(now.Sub(b.at))/float64(r.opts.Refill))
	b.at = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// Run writes queued events until ctx ends; events still queued then are written
// within a short grace, so a controller's last actions are not lost on shutdown. A write
// in progress is never cut short by ctx: each is bounded by its own timeout.
func (r *Recorder) Run(ctx context.Context) {
	const writeTimeout, grace = 10 * time.Second, 2 * time.Second
	writes := context.WithoutCancel(ctx)
	for {
		select {
		case p := <-r.queue:
			r.writeWithin(writes, p, writeTimeout)
		case <-ctx.Done():
			deadline := time.Now().Add(grace)
			for time.Now().Before(deadline) {
				select {
				case p := <-r.queue:
					r.writeWithin(writes, p, time.Until(deadline))
				default:
					return
				}
			}
			return
		}
	}
}

func (r *Recorder) writeWithin(ctx context.Context, p pending, d time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	r.write(ctx, p)
}

// write creates the event, or updates the Event of its series when it repeats one.
func (r *Recorder) write(ctx context.Context, p pending) {
	key := aggregateKey{uid: p.involved.UID, typ: p.typ, reason: p.reason, message: p.message}
	r.mu.Lock()
	s := r.written[key]
	r.forgetOld(p.at)
	r.mu.Unlock()
	if s != nil && p.at.Sub(s.last) < aggregationWindow {
		patch, _ := json.Marshal(map[string]any{"count": s.count + 1, "lastTimestamp": object.NewTime(p.at.UTC().Truncate(time.Second))})
		if _, err := r.in(s.namespace).Patch(ctx, s.name, listwatch.MergePatch, patch, ""); err == nil {
			r.mu.Lock()
			s.count++
			s.last = p.at
			r.mu.Unlock()
			return
		} else if !object.IsNotFound(err) {
			r.dropped.Add(1)
			return
		}
		// The Event expired or was deleted: start a new series.
	}
	// The name is the object's plus a time stamp, strictly increasing so that two events
	// in one clock tick never collide.
	r.stamp = max(r.stamp+1, p.at.UnixNano())
	ev := r.newEvent(p, r.stamp)
	if _, err := r.in(ev.Metadata.Namespace).Create(ctx, ev); err != nil {
		r.dropped.Add(1)
		return
	}
	r.mu.Lock()
	r.written[key] = &series{namespace: ev.Metadata.Namespace, name: ev.Metadata.Name, count: 1, last: p.at}
	r.mu.Unlock()
}

// forgetOld drops series past the aggregation window and idle buckets (callers hold mu),
// so memory follows the recent events, not every event ever written.
func (r *Recorder) forgetOld(now time.Time) {
	for k, s := range r.written {
		if now.Sub(s.last) >= aggregationWindow {
			delete(r.written, k)
		}
	}
	for uid, b := range r.buckets {
		if now.Sub(b.at) >= time.Duration(r.opts.Burst)*r.opts.Refill {
			delete(r.buckets, uid)
		}
	}
}

func (r *Recorder) in(ns string) *listwatch.Resource[*Event] {
	return listwatch.For[*Event](r.client, r.info, ns)
}

func (r *Recorder) newEvent(p pending, stamp int64) *Event {
	m := p.involved
	at := object.NewTime(p.at.UTC().Truncate(time.Second))
	ev := &Event{
		APIVersion: "v1", Kind: "Event",
		Metadata: object.ObjectMeta{Namespace: m.Namespace,
			// As kube-controller-manager's recorder names them: the time in hexadecimal
			// nanoseconds after the object's name.
			Name: m.Name + "." + strconv.FormatInt(stamp, 16)},
		InvolvedObject: m,
		Reason:         p.reason, Message: p.message, Type: p.typ, Count: 1,
		FirstTimestamp: at, LastTimestamp: at,
		Source:             EventSource{Component: r.opts.Component, Host: r.opts.Host},
		ReportingComponent: r.opts.Component, ReportingInstance: r.opts.Host,
	}
	if ev.Metadata.Namespace == "" {
		ev.Metadata.Namespace = "default" // events about cluster-scoped objects live there
	}
	return ev
}
