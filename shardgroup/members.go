package shardgroup

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kinformer/kinformer/lease"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
)

// Group is a shard group as its Leases say, read by ReadGroup: what a command such as
// `kinformer shards` shows.
type Group struct {
	// Members are the members' Leases, sorted by ID.
	Members []MemberState
	// Plan is the group's plan; zero when it has none (the members then deal an equal
	// plan) or PlanErr says why it did not parse.
	Plan    shard.Plan
	PlanErr error
}

// MemberState is one member's Lease as ReadGroup reads it.
type MemberState struct {
	// ID is the Lease's holderIdentity, Lease its name, Incarnation the process that
	// wrote it last (IncarnationAnnotation).
	ID, Lease, Incarnation string
	// RenewTime is the last renewal, on the member's clock; LeaseDuration how long the
	// others wait after seeing one.
	RenewTime     time.Time
	LeaseDuration time.Duration
	// Acting and Target are the member's published claims and target (see
	// ActingAnnotation and TargetAnnotation). They differ while a hand-over is under way.
	Acting, Target shard.Set
	// Load is the load the member published (LoadAnnotation), when HasLoad.
	Load    []shard.Point
	HasLoad bool
	// Contender is the incarnation of another process of this ID that marked the Lease
	// while waiting for it, and ContenderAt when, by that process's clock (see
	// ContenderAnnotation); "" when none did.
	Contender   string
	ContenderAt time.Time
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

// Duplicate reports whether another process of this member's ID marked its Lease within
// two durations by the caller's clock: two processes run with one ID (only one acts).
func (s MemberState) Duplicate(now time.Time) bool {
	return s.Contender != "" && now.Before(s.ContenderAt.Add(2*s.LeaseDuration))
}

// ReadGroup reads the Leases of group in namespace (DefaultNamespace if empty) with one
// consistent list.
func ReadGroup(ctx context.Context, c *listwatch.Client, namespace, group string) (Group, error) {
	if err := ValidGroup(group); err != nil {
		return Group{}, fmt.Errorf("shardgroup: %w", err)
	}
	if namespace == "" {
		namespace = DefaultNamespace
	}
	leases := listwatch.For[*object.Lease](c, listwatch.LeaseResource(), namespace)
	list, err := leases.List(ctx, listwatch.ListOptions{LabelSelector: GroupLabel + "=" + group})
	if err != nil {
		return Group{}, fmt.Errorf("shardgroup: listing the Leases of group %q: %w", group, err)
	}
	var g Group
	for _, l := range list.Items {
		if l.Labels[RoleLabel] == "plan" {
			g.Plan, g.PlanErr = shard.ParsePlan(l.Annotations[PlanAnnotation])
			continue
		}
		g.Members = append(g.Members, memberState(l))
	}
	slices.SortFunc(g.Members, func(a, b MemberState) int { return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Lease, b.Lease)) })
	return g, nil
}

func memberState(l *object.Lease) MemberState {
	s := MemberState{ID: lease.Holder(l.Spec), Lease: l.Name, Incarnation: l.Annotations[IncarnationAnnotation],
		LeaseDuration: lease.Duration(l.Spec, 0)}
	if t := l.Spec.RenewTime; t != nil {
		s.RenewTime = t.Time
	}
	var errs []string
	var err error
	if s.Acting, err = shard.ParseSet(l.Annotations[ActingAnnotation]); err != nil {
		errs = append(errs, ActingAnnotation+": "+err.Error())
	}
	if s.Target, err = shard.ParseSet(l.Annotations[TargetAnnotation]); err != nil {
		errs = append(errs, TargetAnnotation+": "+err.Error())
	}
	if text, ok := l.Annotations[LoadAnnotation]; ok {
		if s.Load, err = parseLoad(text); err != nil {
			errs = append(errs, LoadAnnotation+": "+err.Error())
		} else {
			s.HasLoad = true
		}
	}
	if c := l.Annotations[ContenderAnnotation]; c != "" {
		inc, at, _ := strings.Cut(c, " ")
		s.Contender = inc
		s.ContenderAt, _ = time.Parse(time.RFC3339, at)
	}
	if len(errs) > 0 {
		s.Err = fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return s
}

// Conflict is a part of the space that two live members list as acting on at once:
// what the protocol is there to prevent, and what `kinformer shards` fails on.
type Conflict struct {
	Part    shard.Set
	Members [2]string
}

// Conflicts returns every part of the space that two members, both live by now (see
// MemberState.Stale), claim at once; a member whose claims do not parse claims
// everything.
func Conflicts(members []MemberState, now time.Time) []Conflict {
	var out []Conflict
	for i, a := range members {
		for _, b := range members[i+1:] {
			if a.Stale(now) || b.Stale(now) {
				continue
			}
			if both := claimsOf(a).Intersect(claimsOf(b)); !both.IsEmpty() {
				out = append(out, Conflict{Part: both, Members: [2]string{a.ID, b.ID}})
			}
		}
	}
	return out
}

func claimsOf(s MemberState) shard.Set {
	if s.Err != nil && strings.Contains(s.Err.Error(), ActingAnnotation) {
		return shard.WholeSet()
	}
	return s.Acting
}
