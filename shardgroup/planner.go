package shardgroup

import (
	"context"
	"fmt"
	"time"

	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
)

// When the group's plan is cut again: only when the busiest member holds more than
// ReplanAbove × the mean load, the new plan would lower that by at least replanGain, the
// plan has stood for planCooldown LeaseDurations, and the group's load has held within
// 5% for two load periods. Every new plan moves slots between members, and loads change
// all the time: a plan that chased every change would keep the group handing over.
const (
	ReplanAbove  = 1.15
	replanGain   = 0.05
	planCooldown = 5
)

// replan cuts a new plan for the group from the members' loads when the current one
// has grown uneven. Only the live member whose ID sorts first does, and only when every
// live member has settled on its target and published its load, so that the loads
// cover the whole group once and match the parts they were measured on. The write names
// the plan's resourceVersion as read, so two members that both think they should plan
// (their views of the membership differ for a round) cannot overwrite one another.
//
// A new plan is safe the moment it is written: it only changes targets, and members
// hand over a changed target as they hand over at a join, each claim waiting for its
// release.
func (r *runner) replan(ctx context.Context, peers []peer, now time.Time) {
	if r.load == nil || len(r.members) == 0 || r.members[0] != r.o.ID {
		return
	}
	seen := r.view.currentPlan()
	if seen.lease != nil && now.Sub(seen.at) < planCooldown*r.o.LeaseDuration {
		return
	}
	points := append([]shard.Point(nil), r.load...)
	for _, p := range peers {
		if !p.live {
			continue
		}
		if !p.hasLoad || !p.acting.Equal(p.target) {
			return // not settled: its load would not match its part
		}
		points = append(points, p.load...)
	}
	// Not while the load moves (a rollout creating pods): a plan cut from a load still
	// growing would be cut again once it stops, and every cut moves slots.
	var total int64
	for _, p := range points {
		total += p.Load
	}
	if d := total - r.planLoad; r.planLoad == 0 || d*20 > r.planLoad || -d*20 > r.planLoad {
		r.planLoad, r.planSteadySince = total, now
	}
	if now.Sub(r.planSteadySince) < 2*r.loadPeriod() {
		return
	}
	before := shard.Balance(r.assign, points)
	if r.m.metrics != nil {
		r.m.metrics.balance.Set(before)
	}
	if before <= ReplanAbove {
		return
	}
	next := shard.PlanFor(points, r.o.Slots)
	if next.Equal(r.plan) {
		return
	}
	after := shard.Balance(next.Assign(r.members), points)
	if after > before-replanGain {
		return
	}
	if err := r.writePlan(ctx, seen.lease, next); err != nil {
		r.m.log.Debug("writing the group's plan", "err", err)
		return
	}
	r.m.log.Info("cut the group's plan where the load is", "slots", next.Len(),
		"busiest before", fmt.Sprintf("%.2f", before), "after", fmt.Sprintf("%.2f", after))
	if r.m.metrics != nil {
		r.m.metrics.plans.Inc()
	}
	r.again = true
}

// writePlan writes the group's plan: creates it, or updates cur, naming its
// resourceVersion.
func (r *runner) writePlan(ctx context.Context, cur *object.Lease, p shard.Plan) error {
	if cur == nil {
		l := &object.Lease{
			TypeMeta:   object.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
			ObjectMeta: object.ObjectMeta{Namespace: r.o.Namespace, Name: planName(r.o.Group)},
		}
		setLabel(l, GroupLabel, r.o.Group)
		setLabel(l, RoleLabel, "plan")
		setAnnotation(l, PlanAnnotation, p.String())
		written, err := r.m.leases.Create(ctx, l)
		if err == nil {
			r.view.observe(written)
		}
		return err
	}
	l := object.DeepCopy(cur)
	setAnnotation(l, PlanAnnotation, p.String())
	written, err := r.m.leases.Update(ctx, l)
	if err == nil {
		r.view.observe(written)
	}
	return err
}
