package shardgroup

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// MemberState is one member's Lease as Members reads it.
type MemberState struct {
	// ID is the Lease's holderIdentity, Lease its name.
	ID, Lease string
	// RenewTime is the last renewal, on the member's clock; LeaseDuration how long the
	// others wait after seeing one.
	RenewTime     time.Time
	LeaseDuration time.Duration
	// Acting and Target are the member's published claims and target (see
	// ActingAnnotation and TargetAnnotation). They differ while a hand-over is under way.
	Acting, Target BucketSet
	// Err says what was wrong with the annotations, if anything.
	Err error
}

// Stale reports whether the member has not renewed for its LeaseDuration by the clock
// of the caller, judged from RenewTime. The members themselves never judge expiry this
// way (they time a Lease from when they saw it change, on their own clock, since clocks
// skew); it is for a person reading a listing.
func (s MemberState) Stale(now time.Time) bool {
	return !s.RenewTime.IsZero() && !now.Before(s.RenewTime.Add(s.LeaseDuration))
}

// Members reads the Leases of group in namespace (DefaultNamespace if empty) with one
// consistent list, sorted by ID: what a command such as `kinformer shards` shows.
func Members(ctx context.Context, c *listwatch.Client, namespace, group string) ([]MemberState, error) {
	if namespace == "" {
		namespace = DefaultNamespace
	}
	leases := listwatch.For[*object.Lease](c, listwatch.LeaseResource(), namespace)
	list, err := leases.List(ctx, listwatch.ListOptions{LabelSelector: GroupLabel + "=" + group})
	if err != nil {
		return nil, fmt.Errorf("shardgroup: listing the Leases of group %q: %w", group, err)
	}
	out := make([]MemberState, 0, len(list.Items))
	for _, l := range list.Items {
		s := MemberState{ID: deref(l.Spec.HolderIdentity), Lease: l.Name,
			LeaseDuration: time.Duration(deref(l.Spec.LeaseDurationSeconds)) * time.Second}
		if t := l.Spec.RenewTime; t != nil {
			s.RenewTime = t.Time
		}
		var errA, errT error
		s.Acting, errA = ParseBucketSet(l.Annotations[ActingAnnotation])
		s.Target, errT = ParseBucketSet(l.Annotations[TargetAnnotation])
		if errA != nil {
			s.Err = fmt.Errorf("%s: %w", ActingAnnotation, errA)
		} else if errT != nil {
			s.Err = fmt.Errorf("%s: %w", TargetAnnotation, errT)
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b MemberState) int { return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Lease, b.Lease)) })
	return out, nil
}
