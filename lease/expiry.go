package lease

import (
	"strconv"
	"time"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/object"
)

// Expiry judges when the Leases a process watches expire: LeaseDuration after it first
// saw each one's current record, on its own clock. A holder changes its record (its
// renewTime, at least) at every renewal, so a Lease seen unchanged for its duration has
// not been renewed for at least that long, whatever the two machines' clocks say.
//
// It is not safe for concurrent use.
type Expiry struct {
	clk  clock.Clock
	dflt time.Duration // for a Lease that declares no duration
	seen map[string]sighting
}

// sighting is one Lease's record as first seen.
type sighting struct {
	record   string
	at       time.Time
	duration time.Duration
}

// NewExpiry tracks Leases on clk; a Lease without leaseDurationSeconds lasts dflt.
func NewExpiry(clk clock.Clock, dflt time.Duration) *Expiry {
	return &Expiry{clk: clk, dflt: dflt, seen: map[string]sighting{}}
}

// Record is what a holder writes at each renewal, and so what must change for a Lease
// to count as renewed: its holder, renewTime and duration, and extra (what else the
// caller's holders write, such as a shard group's claims).
func Record(l *object.Lease, extra ...string) string {
	renew := ""
	if t := l.Spec.RenewTime; t != nil {
		renew = t.UTC().Format(object.RFC3339Micro)
	}
	s := Holder(l.Spec) + "\x00" + renew
	if d := l.Spec.LeaseDurationSeconds; d != nil {
		s += "\x00" + strconv.Itoa(int(*d)) + "s"
	}
	for _, e := range extra {
		s += "\x00" + e
	}
	return s
}

// Observe notes that name's record is record, declaring duration d (0: the default),
// and reports whether that is a change: the first sighting of this record, from which
// its duration counts.
func (e *Expiry) Observe(name, record string, d time.Duration) bool {
	if d <= 0 {
		d = e.dflt
	}
	if s, ok := e.seen[name]; ok && s.record == record {
		return false
	}
	e.seen[name] = sighting{record: record, at: e.clk.Now(), duration: d}
	return true
}

// ObserveLease is Observe of l's Record (with extra) and declared duration.
func (e *Expiry) ObserveLease(l *object.Lease, extra ...string) bool {
	return e.Observe(l.Name, Record(l, extra...), Duration(l.Spec, e.dflt))
}

// ExpiresAt is when name's Lease expires if its record does not change, the zero time
// for a Lease never observed.
func (e *Expiry) ExpiresAt(name string) time.Time {
	s, ok := e.seen[name]
	if !ok {
		return time.Time{}
	}
	return s.at.Add(s.duration)
}

// Expired reports whether name's Lease has gone unchanged for its duration; a Lease
// never observed has not.
func (e *Expiry) Expired(name string) bool {
	at := e.ExpiresAt(name)
	return !at.IsZero() && !e.clk.Now().Before(at)
}

// SeenAt is when name's current record was first seen, the zero time if never.
func (e *Expiry) SeenAt(name string) time.Time { return e.seen[name].at }

// Restart counts name's duration again from now, whatever its record: a Lease seen
// deleted keeps its holder's claims standing for a duration from the deletion, since
// its holder may not know yet.
func (e *Expiry) Restart(name string) {
	if s, ok := e.seen[name]; ok {
		s.at = e.clk.Now()
		e.seen[name] = s
	}
}

// Forget drops what is known of name.
func (e *Expiry) Forget(name string) { delete(e.seen, name) }
