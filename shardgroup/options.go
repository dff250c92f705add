package shardgroup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/lease"
	"github.com/kinformer/kinformer/shard"
)

// The timings of kube-controller-manager's leader election, which a group's members
// share with it: the same reasoning about lease expiry holds for one Lease per member.
const (
	DefaultLeaseDuration = lease.DefaultLeaseDuration
	DefaultRenewDeadline = lease.DefaultRenewDeadline
	DefaultRetryPeriod   = lease.DefaultRetryPeriod
	DefaultNamespace     = "kube-system"
	// DefaultHandoverTimeout bounds one Acquire or Release: long enough to list a large
	// part of a cluster, short enough that peers waiting for a hand-over are not held
	// up for good by a member whose callback hangs.
	DefaultHandoverTimeout = 2 * time.Minute
)

// The Lease vocabulary of a group. A member's Lease is named <group>-<id>; the group's
// plan is the Lease named <group>.plan (a name no member's Lease can take: New refuses
// an ID that ends so).
const (
	// GroupLabel holds the group's name on every member's Lease and on its plan: the
	// group is the Leases a label selector on it lists.
	GroupLabel = "shard.kinformer.io/group"
	// RoleLabel is "plan" on the group's plan, and absent on members' Leases.
	RoleLabel = "shard.kinformer.io/role"
	// ActingAnnotation holds, as a shard.Set, every hash the member may be acting on:
	// those it acts on, those it is acquiring or releasing, and those it has claimed and
	// not yet acquired. Nobody else acquires a hash listed here in a live Lease.
	ActingAnnotation = "shard.kinformer.io/acting"
	// TargetAnnotation holds, as a shard.Set, the part of the space the member's view of
	// the group gives it. It settles who backs off when two members claim the same
	// hashes at once, and lets a reader see a hand-over in progress (acting differs from
	// target).
	TargetAnnotation = "shard.kinformer.io/target"
	// IncarnationAnnotation holds a random name of the process that writes the Lease,
	// new at every Run: a process restarted with the same ID sees that the Lease is not
	// its own, and honours its claims as a peer's until they are released or expire.
	IncarnationAnnotation = "shard.kinformer.io/incarnation"
	// ContenderAnnotation is written on a live member's Lease by another process started
	// with the same ID: "<its incarnation> <time>", renewed every LeaseDuration. Both
	// report the duplicate; only the holder acts.
	ContenderAnnotation = "shard.kinformer.io/contender"
	// LoadAnnotation holds the load of what the member acts on, as points
	// "HASH:OBJECTS,…" (16 hex digits, a decimal count), at most MaxLoadPoints: what the
	// group's plan is cut from.
	LoadAnnotation = "shard.kinformer.io/load"
	// PlanAnnotation, on the group's plan, is its shard.Plan: the slots the members are
	// given, cut where the load was.
	PlanAnnotation = "shard.kinformer.io/plan"
)

// MaxLoadPoints bounds the points of a member's LoadAnnotation: about 6 KB.
const MaxLoadPoints = 256

// Options configure a Member.
type Options struct {
	// Group names the group; every member of it uses the same name. It is the value of
	// GroupLabel on the members' Leases, so a label value: at most 63 characters,
	// alphanumeric, '-', '_' or '.', beginning and ending alphanumeric. Required.
	Group string
	// ID names this member among the group's: the holderIdentity of its Lease, and the
	// name the plan's slots are dealt to. It should be unique among the running members;
	// a second process of the same ID (a frozen one woken, a pod force-deleted while
	// its process lives) waits, acting on nothing, until the first one's Lease is
	// released or expires, and both report it. Lower case, as Lease names are (a pod
	// name, say). Required.
	ID string
	// Namespace holds the Leases [DefaultNamespace].
	Namespace string

	// LeaseDuration is how long the others wait, from the moment they saw this member's
	// Lease last change, before they take its part over. Written to the Lease rounded
	// up to whole seconds [DefaultLeaseDuration].
	LeaseDuration time.Duration
	// RenewDeadline is how long this member keeps acting without renewing its Lease:
	// past it, Acts is false everywhere and the member releases everything
	// [DefaultRenewDeadline]. Must be below LeaseDuration; the difference is the time
	// Release has to finish after a loss.
	RenewDeadline time.Duration
	// RetryPeriod is the time between two rounds: renewals, and the reads that notice a
	// member gone silent [DefaultRetryPeriod].
	RetryPeriod time.Duration
	// HandoverTimeout bounds each Acquire and Release call (their context ends then),
	// and a failing Release's retries: a member whose hand-over is not done by then
	// gives up everything the safe way, as a member that lost its Lease does, and
	// Check fails [DefaultHandoverTimeout].
	HandoverTimeout time.Duration

	// Slots is about how many parts the group's plan cuts the hash space into
	// [shard.DefaultBuckets]; every member of a group must use the same number, and the
	// same Field.
	Slots int
	// Field is the object field whose hash places an object [shard.Namespace].
	Field shard.Field

	// Acquire is called with the part of the space this member starts acting on: it
	// lists it and starts its work, and returns once it has. The member acts on it, and
	// Acts turns true, when it returns nil. An error means nothing was started (Acquire
	// undoes what it did first): the part is given up and claimed again a RetryPeriod or
	// so later. ctx ends when the member loses its Lease, Run's context ends, or
	// HandoverTimeout passes, and Acquire should then return promptly. Required.
	Acquire func(ctx context.Context, part shard.Set) error
	// Release is called with a part this member stops acting on, once Acts has turned
	// false for it and every write the member's Guard let through there has been
	// answered: it stops the work there, and returns once that work can write no more.
	// The member tells the others they may take the part over as soon as it returns. An
	// error means the work could not be shown to have stopped: the part stays claimed
	// and Release is called for it again at the next round (so it must be idempotent),
	// until HandoverTimeout has passed since the first call. ctx ends at HandoverTimeout,
	// or when the member loses its Lease: after a loss Release is called for everything
	// with a ctx that ends when the others may take over, and then it must have stopped.
	// Required.
	//
	// Acquire and Release are never called concurrently.
	Release func(ctx context.Context, part shard.Set) error
	// Acting, when set, is called with a part once the member acts on it (Acquire
	// returned, and Acts and the Guard now let it through): a controller queues there
	// what may have changed while another member owned it. Queued any earlier, a key
	// would meet a gate that still refuses it. It runs on the member's loop and must be
	// quick.
	Acting func(part shard.Set)
	// Load, when set, counts the objects by Field value (by namespace) in what the member
	// acts on; the member publishes it every few rounds (LoadAnnotation), and the group's
	// plan is cut from what the members publish. Without it the member counts as empty,
	// and the plan cuts by the load of the others alone (or equally, when none counts).
	// It must be quick: it runs on the member's loop.
	Load func() map[string]int64

	// Clock drives the rounds, judges lease expiry and the renew deadline [clock.Real].
	Clock clock.Clock
	// Logger receives hand-overs, losses and failures [discarded].
	Logger *slog.Logger
	// Registerer, when set, receives the member's metrics (see Metrics).
	Registerer prometheus.Registerer
}

// withDefaults returns o with its zero fields replaced by the defaults.
func (o Options) withDefaults() Options {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	t := o.timing().WithDefaults()
	o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = t.LeaseDuration, t.RenewDeadline, t.RetryPeriod
	if o.HandoverTimeout == 0 {
		o.HandoverTimeout = DefaultHandoverTimeout
	}
	if o.Slots == 0 {
		o.Slots = shard.DefaultBuckets
	}
	if o.Field == "" {
		o.Field = shard.Namespace
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

func (o Options) timing() lease.Timing {
	return lease.Timing{LeaseDuration: o.LeaseDuration, RenewDeadline: o.RenewDeadline, RetryPeriod: o.RetryPeriod}
}

func (o Options) validate() error {
	var errs []error
	if !isLabelValue(o.Group) || o.Group == "" {
		errs = append(errs, fmt.Errorf("the group %q is not a label value (1 to 63 of [A-Za-z0-9-_.], alphanumeric at both ends)", o.Group))
	}
	if o.ID == "" {
		errs = append(errs, errors.New("an ID is required"))
	} else if name := leaseName(o.Group, o.ID); !isDNSSubdomain(name) {
		errs = append(errs, fmt.Errorf("the Lease name %q (<group>-<id>) is not a DNS subdomain: use lower-case alphanumerics, '-' and '.'", name))
	} else if strings.HasSuffix(name, planSuffix) {
		errs = append(errs, fmt.Errorf("the ID %q ends in %q: its Lease would be taken for a group's plan", o.ID, planSuffix))
	}
	if !isDNSLabel(o.Namespace) {
		errs = append(errs, fmt.Errorf("the namespace %q is not a DNS label", o.Namespace))
	}
	if o.Acquire == nil || o.Release == nil {
		errs = append(errs, errors.New("the Acquire and Release callbacks are required"))
	}
	if o.Slots < 1 || o.Slots > shard.MaxSlots/2 {
		errs = append(errs, fmt.Errorf("the number of slots %d is not between 1 and %d", o.Slots, shard.MaxSlots/2))
	}
	if err := (shard.Selector{Field: o.Field, Ranges: []shard.Range{shard.Whole()}}).Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.timing().Validate(); err != nil {
		errs = append(errs, err)
	}
	if o.HandoverTimeout < o.RetryPeriod {
		errs = append(errs, fmt.Errorf("HandoverTimeout (%v) must be at least RetryPeriod (%v)", o.HandoverTimeout, o.RetryPeriod))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("shardgroup: invalid options: %w", err)
	}
	return nil
}

// leaseName is the name of member id's Lease in group.
func leaseName(group, id string) string { return group + "-" + id }

// planSuffix ends the name of a group's plan, and no member's Lease name.
const planSuffix = ".plan"

// planName is the name of group's plan.
func planName(group string) string { return group + planSuffix }

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isLower(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

// isLabelValue reports whether s may be a label's value (empty included).
func isLabelValue(s string) bool {
	if len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isAlnum(c) {
			continue
		}
		if (c == '-' || c == '_' || c == '.') && i > 0 && i < len(s)-1 {
			continue
		}
		return false
	}
	return true
}

// ValidGroup reports why name cannot name a group, nil when it can: what a command
// checks before it lists a group's Leases.
func ValidGroup(name string) error {
	if name == "" || !isLabelValue(name) {
		return fmt.Errorf("the shard group %q is not a label value (1 to 63 of [A-Za-z0-9-_.], alphanumeric at both ends)", name)
	}
	return nil
}

// isDNSLabel reports whether s is an RFC 1123 label, as a namespace's name is.
func isDNSLabel(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isLower(c) || c == '-' && i > 0 && i < len(s)-1 {
			continue
		}
		return false
	}
	return true
}

// isDNSSubdomain reports whether s is an RFC 1123 subdomain, as a Lease's name is: DNS
// labels joined by dots.
func isDNSSubdomain(s string) bool {
	if len(s) > 253 {
		return false
	}
	for part := range strings.SplitSeq(s, ".") {
		if !isDNSLabel(part) {
			return false
		}
	}
	return true
}
