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
	"github.com/kinformer/kinformer/shard"
)

// The timings of kube-controller-manager's leader election, which a group's members
// share with it: the same reasoning about lease expiry holds for one Lease per member.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
	DefaultNamespace     = "kube-system"
)

// The Lease vocabulary of a group. A member's Lease is named <group>-<id>.
const (
	// GroupLabel holds the group's name on every member's Lease: the group is the Leases
	// a label selector on it lists.
	GroupLabel = "shard.kinformer.io/group"
	// ActingAnnotation holds, as a BucketSet, every bucket the member may be acting on:
	// those it acts on, those it is acquiring or releasing, and those it has claimed and
	// not yet acquired. Nobody else acquires a bucket listed here in a live Lease.
	ActingAnnotation = "shard.kinformer.io/acting"
	// TargetAnnotation holds, as a BucketSet, the buckets the member's view of the group
	// gives it. It settles who backs off when two members claim a bucket at once, and
	// lets a reader see a hand-over in progress (acting differs from target).
	TargetAnnotation = "shard.kinformer.io/target"
)

// Options configure a Member.
type Options struct {
	// Group names the group; every member of it uses the same name. It is the value of
	// GroupLabel on the members' Leases, so a label value: at most 63 characters,
	// alphanumeric, '-', '_' or '.', beginning and ending alphanumeric. Required.
	Group string
	// ID names this member among the group's: the holderIdentity of its Lease, and the
	// name shard.Assign deals buckets to. It must be unique among the running members
	// (two processes of one ID would each believe the other's claims are their own) and
	// lower case, as Lease names are (a pod name, say). Required.
	ID string
	// Namespace holds the Leases [DefaultNamespace].
	Namespace string

	// LeaseDuration is how long the others wait, from the moment they saw this member's
	// Lease last change, before they take its buckets over. Written to the Lease rounded
	// up to whole seconds [DefaultLeaseDuration].
	LeaseDuration time.Duration
	// RenewDeadline is how long this member keeps acting without renewing its Lease:
	// past it, it releases everything [DefaultRenewDeadline]. Must be below
	// LeaseDuration; the difference is the time Release has to finish after a loss.
	RenewDeadline time.Duration
	// RetryPeriod is the time between two rounds: renewals, and the reads that notice
	// a member gone silent [DefaultRetryPeriod].
	RetryPeriod time.Duration

	// Buckets divides the hash space, as shard.Assign does [shard.DefaultBuckets]. Every
	// member of a group must use the same number, and the same Field.
	Buckets int
	// Field is the object field whose hash places an object [shard.Namespace].
	Field shard.Field

	// Acquire is called with ranges this member starts acting on: it lists them and
	// starts their work, and returns once it has. The member acts on them, and Acts
	// turns true, when it returns nil. An error means nothing was started (Acquire
	// undoes what it did first): the buckets are given up and claimed again a
	// RetryPeriod or so later. ctx ends when the member loses its Lease or Run's context
	// ends, and Acquire should then return promptly. Required.
	Acquire func(ctx context.Context, ranges []shard.Range) error
	// Release is called with ranges this member stops acting on, once Acts has turned
	// false for them: it must stop taking new work on them, and return only once the
	// work in flight on them has finished, because the member tells the others they may
	// take them over as soon as it returns. An error means the work could not be shown
	// to have stopped: the ranges stay claimed and Release is called for them again at
	// the next round (so it must be idempotent). ctx ends when the member loses its
	// Lease; after a loss Release is called for everything with a ctx that ends when the
	// others may take over, and then it must have stopped. Required.
	//
	// Acquire and Release are never called concurrently.
	Release func(ctx context.Context, ranges []shard.Range) error

	// Clock drives the rounds and judges lease expiry [clock.Real].
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
	if o.LeaseDuration == 0 {
		o.LeaseDuration = DefaultLeaseDuration
	}
	if o.RenewDeadline == 0 {
		o.RenewDeadline = DefaultRenewDeadline
	}
	if o.RetryPeriod == 0 {
		o.RetryPeriod = DefaultRetryPeriod
	}
	if o.Buckets == 0 {
		o.Buckets = shard.DefaultBuckets
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

func (o Options) validate() error {
	var errs []error
	if !isLabelValue(o.Group) || o.Group == "" {
		errs = append(errs, fmt.Errorf("the group %q is not a label value (1 to 63 of [A-Za-z0-9-_.], alphanumeric at both ends)", o.Group))
	}
	if o.ID == "" {
		errs = append(errs, errors.New("an ID is required"))
	} else if name := leaseName(o.Group, o.ID); !isDNSSubdomain(name) {
		errs = append(errs, fmt.Errorf("the Lease name %q (<group>-<id>) is not a DNS subdomain: use lower-case alphanumerics, '-' and '.'", name))
	}
	if !isDNSLabel(o.Namespace) {
		errs = append(errs, fmt.Errorf("the namespace %q is not a DNS label", o.Namespace))
	}
	if o.Acquire == nil || o.Release == nil {
		errs = append(errs, errors.New("the Acquire and Release callbacks are required"))
	}
	if o.Buckets < 1 || o.Buckets > MaxBuckets {
		errs = append(errs, fmt.Errorf("the number of buckets %d is not between 1 and %d", o.Buckets, MaxBuckets))
	}
	if err := (shard.Selector{Field: o.Field, Ranges: []shard.Range{shard.Whole()}}).Validate(); err != nil {
		errs = append(errs, err)
	}
	if o.RetryPeriod < 0 || o.RenewDeadline < 0 || o.LeaseDuration < 0 {
		errs = append(errs, errors.New("durations must not be negative"))
	}
	// A member stops acting RenewDeadline after the start of its last renewal, and its
	// Release after a loss has until LeaseDuration after it; the others take over no
	// sooner than LeaseDuration after they saw that renewal, which is later still.
	if o.LeaseDuration <= o.RenewDeadline {
		errs = append(errs, fmt.Errorf("LeaseDuration (%v) must be greater than RenewDeadline (%v)", o.LeaseDuration, o.RenewDeadline))
	}
	// The renewal after the last success starts a RetryPeriod later and needs time to
	// finish before the deadline: leaderelection's bound, the same as client-go's.
	if limit := o.RetryPeriod + o.RetryPeriod/5; o.RenewDeadline <= limit {
		errs = append(errs, fmt.Errorf("RenewDeadline (%v) must be greater than 1.2 × RetryPeriod (%v)", o.RenewDeadline, limit))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("shardgroup: invalid options: %w", err)
	}
	return nil
}

// leaseName is the name of member id's Lease in group.
func leaseName(group, id string) string { return group + "-" + id }

// leaseSeconds is d as a Lease stores it, whole seconds rounded up: the others waiting a
// little longer is safe, shorter is not.
func leaseSeconds(d time.Duration) int32 { return int32((d + time.Second - 1) / time.Second) }

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
