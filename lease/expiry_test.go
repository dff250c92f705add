package lease_test

import (
	"testing"
	"time"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/lease"
	"github.com/kinformer/kinformer/object"
)

var epoch = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// leaseOf is Lease "l" held by holder, renewed at renew by the holder's clock, declaring
// secs seconds (none when 0).
func leaseOf(holder string, renew time.Duration, secs int32) *object.Lease {
	l := &object.Lease{ObjectMeta: object.ObjectMeta{Name: "l"}}
	l.Spec.HolderIdentity = ptr(holder)
	l.Spec.RenewTime = microAt(epoch.Add(renew))
	if secs != 0 {
		l.Spec.LeaseDurationSeconds = ptr(secs)
	}
	return l
}

func TestExpiry(t *testing.T) {
	const dflt = 10 * time.Second
	// step is what happens at a time since the clock's start: an observation of a Lease
	// (and whether Observe should call it a change), a Restart or a Forget.
	type step struct {
		at          time.Duration
		observe     *object.Lease
		wantChanged bool
		restart     bool
		forget      bool
	}
	tests := []struct {
		name  string
		steps []step
		// wantExpiry is when "l" expires, since the clock's start, after the steps; -1
		// for never observed.
		wantExpiry time.Duration
	}{
		{"never observed", nil, -1},
		{"the declared duration, from the first sighting", []step{
			{at: time.Second, observe: leaseOf("a", 0, 3), wantChanged: true},
		}, 4 * time.Second},
		{"the default for a Lease that declares none", []step{
			{at: time.Second, observe: leaseOf("a", 0, 0), wantChanged: true},
		}, 11 * time.Second},
		{"an unchanged record does not restart the duration", []step{
			{at: time.Second, observe: leaseOf("a", 0, 3), wantChanged: true},
			{at: 2 * time.Second, observe: leaseOf("a", 0, 3)},
			{at: 3 * time.Second, observe: leaseOf("a", 0, 3)},
		}, 4 * time.Second},
		{"a renewal restarts it", []step{
			{at: time.Second, observe: leaseOf("a", 0, 3), wantChanged: true},
			{at: 3 * time.Second, observe: leaseOf("a", time.Second, 3), wantChanged: true},
		}, 6 * time.Second},
		// The renewTime is the holder's clock: one far behind, or far ahead, changes nothing.
		{"a renewTime from a skewed clock counts only as a change", []step{
			{at: time.Second, observe: leaseOf("a", -time.Hour, 3), wantChanged: true},
			{at: 2 * time.Second, observe: leaseOf("a", time.Hour, 3), wantChanged: true},
		}, 5 * time.Second},
		{"a new holder restarts it", []step{
			{at: time.Second, observe: leaseOf("a", 0, 3), wantChanged: true},
			{at: 2 * time.Second, observe: leaseOf("b", 0, 3), wantChanged: true},
		}, 5 * time.Second},
		{"a new declared duration restarts it, and counts", []step{
			{at: time.Second, observe: leaseOf("a", 0, 3), wantChanged: true},
			{at: 2 * time.Second, observe: leaseOf("a", 0, 30), wantChanged: true},
		}, 32 * time.Second},
		{"Restart counts the duration again, record kept", []step{
			{at: time.Second, observe: leaseOf("a", 0, 3), wantChanged: true},
			{at: 3 * time.Second, restart: true},
			{at: 4 * time.Second, observe: leaseOf("a", 0, 3)},
		}, 6 * time.Second},
		{"Restart of a Lease never observed", []step{
			{at: time.Second, restart: true},
		}, -1},
		{"Forget", []step{
			{at: time.Second, observe: leaseOf("a", 0, 3), wantChanged: true},
			{at: 2 * time.Second, forget: true},
		}, -1},
		{"the same record after Forget is a first sighting", []step{
			{at: time.Second, observe: leaseOf("a", 0, 3), wantChanged: true},
			{at: 2 * time.Second, forget: true},
			{at: 3 * time.Second, observe: leaseOf("a", 0, 3), wantChanged: true},
		}, 6 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clock.NewFake(epoch)
			e := lease.NewExpiry(clk, dflt)
			var since time.Duration
			for i, s := range tt.steps {
				clk.Step(s.at - since)
				since = s.at
				switch {
				case s.observe != nil:
					if got := e.ObserveLease(s.observe); got != s.wantChanged {
						t.Errorf("step %d: ObserveLease = %v, want %v", i, got, s.wantChanged)
					}
				case s.restart:
					e.Restart("l")
				case s.forget:
					e.Forget("l")
				}
			}
			if tt.wantExpiry < 0 {
				if at := e.ExpiresAt("l"); !at.IsZero() {
					t.Errorf("ExpiresAt = %v, want the zero time", at)
				}
				if !e.SeenAt("l").IsZero() {
					t.Errorf("SeenAt = %v, want the zero time", e.SeenAt("l"))
				}
				clk.Step(time.Hour)
				if e.Expired("l") {
					t.Error("Expired = true for a Lease not observed")
				}
				return
			}
			want := epoch.Add(tt.wantExpiry)
			if at := e.ExpiresAt("l"); !at.Equal(want) {
				t.Errorf("ExpiresAt = %v since the start, want %v", at.Sub(epoch), tt.wantExpiry)
			}
			clk.Step(want.Add(-time.Nanosecond).Sub(clk.Now()))
			if e.Expired("l") {
				t.Errorf("Expired = true just before %v", tt.wantExpiry)
			}
			clk.Step(time.Nanosecond)
			if !e.Expired("l") {
				t.Errorf("Expired = false at %v", tt.wantExpiry)
			}
			if e.Expired("other") {
				t.Error("Expired(other) = true for a Lease never observed")
			}
		})
	}
}

func TestExpirySeenAtAndObserve(t *testing.T) {
	clk := clock.NewFake(epoch)
	e := lease.NewExpiry(clk, 10*time.Second)
	// Observe takes any record and a duration, 0 for the default.
	if !e.Observe("m", "r1", 0) {
		t.Error("first Observe = false")
	}
	clk.Step(time.Second)
	if e.Observe("m", "r1", time.Minute) {
		t.Error("Observe of the same record = true")
	}
	if got, want := e.SeenAt("m"), epoch; !got.Equal(want) {
		t.Errorf("SeenAt = %v, want %v", got, want)
	}
	// The duration is the one of the first sighting of the record.
	if got, want := e.ExpiresAt("m"), epoch.Add(10*time.Second); !got.Equal(want) {
		t.Errorf("ExpiresAt = %v, want %v", got, want)
	}
	if !e.Observe("m", "r2", time.Minute) {
		t.Error("Observe of a new record = false")
	}
	if got, want := e.ExpiresAt("m"), epoch.Add(time.Second+time.Minute); !got.Equal(want) {
		t.Errorf("ExpiresAt = %v, want %v", got, want)
	}
}

func TestRecord(t *testing.T) {
	base := leaseOf("a", 0, 15)
	same := func(l *object.Lease) *object.Lease { return l }
	tests := []struct {
		name     string
		change   func(*object.Lease) *object.Lease
		extra    []string
		wantSame bool
	}{
		{"unchanged", same, nil, true},
		{"renewed", func(l *object.Lease) *object.Lease { l.Spec.RenewTime = microAt(epoch.Add(time.Second)); return l }, nil, false},
		{"another holder", func(l *object.Lease) *object.Lease { l.Spec.HolderIdentity = ptr("b"); return l }, nil, false},
		{"released", func(l *object.Lease) *object.Lease { l.Spec.HolderIdentity = nil; return l }, nil, false},
		{"another duration", func(l *object.Lease) *object.Lease { l.Spec.LeaseDurationSeconds = ptr[int32](1); return l }, nil, false},
		{"no duration", func(l *object.Lease) *object.Lease { l.Spec.LeaseDurationSeconds = nil; return l }, nil, false},
		{"no renewTime", func(l *object.Lease) *object.Lease { l.Spec.RenewTime = nil; return l }, nil, false},
		{"an extra", same, []string{"claims 0-3"}, false},
		// What a holder does not write at each renewal is not its heartbeat.
		{"acquireTime", func(l *object.Lease) *object.Lease { l.Spec.AcquireTime = microAt(epoch); return l }, nil, true},
		{"leaseTransitions", func(l *object.Lease) *object.Lease { l.Spec.LeaseTransitions = ptr[int32](9); return l }, nil, true},
		{"annotations", func(l *object.Lease) *object.Lease { l.Annotations = map[string]string{"k": "v"}; return l }, nil, true},
		// The same renewTime written in another zone is the same record.
		{"renewTime in another zone", func(l *object.Lease) *object.Lease {
			l.Spec.RenewTime = &object.MicroTime{Time: l.Spec.RenewTime.In(time.FixedZone("x", 3600))}
			return l
		}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changed := tt.change(object.DeepCopy(base))
			if got := lease.Record(changed, tt.extra...) == lease.Record(base); got != tt.wantSame {
				t.Errorf("Record equal to the original's = %v, want %v", got, tt.wantSame)
			}
		})
	}
	if lease.Record(base, "x") == lease.Record(base, "y") {
		t.Error("different extras make the same Record")
	}
}
