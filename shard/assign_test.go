package shard

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func memberNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("controller-%d", i)
	}
	return names
}

// checkPartition fails unless every hash has exactly one owner in a.
func checkPartition(t *testing.T, a Assignment) {
	t.Helper()
	var all []Range
	for _, s := range a {
		all = append(all, s.rs...)
	}
	slices.SortFunc(all, func(x, y Range) int { return cmpUint(x.First, y.First) })
	if len(all) == 0 || all[0].First != 0 {
		t.Fatalf("hash 0 has no owner: %v", all)
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].Last == math.MaxUint64 || all[i].First != all[i-1].Last+1 {
			t.Fatalf("gap or overlap between %+v and %+v", all[i-1], all[i])
		}
	}
	if last := all[len(all)-1].Last; last != math.MaxUint64 {
		t.Fatalf("space ends at %#x, not 2^64-1", last)
	}
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestAssignPartitions(t *testing.T) {
	for n := 1; n <= 8; n++ {
		for _, buckets := range []int{DefaultBuckets, 1, 3, 7, 1000} {
			t.Run(fmt.Sprintf("%d members, %d buckets", n, buckets), func(t *testing.T) {
				a := Assign(memberNames(n), buckets)
				if len(a) != n {
					t.Errorf("%d members in the assignment, want %d", len(a), n)
				}
				checkPartition(t, a)
			})
		}
	}
}

func TestAssignMoreMembersThanBuckets(t *testing.T) {
	members := memberNames(10)
	a := Assign(members, 4)
	checkPartition(t, a)
	owners := 0
	for _, m := range members {
		s, present := a[m]
		if !present {
			t.Errorf("%s missing from the assignment", m)
		}
		sel, ok := a.Selector(m, Namespace)
		if ok != !s.IsEmpty() {
			t.Errorf("Selector(%s) ok = %v with %v", m, ok, s)
		}
		if ok {
			owners++
			if err := sel.Validate(); err != nil {
				t.Errorf("Selector(%s): %v", m, err)
			}
		} else if !sel.IsZero() {
			t.Errorf("Selector(%s) owning nothing = %v, want the zero Selector", m, sel)
		}
	}
	if owners == 0 || owners > 4 {
		t.Errorf("%d members own something among 4 buckets", owners)
	}
}

func TestAssignIgnoresOrderAndDuplicates(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	plan := PlanFor(PointsOf(namespaceSets()["1000 words, Zipf"]), DefaultBuckets)
	for n := 1; n <= 8; n++ {
		members := memberNames(n)
		want := plan.Assign(members)
		for range 5 {
			shuffled := append(slices.Clone(members), members[rng.IntN(n)])
			rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			if diff := cmp.Diff(want, plan.Assign(shuffled), cmp.AllowUnexported(Set{})); diff != "" {
				t.Fatalf("Assign(%v) differs from Assign(%v) (-sorted +shuffled):\n%s", shuffled, members, diff)
			}
		}
	}
	if diff := cmp.Diff(Assign(memberNames(3), DefaultBuckets), Assign(memberNames(3), 0), cmp.AllowUnexported(Set{})); diff != "" {
		t.Errorf("buckets 0 is not DefaultBuckets:\n%s", diff)
	}
	if a := Assign(nil, DefaultBuckets); len(a) != 0 {
		t.Errorf("Assign(nil) = %v, want empty", a)
	}
}

// TestAssignBalance holds every member of an equal plan within the bound: rendezvous
// alone would leave a binomial spread, ±17% of 256/N at one standard deviation for N = 8.
func TestAssignBalance(t *testing.T) {
	for n := 1; n <= 8; n++ {
		a := Assign(memberNames(n), DefaultBuckets)
		ideal := 1 / float64(n)
		for m, s := range a {
			// A slot is 1/256 of the space: the bound is met to within one.
			if f := s.Fraction(); f > (1+Slack)*ideal+1.0/DefaultBuckets || f < 0.5*ideal {
				t.Errorf("%d members: %s owns %.4f of the space, ideal %.4f", n, m, f, ideal)
			}
		}
	}
}

// namespaceSets are the tenancies a group must balance: numbered names, which FNV-1a
// crowds into a few 256ths of the space (tenant-00 … tenant-59 all in one), random words,
// and the same words weighted by Zipf's law, as tenants' sizes often are.
func namespaceSets() map[string]map[string]int64 {
	numbered := func(format string, from, to int) map[string]int64 {
		m := map[string]int64{}
		for i := from; i <= to; i++ {
			m[fmt.Sprintf(format, i)] = 10
		}
		return m
	}
	words := randomWords(1000, 7)
	plain, zipf := map[string]int64{}, map[string]int64{}
	for i, w := range words {
		plain[w] = 10
		zipf[w] = int64(math.Ceil(10000 / math.Pow(float64(i+1), 1.1)))
	}
	return map[string]map[string]int64{
		"tenant-00…tenant-59": numbered("tenant-%02d", 0, 59),
		"team-1…team-50":      numbered("team-%d", 1, 50),
		"shop-1…shop-10000":   numbered("shop-%d", 1, 10000),
		"1000 random words":   plain,
		"1000 words, Zipf":    zipf,
	}
}

// randomWords are n distinct lower-case words of 3 to 10 letters, from seed.
func randomWords(n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, seed))
	const letters = "abcdefghijklmnopqrstuvwxyz"
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		b := make([]byte, 3+rng.IntN(8))
		for i := range b {
			b[i] = letters[rng.IntN(len(letters))]
		}
		if w := string(b); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// TestBalanceByLoad is the promise of Plan: on each namespace set, the busiest of 3
// members holds at most 1.2 × the mean load (unless one namespace alone is heavier than
// the mean), where equal slices of the space leave numbered tenants all on one member;
// and a fourth member's join moves close to the 1/4 of the load it must. The table is
// logged: go test -run TestBalanceByLoad -v ./shard.
func TestBalanceByLoad(t *testing.T) {
	sets := namespaceSets()
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range sets {
			if !yield(k) {
				return
			}
		}
	}) {
		points := PointsOf(sets[name])
		plan := PlanFor(points, DefaultBuckets)
		for _, n := range []int{2, 3, 4, 8} {
			members := memberNames(n)
			a := plan.Assign(members)
			joined := plan.Assign(append(slices.Clone(members), "controller-new"))
			balance, equal := Balance(a, points), Balance(EqualPlan(DefaultBuckets).Assign(members), points)
			moved, ideal := MovedLoad(a, joined, points), 1/float64(n+1)
			t.Logf("%-20s %3d slots, %d members: busiest %.2f × the mean (equal slices: %.2f); a join moves %.3f of the load (ideal %.3f)",
				name, plan.Len(), n, balance, equal, moved, ideal)
			heaviest := slices.MaxFunc(points, func(a, b Point) int { return cmpUint(uint64(a.Load), uint64(b.Load)) }).Load
			var total int64
			for _, p := range points {
				total += p.Load
			}
			alone := float64(heaviest) > float64(total)/float64(n)
			if n == 3 && balance > 1.2 && !alone {
				t.Errorf("%s over 3 members: the busiest holds %.3f × the mean, want ≤ 1.2", name, balance)
			}
			if n == 3 && moved > 1.5*ideal {
				t.Errorf("%s: a fourth member's join moves %.3f of the load, want close to %.3f", name, moved, ideal)
			}
		}
	}
}

// A join moves about 1/N of an equal plan, and mostly to the newcomer: rendezvous moves
// nothing between the others, and the bound only trims what the newcomer won.
func TestAssignJoinMovesLittle(t *testing.T) {
	for n := 1; n <= 8; n++ {
		old := memberNames(n)
		newcomer := fmt.Sprintf("controller-%d", n)
		before := Assign(old, DefaultBuckets)
		after := Assign(append(slices.Clone(old), newcomer), DefaultBuckets)
		moved, ideal := Moved(before, after), 1/float64(n+1)
		toNewcomer := after[newcomer].Fraction()
		if moved > ideal+0.1 || moved < toNewcomer-1e-12 {
			t.Errorf("%d→%d: moved %.4f of the space (the newcomer has %.4f), ideal %.4f", n, n+1, moved, toNewcomer, ideal)
		}
		if elsewhere := moved - toNewcomer; elsewhere > 0.05 {
			t.Errorf("%d→%d: %.4f of the space moved between the old members", n, n+1, elsewhere)
		}
	}
}

func TestAssignLeaveMovesLittle(t *testing.T) {
	members := memberNames(4)
	before := Assign(members, DefaultBuckets)
	for _, leaver := range members {
		rest := slices.DeleteFunc(slices.Clone(members), func(m string) bool { return m == leaver })
		after := Assign(rest, DefaultBuckets)
		if got, owned := Moved(before, after), before[leaver].Fraction(); got < owned-1e-12 || got > owned+0.05 {
			t.Errorf("%s leaving moved %.4f, but it owned %.4f", leaver, got, owned)
		}
	}
}

// TestAssignIsStable pins the weight function and the bound: processes built from
// different versions must agree on who owns what, so a change here is a protocol
// change, not a refactor.
func TestAssignIsStable(t *testing.T) {
	got := Assign([]string{"a", "b", "c"}, 8)
	want := Assignment{
		"a": SetOf(Range{0xa000000000000000, 0xffffffffffffffff}),
		"b": SetOf(Range{0x0000000000000000, 0x1fffffffffffffff}, Range{0x4000000000000000, 0x7fffffffffffffff}),
		"c": SetOf(Range{0x2000000000000000, 0x3fffffffffffffff}, Range{0x8000000000000000, 0x9fffffffffffffff}),
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(Set{})); diff != "" {
		t.Errorf("Assign([a b c], 8) changed (-pinned +now):\n%s", diff)
	}
}

func TestBucket(t *testing.T) {
	for b := range 256 {
		want := Range{First: uint64(b) << 56, Last: uint64(b+1)<<56 - 1}
		if got := bucket(b, 256); got != want {
			t.Fatalf("bucket(%d, 256) = %+v, want %+v", b, got, want)
		}
	}
	if got := bucket(0, 1); got != Whole() {
		t.Errorf("bucket(0, 1) = %+v, want the whole space", got)
	}
	// 3 does not divide 2^64: sizes may differ by one hash, and nothing is left over.
	var sizes []uint64
	next := uint64(0)
	for b := range 3 {
		r := bucket(b, 3)
		if r.First != next {
			t.Fatalf("bucket(%d, 3) starts at %#x, want %#x", b, r.First, next)
		}
		sizes = append(sizes, r.Last-r.First)
		next = r.Last + 1
	}
	if next != 0 || slices.Max(sizes)-slices.Min(sizes) > 1 {
		t.Errorf("3 buckets: sizes-1 %v, end wrapped to %#x", sizes, next)
	}
}

func TestMoved(t *testing.T) {
	three := Assign(memberNames(3), DefaultBuckets)
	tests := []struct {
		name          string
		before, after Assignment
		want          float64
	}{
		{"same", three, three, 0},
		{"both empty", Assignment{}, Assignment{}, 0},
		{"from nothing", Assignment{}, three, 1},
		{"to nothing", three, nil, 1},
		{"renamed", Assignment{"x": WholeSet()}, Assignment{"y": WholeSet()}, 1},
		{"half renamed", Assignment{"x": SetOf(lowerHalf()), "y": SetOf(upperHalf())}, Assignment{"x": WholeSet()}, 0.5},
		{"partly unowned", Assignment{"x": SetOf(lowerHalf())}, Assignment{"x": WholeSet()}, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Moved(tt.before, tt.after); got != tt.want {
				t.Errorf("Moved = %v, want %v", got, tt.want)
			}
		})
	}
	points := []Point{{Hash: 5, Load: 3}, {Hash: 1 << 63, Load: 1}}
	if got := MovedLoad(Assignment{"x": SetOf(lowerHalf()), "y": SetOf(upperHalf())}, Assignment{"x": WholeSet()}, points); got != 0.25 {
		t.Errorf("MovedLoad = %v, want 0.25 (the upper point's 1 of 4)", got)
	}
	if got := MovedLoad(three, three, nil); got != 0 {
		t.Errorf("MovedLoad without load = %v, want 0", got)
	}
}

func TestAssignmentSelector(t *testing.T) {
	a := Assign(memberNames(2), DefaultBuckets)
	if _, ok := a.Selector("stranger", UID); ok {
		t.Error("Selector of a non-member: ok = true")
	}
	sel, ok := a.Selector("controller-0", UID)
	if !ok || sel.Field != UID || len(sel.Ranges) == 0 {
		t.Fatalf("Selector(controller-0) = %v, %v", sel, ok)
	}
	sel.Ranges[0] = Range{7, 7}
	if a["controller-0"].rs[0] == (Range{7, 7}) {
		t.Error("Selector shares its ranges with the assignment")
	}
	// Every value is matched by exactly one member's selector.
	for _, v := range []string{"", "default", "kube-system", "team-a", "team-b"} {
		n := 0
		for m := range a {
			s, _ := a.Selector(m, Namespace)
			if s.Matches(v) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%q matched by %d members", v, n)
		}
	}
}
