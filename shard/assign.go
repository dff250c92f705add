package shard

import (
	"math"
	"slices"
)

// DefaultBuckets is the number of slots of EqualPlan when asked for fewer than one, and
// the number PlanFor aims at: enough for Plan.Assign to even the members' loads out
// within Slack, few enough that a member's selector, a query parameter, stays small (at
// 256 a member's selector has at most about 66 ranges, 7 KB URL-encoded, with 2 members;
// 3 KB with 8). Proxies commonly refuse request lines over 8 KB, so raise it with care.
const DefaultBuckets = 256

// Slack is how far above the mean load Plan.Assign lets a member go before it gives
// slots to others: members end within (1+Slack) × the mean, unless one slot alone is
// heavier.
const Slack = 0.1

// Assignment gives each member the part of the hash space it serves. Made by Assign or
// Plan.Assign, it is a partition: every hash has exactly one owner.
type Assignment map[string]Set

// Assign is EqualPlan(buckets).Assign(members): the division of a group that knows no
// load.
func Assign(members []string, buckets int) Assignment {
	return EqualPlan(buckets).Assign(members)
}

// Assign deals the plan's slots out to members, balanced by the slots' loads, and moving
// little when membership changes. Every member appears in the result, with an empty Set
// if it won no slot.
//
// Each slot first goes to the member with the highest weight for it (rendezvous, or
// highest-random-weight, hashing): a member that joins takes the slots it wins, about
// 1/N, all of them from the others, and nothing moves between the others; a member that
// leaves has its slots spread over the rest. Then, while a member holds more than
// (1+Slack) × the mean load, it gives away the slot that costs least to move: the one
// whose next-best member with room for it has the weight nearest its own. Only members
// above the bound give; only members that stay within it take. So the result is within
// the bound (unless one slot alone exceeds it), and a change of membership moves little
// more than rendezvous hashing alone would: Moved and MovedLoad measure it.
//
// The result depends only on the plan and the set of member names: order and duplicates
// in members do not matter, so every process that sees the same plan and membership
// computes the same assignment with no coordination.
//
// The weight of a slot for a member is murmur3's 64-bit finalizer of Hash(member) xor the
// finalizer of (the slot's first hash + 0x9e3779b97f4a7c15); ties go to the member whose
// name sorts first. Every member must compute the same weights to agree, so this
// function is part of the contract between them: changing it reshuffles every shard.
func (p Plan) Assign(members []string) Assignment {
	names := slices.Clone(members)
	slices.Sort(names)
	names = slices.Compact(names)
	a := make(Assignment, len(names))
	for _, m := range names {
		a[m] = Set{}
	}
	if len(names) == 0 || len(p.slots) == 0 {
		return a
	}
	d := newDealing(p, names)
	d.shed()
	owned := make([][]int, len(names))
	for s, o := range d.owner {
		owned[o] = append(owned[o], s)
	}
	for i, m := range names {
		a[m] = p.Set(owned[i]...)
	}
	return a
}

// dealing is one Assign at work: the members' weights for every slot, who holds each
// slot, and the load of each member.
type dealing struct {
	slots  []Slot
	weight [][]uint64 // [slot][member]
	owner  []int      // member index by slot
	load   []int64    // by member
	bound  float64    // (1+Slack) × the mean load
}

func newDealing(p Plan, names []string) *dealing {
	d := &dealing{slots: p.slots, weight: make([][]uint64, len(p.slots)), owner: make([]int, len(p.slots)), load: make([]int64, len(names))}
	keys := make([]uint64, len(names))
	for i, m := range names {
		keys[i] = Hash(m)
	}
	total := int64(0)
	for s, slot := range p.slots {
		salt := mix64(slot.First + 0x9e3779b97f4a7c15)
		w := make([]uint64, len(names))
		best := 0
		for i, k := range keys {
			w[i] = mix64(k ^ salt)
			// Strictly greater: on a tie the earlier name, in sorted order, keeps it.
			if w[i] > w[best] {
				best = i
			}
		}
		d.weight[s], d.owner[s] = w, best
		d.load[best] += slot.Load
		total += slot.Load
	}
	d.bound = (1 + Slack) * float64(total) / float64(len(names))
	return d
}

// shed moves slots from members above the bound to members that stay within it, the
// cheapest move first, until no member is above the bound or none can take anything.
// Every move lowers the load above the bound, so it ends.
func (d *dealing) shed() {
	for {
		from := -1
		for i, l := range d.load {
			if float64(l) > d.bound && (from < 0 || l > d.load[from]) {
				from = i
			}
		}
		if from < 0 {
			return
		}
		slot, to := -1, -1
		var cost uint64 = math.MaxUint64
		for s, o := range d.owner {
			if o != from || d.slots[s].Load == 0 {
				continue
			}
			for j, w := range d.weight[s] {
				if j == from || float64(d.load[j]+d.slots[s].Load) > d.bound {
					continue
				}
				// The owner's weight is above every other member's unless the slot was
				// moved to it, and moved slots never move again (takers stay within the
				// bound); so the difference does not wrap.
				if c := d.weight[s][from] - w; c < cost {
					slot, to, cost = s, j, c
				}
			}
		}
		if slot < 0 {
			return // every other member is too full for any of its slots
		}
		d.owner[slot] = to
		d.load[from] -= d.slots[slot].Load
		d.load[to] += d.slots[slot].Load
	}
}

// mix64 is murmur3's 64-bit finalizer: a bijection whose every output bit depends on
// every input bit, which FNV alone does not give for inputs that differ in a few bits.
func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// Selector is member's part of the hash space as a Selector on field. ok is false when
// member owns nothing: it is not in the assignment, or it won no slot. Such a member must
// not list or watch at all, since a Selector without ranges selects everything.
func (a Assignment) Selector(member string, field Field) (sel Selector, ok bool) {
	return a[member].Selector(field)
}

// Moved is the fraction of the hash space, from 0 to 1, whose owner differs between
// before and after; a part owned in one and not the other counts as moved. After a
// member joins N-1 others the ideal is 1/N, after one leaves N others 1/N too.
func Moved(before, after Assignment) float64 {
	moved := 0.0
	for _, seg := range segments(before, after) {
		if seg.before != seg.after {
			moved += seg.Fraction()
		}
	}
	return min(moved, 1)
}

// MovedLoad is the fraction of the load of points, from 0 to 1, whose owner differs
// between before and after: what a change of membership makes the members hand over
// and list again. It is 0 without load.
func MovedLoad(before, after Assignment, points []Point) float64 {
	var total, moved int64
	for _, p := range points {
		total += p.Load
		if owner(before, p.Hash) != owner(after, p.Hash) {
			moved += p.Load
		}
	}
	if total == 0 {
		return 0
	}
	return float64(moved) / float64(total)
}

// owner is the member of a owning h, "" for none.
func owner(a Assignment, h uint64) string {
	for m, s := range a {
		if s.Contains(h) {
			return m
		}
	}
	return ""
}

// segment is a run of hashes with one owner on each side of a change.
type segment struct {
	Range
	before, after string
}

// segments cuts the space wherever a range of either assignment starts or ends;
// between two cuts, each side has one owner (or none).
func segments(before, after Assignment) []segment {
	cuts := []uint64{0}
	for _, a := range []Assignment{before, after} {
		for _, s := range a {
			for _, r := range s.rs {
				cuts = append(cuts, r.First)
				if r.Last != math.MaxUint64 {
					cuts = append(cuts, r.Last+1)
				}
			}
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	out := make([]segment, len(cuts))
	for i, c := range cuts {
		seg := segment{Range: Range{First: c, Last: math.MaxUint64}, before: owner(before, c), after: owner(after, c)}
		if i+1 < len(cuts) {
			seg.Last = cuts[i+1] - 1
		}
		out[i] = seg
	}
	return out
}

// Balance is the busiest member's load over the mean, by points (1 is perfect; 0
// without load): how evenly an assignment shares the work those points stand for.
func Balance(a Assignment, points []Point) float64 {
	if len(a) == 0 {
		return 0
	}
	loads := map[string]int64{}
	var total int64
	for _, p := range points {
		loads[owner(a, p.Hash)] += p.Load
		total += p.Load
	}
	if total == 0 {
		return 0
	}
	busiest := int64(0)
	for m := range a {
		busiest = max(busiest, loads[m])
	}
	return float64(busiest) / (float64(total) / float64(len(a)))
}
