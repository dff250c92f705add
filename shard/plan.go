package shard

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Point is where some of a cluster's load lies in the hash space: the hash of a
// namespace's name and how many objects it holds. A process knows the points of the
// part it serves, from its caches; a Plan is made from everybody's.
type Point struct {
	Hash uint64
	Load int64
}

// PointsOf returns the points of loads (objects by namespace, say), sorted by hash;
// values whose hashes collide are one point.
func PointsOf(loads map[string]int64) []Point {
	out := make([]Point, 0, len(loads))
	for v, n := range loads {
		out = append(out, Point{Hash: Hash(v), Load: n})
	}
	return mergePoints(out)
}

// mergePoints sorts points by hash and sums those of one hash, in place.
func mergePoints(ps []Point) []Point {
	slices.SortFunc(ps, func(a, b Point) int { return cmp.Compare(a.Hash, b.Hash) })
	out := ps[:0]
	for _, p := range ps {
		if n := len(out); n > 0 && out[n-1].Hash == p.Hash {
			out[n-1].Load += p.Load
			continue
		}
		out = append(out, p)
	}
	return out
}

// Slot is one part of a Plan: a range of the hash space and the load it held when the
// plan was made.
type Slot struct {
	Range
	Load int64
}

// Plan cuts the whole hash space into consecutive slots, the units a group deals out to
// its members (see Plan.Assign), each with the load it held when the plan was made.
//
// The space cannot simply be cut into equal parts: FNV-1a barely mixes the last bytes of
// a name into the hash's high bits, so tenant-00 … tenant-99 all fall in one 256th of
// the space, and equal parts of the space are not equal parts of the work. PlanFor cuts
// where the load is instead, between the hashes of namespaces, which the server accepts
// as any [start, end) bounds. EqualPlan is the plan of a group that knows no load yet.
//
// A Plan is a value, never modified once made; the zero Plan has no slots.
type Plan struct {
	slots []Slot
}

// EqualPlan cuts the space into n equal slots (DefaultBuckets if n < 1) of load 1 each:
// slot i is [⌊i·2^64/n⌋, ⌊(i+1)·2^64/n⌋).
func EqualPlan(n int) Plan {
	if n < 1 {
		n = DefaultBuckets
	}
	slots := make([]Slot, n)
	for i := range slots {
		slots[i] = Slot{Range: bucket(i, n), Load: 1}
	}
	return Plan{slots: slots}
}

// bucket is the b-th of n equal parts: [⌊b·2^64/n⌋, ⌊(b+1)·2^64/n⌋). When n does not
// divide 2^64 their sizes differ by at most one hash.
func bucket(b, n int) Range {
	first, _ := bits.Div64(uint64(b), 0, uint64(n))
	last := uint64(math.MaxUint64)
	if b+1 < n {
		next, _ := bits.Div64(uint64(b+1), 0, uint64(n))
		last = next - 1
	}
	return Range{First: first, Last: last}
}

// PlanFor cuts the space into about n slots (DefaultBuckets if n < 1; never more than
// 2n, nor more than the points) of about equal load, where points say the load is: a
// slot ends halfway between the hash of its last point and the next one's, so a
// namespace created later falls on the side of the nearer one; a point heavier than an
// n-th of the whole is a slot of its own. Without any load it is EqualPlan(n).
//
// Every process that makes a plan from the same points makes the same one.
func PlanFor(points []Point, n int) Plan {
	if n < 1 {
		n = DefaultBuckets
	}
	ps := mergePoints(slices.DeleteFunc(slices.Clone(points), func(p Point) bool { return p.Load <= 0 }))
	total := int64(0)
	for _, p := range ps {
		total += p.Load
	}
	if total == 0 {
		return EqualPlan(n)
	}
	target := float64(total) / float64(n)
	var slots []Slot
	cur := Slot{Range: Range{First: 0}}
	for i, p := range ps {
		// Close the slot before p when p would overshoot the target by more than the
		// slot falls short of it: heavy points get slots of their own.
		if cur.Load > 0 && float64(cur.Load+p.Load)-target > target-float64(cur.Load) {
			cur, slots = cutBefore(cur, slots, ps[i-1].Hash, p.Hash)
		}
		cur.Load += p.Load
		if float64(cur.Load) >= target && i+1 < len(ps) {
			cur, slots = cutBefore(cur, slots, p.Hash, ps[i+1].Hash)
		}
	}
	cur.Last = math.MaxUint64
	return Plan{slots: append(slots, cur)}
}

// cutBefore closes cur between the hashes prev and next (prev < next) and returns the
// slot that starts there.
func cutBefore(cur Slot, slots []Slot, prev, next uint64) (Slot, []Slot) {
	start := prev + 1 + (next-prev-1)/2 // prev < start <= next
	cur.Last = start - 1
	return Slot{Range: Range{First: start}}, append(slots, cur)
}

// Slots returns the plan's slots in hash order.
func (p Plan) Slots() []Slot { return slices.Clone(p.slots) }

// Len is the number of slots.
func (p Plan) Len() int { return len(p.slots) }

// IsZero reports whether the plan has no slots.
func (p Plan) IsZero() bool { return len(p.slots) == 0 }

// Equal reports whether p and q cut the space alike with the same loads.
func (p Plan) Equal(q Plan) bool { return slices.Equal(p.slots, q.slots) }

// SlotOf is the index of the slot holding h; the plan must not be zero.
func (p Plan) SlotOf(h uint64) int {
	return sort.Search(len(p.slots), func(i int) bool { return p.slots[i].First > h }) - 1
}

// Loads is the load each slot holds by points, which may be newer than the plan.
func (p Plan) Loads(points []Point) []int64 {
	out := make([]int64, len(p.slots))
	for _, pt := range points {
		out[p.SlotOf(pt.Hash)] += pt.Load
	}
	return out
}

// Set is the hashes of the slots idx.
func (p Plan) Set(idx ...int) Set {
	rs := make([]Range, len(idx))
	for i, s := range idx {
		rs[i] = p.slots[s].Range
	}
	return SetOf(rs...)
}

// String writes the plan in its text form: each slot's first hash as 16 lower-case hex
// digits, a colon and its load, separated by commas; the first slot starts at 0 and
// each ends where the next begins.
//
//	0000000000000000:120,3a4f000000000000:118,…
func (p Plan) String() string {
	var b strings.Builder
	b.Grow(len(p.slots) * 22)
	for i, s := range p.slots {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(hex16(s.First)[2:])
		b.WriteByte(':')
		b.WriteString(strconv.FormatInt(s.Load, 10))
	}
	return b.String()
}

// ErrPlanSyntax is wrapped by every error of ParsePlan.
var ErrPlanSyntax = errors.New("shard: malformed plan")

// MaxSlots bounds a Plan that ParsePlan accepts.
const MaxSlots = 4096

// ParsePlan reads a Plan from the text String writes: 1 to MaxSlots slots, the first
// starting at 0000000000000000, the starts strictly ascending, loads decimal and not
// negative.
func ParsePlan(text string) (Plan, error) {
	parts := strings.Split(text, ",")
	if len(parts) > MaxSlots {
		return Plan{}, fmt.Errorf("%w: %d slots, more than %d", ErrPlanSyntax, len(parts), MaxSlots)
	}
	slots := make([]Slot, 0, len(parts))
	for i, part := range parts {
		start, load, ok := strings.Cut(part, ":")
		if !ok {
			return Plan{}, fmt.Errorf("%w: slot %d %q: want START:LOAD", ErrPlanSyntax, i+1, part)
		}
		first, err := parseHex16(start)
		if err != nil {
			return Plan{}, fmt.Errorf("%w: slot %d: %v", ErrPlanSyntax, i+1, err)
		}
		n, err := strconv.ParseInt(load, 10, 64)
		if err != nil || n < 0 || strconv.FormatInt(n, 10) != load {
			return Plan{}, fmt.Errorf("%w: slot %d: load %q is not a decimal count", ErrPlanSyntax, i+1, load)
		}
		switch {
		case i == 0 && first != 0:
			return Plan{}, fmt.Errorf("%w: the first slot starts at %s, not 0", ErrPlanSyntax, start)
		case i > 0 && first <= slots[i-1].First:
			return Plan{}, fmt.Errorf("%w: slot %d starts at %s, not above the slot before it", ErrPlanSyntax, i+1, start)
		case i > 0:
			slots[i-1].Last = first - 1
		}
		slots = append(slots, Slot{Range: Range{First: first, Last: math.MaxUint64}, Load: n})
	}
	return Plan{slots: slots}, nil
}
