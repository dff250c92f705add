package shardgroup

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
)

// Member is one process of a group. New makes it, Run takes part in the group until its
// context ends; Acts, Acting, Guard, Status and Check may be called from any goroutine
// at any time.
type Member struct {
	opts    Options
	name    string // of its Lease
	leases  *listwatch.Resource[*object.Lease]
	log     *slog.Logger
	metrics *metrics
	writes  inflight

	running atomic.Bool // Run is not reentrant
	state   atomic.Pointer[snapshot]

	// For the package's tests, which step a fake clock only once every member waits for
	// it: whether Run's loop is waiting for its next round, and how often it woke.
	idle  atomic.Bool
	wakes atomic.Uint64
}

// snapshot is what Acts, Guard, Status and Check read: made by Run's loop after every
// change, never modified after.
type snapshot struct {
	acting     shard.Set
	validUntil time.Time // RenewDeadline after the last renewal: Acts is false from then on
	status     Status
	// call is the callback running and since when ("" for none); stuck says why the
	// member gave everything up while a callback would not return.
	call      string
	callSince time.Time
	stuck     string
}

// State is where a member stands in the group; see the package doc's table.
type State string

const (
	// StateJoining: it has no Lease of its own yet, in this incarnation.
	StateJoining State = "Joining"
	// StateWaiting: another live process holds the Lease of its ID.
	StateWaiting State = "Waiting"
	// StateMember: it renews its Lease and takes part in the rounds.
	StateMember State = "Member"
	// StateLost: it could not renew in time, or its Lease was taken, or a hand-over
	// stuck; it acts on nothing, and releases everything before it joins again.
	StateLost State = "Lost"
	// StateLeaving: Run's context has ended; it hands everything over, then deletes its
	// Lease.
	StateLeaving State = "Leaving"
	// StateStopped: Run has returned (or not started).
	StateStopped State = "Stopped"
)

// Status is a member's view of the group and its part in it.
type Status struct {
	ID string
	// Incarnation names this Run of the member (IncarnationAnnotation).
	Incarnation string
	State       State
	// Members are the live members this one counts, itself included, sorted: the names
	// the plan's slots are dealt to.
	Members []string
	// Target is what the plan gives this member among Members (nothing while it
	// leaves).
	Target shard.Set
	// Acting is what it acts on: Acquire returned, Release not yet called.
	Acting shard.Set
	// Claimed is what its Lease lists: Acting, and what it is acquiring, releasing, or has
	// claimed and waits to acquire.
	Claimed shard.Set
	// HandingOver is true while Acting differs from Target or a callback runs.
	HandingOver bool
	// Reason says why the member is Lost or Waiting.
	Reason string
	// Duplicate is the incarnation of another live process running with this member's
	// ID, "" when there is none: it waits while this one holds the Lease, or holds it
	// while this one waits.
	Duplicate string
	// Plan is the plan the member deals by: the group's, or an equal one while the group
	// has none.
	Plan shard.Plan
	// RenewedAt is when the last successful renewal started, on this member's clock.
	RenewedAt time.Time
}

// New checks opts, fills in the defaults, and registers the member's metrics on
// opts.Registerer when there is one. c reaches the apiserver holding the Leases; it
// must not be one guarded by this member's Guard (its Leases are no namespace it acts
// in).
func New(c *listwatch.Client, opts Options) (*Member, error) {
	if c == nil {
		return nil, errors.New("shardgroup: a client is required")
	}
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	m := &Member{
		opts:   opts,
		name:   leaseName(opts.Group, opts.ID),
		leases: listwatch.For[*object.Lease](c, listwatch.LeaseResource(), opts.Namespace),
		log:    opts.Logger.With("group", opts.Group, "member", opts.ID),
	}
	m.writes.init()
	m.state.Store(&snapshot{status: Status{ID: opts.ID, State: StateStopped}})
	if opts.Registerer != nil {
		m.metrics = newMetrics(m)
		if err := opts.Registerer.Register(m.metrics); err != nil {
			return nil, fmt.Errorf("shardgroup: registering metrics: %w", err)
		}
	}
	return m, nil
}

// Acts reports whether this member acts on the objects whose Field has this value (the
// namespace, when sharding by namespace) at this moment: a controller checks it before
// each sync of an object, and leaves the object alone when it is false. It is true from
// the return of the Acquire that covered the value until just before the Release that
// covers it is called, and turns false on its own once RenewDeadline has passed since
// the start of the last renewal (on the monotonic clock: a process frozen past it knows
// it on waking), before Run has noticed. It costs a hash and a clock read.
func (m *Member) Acts(value string) bool {
	s := m.state.Load()
	return s.acts(value, m.opts.Clock.Now())
}

func (s *snapshot) acts(value string, now time.Time) bool {
	return now.Before(s.validUntil) && s.acting.Has(value)
}

// Acting returns what this member acts on as a selector for sharded lists and watches,
// or ok false when it acts on nothing: a Selector without ranges would select everything.
func (m *Member) Acting() (sel shard.Selector, ok bool) {
	s := m.state.Load()
	if !m.opts.Clock.Now().Before(s.validUntil) {
		return shard.Selector{}, false
	}
	return s.acting.Selector(m.opts.Field)
}

// Deadline is when Acts turns false everywhere unless the member renews first; the zero
// time when it acts on nothing. A gate arms a timer for it, to stop syncs on time.
func (m *Member) Deadline() time.Time {
	s := m.state.Load()
	if s.acting.IsEmpty() {
		return time.Time{}
	}
	return s.validUntil
}

// Status returns this member's view of the group, as of its last round.
func (m *Member) Status() Status {
	st := m.state.Load().status
	st.Members = append([]string(nil), st.Members...)
	return st
}

// Check is a health check for /healthz, as client-go's leader-election watchdog is one.
// It fails while the member has given its part up because a hand-over outlived
// HandoverTimeout (a callback that did not return, a Release that kept failing) and the
// last callback has not returned yet, while an Acquire or Release has run for longer
// than HandoverTimeout and two RetryPeriods (its loop should have given up), and when the
// member still counts as acting a RetryPeriod past its renew deadline (its loop is stuck). A restart
// is then the way out; nothing is acted on meanwhile.
func (m *Member) Check() error {
	s := m.state.Load()
	now := m.opts.Clock.Now()
	switch {
	case s.stuck != "":
		return fmt.Errorf("shardgroup %s: member %s gave everything up: %s", m.opts.Group, m.opts.ID, s.stuck)
	case s.call != "" && now.Sub(s.callSince) > m.opts.HandoverTimeout+2*m.opts.RetryPeriod:
		return fmt.Errorf("shardgroup %s: member %s: %s has run for %v (bound %v)", m.opts.Group, m.opts.ID, s.call,
			now.Sub(s.callSince).Round(time.Millisecond), m.opts.HandoverTimeout)
	case s.status.State == StateMember && !s.acting.IsEmpty() && now.Sub(s.validUntil) > m.opts.RetryPeriod:
		return fmt.Errorf("shardgroup %s: member %s has not renewed for %v and its loop has not noticed", m.opts.Group, m.opts.ID,
			now.Sub(s.status.RenewedAt).Round(time.Millisecond))
	}
	return nil
}

// newIncarnation is a random name for one Run.
func newIncarnation() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
