package trace

import (
	"strconv"
	"time"

	"github.com/kinformer/kinformer/object"
)

// Stage is a mark on an event's way from the wire to a worker (see the package doc for
// where each one is taken).
type Stage uint8

// The marks, in the order an event passes them.
const (
	Started   Stage = iota // listwatch: the frame's first byte is there
	Read                   // listwatch: the whole frame is there
	Decoded                // listwatch: the object is built
	Queued                 // reflector: handing it to the deltafifo
	Stored                 // informer: popped and applied to the indexer
	Delivered              // informer: out of a handler's buffer, into the handler
	Enqueued               // handler: its key goes onto a workqueue
	Taken                  // worker: its key came off the workqueue
)

// marks is how many there are.
const marks = int(Taken) + 1

var stageNames = [marks]string{"Started", "Read", "Decoded", "Queued", "Stored", "Delivered", "Enqueued", "Taken"}

// spanNames name the span that ends at each mark after what the event was doing in it.
var spanNames = [marks]string{Read: "read", Decoded: "decode", Queued: "fifo", Stored: "store",
	Delivered: "handler", Enqueued: "queue", Taken: "worker"}

func (s Stage) String() string {
	if int(s) < marks {
		return stageNames[s]
	}
	return "Stage(" + strconv.Itoa(int(s)) + ")"
}

// Span is the name of the span that ends at s ("" for Started, which ends none).
func (s Stage) Span() string {
	if int(s) < marks {
		return spanNames[s]
	}
	return ""
}

// Tracer is the hook the engine calls for tracing: listwatch (Sample, Begin), reflector
// (Mark Queued) and informer (Mark Stored, Mark Delivered). A nil Tracer is tracing off.
// *Collector is the implementation; another one (exporting spans elsewhere, say) must be
// safe for concurrent use, since the stages run on different goroutines.
type Tracer interface {
	// Sample is asked once per watch frame, before the frame is read: true follows it.
	// A sampled frame that carries no object change (a bookmark) passes its turn to the
	// next frame, so one object event in every N is followed.
	Sample() bool
	// Begin starts following a sampled event once its object is decoded, with the
	// listwatch marks (Started, Read, Decoded) it took itself. eventType is the watch
	// event's type: ADDED, MODIFIED or DELETED.
	Begin(eventType string, obj object.Object, started, read, decoded time.Time)
	// Mark records that the event which brought obj, in this state (namespace, name and
	// resourceVersion), reached stage s, if it is followed; for anything else it does
	// nothing, cheaply.
	Mark(s Stage, obj object.Object)
}
