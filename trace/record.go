package trace

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kinformer/kinformer/object"
)

// Record is one followed event: what it was, and the clock reading of each mark from
// Started to Last (later marks are zero).
type Record struct {
	Type                             string // ADDED, MODIFIED or DELETED
	Namespace, Name, ResourceVersion string
	Last                             Stage // the mark that completed it
	Marks                            [Taken + 1]time.Time
}

// Key is the object's cache key, namespace/name.
func (r Record) Key() string { return object.KeyFor(r.Namespace, r.Name) }

// Span is the time from the mark before s to s: how long the event spent in the span
// that s ends (zero for Started and for marks after Last).
func (r Record) Span(s Stage) time.Duration {
	if s == Started || s > r.Last {
		return 0
	}
	return r.Marks[s].Sub(r.Marks[s-1])
}

// Total is the time from Started to Last.
func (r Record) Total() time.Duration { return r.Marks[r.Last].Sub(r.Marks[Started]) }

// String is the record's line, every span in order, then the total:
//
//	trace MODIFIED default/web-1 rv=1234: read 12µs → decode 41µs → … → worker 20µs = 183µs
//
// Durations keep at most three significant digits in the unit that suits them (850ns,
// 3.2µs, 95µs, 1.25ms, 2.50s); time.ParseDuration reads them back.
func (r Record) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "trace %s %s rv=%s:", r.Type, r.Key(), r.ResourceVersion)
	for s := Read; s <= r.Last; s++ {
		if s > Read {
			b.WriteString(" →")
		}
		b.WriteString(" " + s.Span() + " " + short(r.Span(s)))
	}
	b.WriteString(" = " + short(r.Total()))
	return b.String()
}

// short formats d for a line meant to be read: time.Duration's String would print
// 12.345678ms, more digits than the clock's jitter justifies.
func short(d time.Duration) string {
	switch a := d.Abs(); {
	case a < time.Microsecond:
		return strconv.FormatInt(int64(d), 10) + "ns"
	case a < 10*time.Microsecond:
		return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', 1, 64) + "µs"
	case a < time.Millisecond-time.Microsecond/2: // not "1000µs"
		return strconv.FormatInt(int64(d.Round(time.Microsecond)/time.Microsecond), 10) + "µs"
	case a < time.Second:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + "ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + "s"
}
