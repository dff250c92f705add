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

// checkPartition fails unless every hash has exactly one owner in a, and each member's
// ranges are sorted with no two adjacent (Assign merges those).
func checkPartition(t *testing.T, a Assignment) {
	t.Helper()
	var all []Range
	for m, rs := range a {
		for i, r := range rs {
			if r.First > r.Last {
				t.Fatalf("%s: inverted range %+v", m, r)
			}
			if i > 0 && rs[i-1].Last+1 >= r.First {
				t.Errorf("%s: ranges %+v and %+v are unsorted, overlapping or not merged", m, rs[i-1], r)
			}
		}
		all = append(all, rs...)
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

func share(rs []Range) float64 {
	s := 0.0
	for _, r := range rs {
		s += r.Fraction()
	}
	return s
}

// ownerOf is the member owning h, by plain search.
func ownerOf(a Assignment, h uint64) string {
	for m, rs := range a {
		for _, r := range rs {
			if r.Contains(h) {
				return m
			}
		}
	}
	return "<nobody>"
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
		rs, present := a[m]
		if !present {
			t.Errorf("%s missing from the assignment", m)
		}
		sel, ok := a.Selector(m, Namespace)
		if ok != (len(rs) > 0) {
			t.Errorf("Selector(%s) ok = %v with %d ranges", m, ok, len(rs))
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
	for n := 1; n <= 8; n++ {
		members := memberNames(n)
		want := Assign(members, DefaultBuckets)
		for range 5 {
			shuffled := append(slices.Clone(members), members[rng.IntN(n)])
			rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			if diff := cmp.Diff(want, Assign(shuffled, DefaultBuckets)); diff != "" {
				t.Fatalf("Assign(%v) differs from Assign(%v) (-sorted +shuffled):\n%s", shuffled, members, diff)
			}
		}
	}
	if diff := cmp.Diff(Assign(memberNames(3), DefaultBuckets), Assign(memberNames(3), 0)); diff != "" {
		t.Errorf("buckets 0 is not DefaultBuckets:\n%s", diff)
	}
	if a := Assign(nil, DefaultBuckets); len(a) != 0 {
		t.Errorf("Assign(nil) = %v, want empty", a)
	}
}

func TestAssignBalance(t *testing.T) {
	// Rendezvous over 256 buckets gives each of N members a binomial(256, 1/N) count of
	// buckets, ±17% of 256/N at one standard deviation for N = 8. These names land
	// within ±25% (the worst is 1.24 × 1/6, at N = 6); allow ±35%, about 2σ.
	for n := 1; n <= 8; n++ {
		a := Assign(memberNames(n), DefaultBuckets)
		ideal := 1 / float64(n)
		for m, rs := range a {
			if s := share(rs); s < 0.65*ideal || s > 1.35*ideal {
				t.Errorf("%d members: %s owns %.4f of the space, ideal %.4f", n, m, s, ideal)
			}
		}
	}
}

func TestAssignJoinMovesOnlyToTheNewMember(t *testing.T) {
	for n := 1; n <= 8; n++ {
		old := memberNames(n)
		newcomer := fmt.Sprintf("controller-%d", n)
		before := Assign(old, DefaultBuckets)
		after := Assign(append(slices.Clone(old), newcomer), DefaultBuckets)

		moved := Moved(before, after)
		if got := share(after[newcomer]); math.Abs(moved-got) > 1e-12 {
			t.Errorf("%d→%d: Moved = %.4f but the newcomer owns %.4f", n, n+1, moved, got)
		}
		if ideal := 1 / float64(n+1); moved > ideal+0.1 || moved == 0 {
			t.Errorf("%d→%d: moved %.4f of the space, ideal %.4f", n, n+1, moved, ideal)
		}
		for b := range DefaultBuckets {
			h := bucket(b, DefaultBuckets).First
			if was, is := ownerOf(before, h), ownerOf(after, h); was != is && is != newcomer {
				t.Errorf("%d→%d: bucket %d moved from %s to %s, not to the newcomer", n, n+1, b, was, is)
			}
		}
	}

	// The case the brief names: a 4th member joining 3 takes close to 1/4.
	moved := Moved(Assign(memberNames(3), DefaultBuckets), Assign(memberNames(4), DefaultBuckets))
	if moved > 0.35 {
		t.Errorf("3→4 members moved %.4f of the space, want ≤ 0.35 (ideal 0.25)", moved)
	}
	t.Logf("3→4 members moved %.4f of the space (ideal 0.25)", moved)
}

func TestAssignLeaveMovesOnlyTheLeaversPart(t *testing.T) {
	members := memberNames(4)
	before := Assign(members, DefaultBuckets)
	for _, leaver := range members {
		rest := slices.DeleteFunc(slices.Clone(members), func(m string) bool { return m == leaver })
		after := Assign(rest, DefaultBuckets)
		if got, want := Moved(before, after), share(before[leaver]); math.Abs(got-want) > 1e-12 {
			t.Errorf("%s leaving moved %.4f, but it owned %.4f", leaver, got, want)
		}
		for b := range DefaultBuckets {
			h := bucket(b, DefaultBuckets).First
			if was, is := ownerOf(before, h), ownerOf(after, h); was != is && was != leaver {
				t.Errorf("%s leaving moved bucket %d from %s to %s", leaver, b, was, is)
			}
		}
	}
}

// TestAssignIsStable pins the weight function: processes built from different versions
// must agree on who owns what, so a change here is a protocol change, not a refactor.
func TestAssignIsStable(t *testing.T) {
	got := Assign([]string{"a", "b", "c"}, 8)
	want := Assignment{
		"a": {{0x2000000000000000, 0x7fffffffffffffff}, {0xa000000000000000, 0xbfffffffffffffff}},
		"b": {{0x0000000000000000, 0x1fffffffffffffff}, {0xc000000000000000, 0xdfffffffffffffff}},
		"c": {{0x8000000000000000, 0x9fffffffffffffff}, {0xe000000000000000, 0xffffffffffffffff}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
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
		{"renamed", Assignment{"x": {Whole()}}, Assignment{"y": {Whole()}}, 1},
		{"half renamed", Assignment{"x": {lowerHalf()}, "y": {upperHalf()}}, Assignment{"x": {Whole()}}, 0.5},
		{
			"same owners, ranges cut differently",
			Assignment{"x": {{0, 99}, {100, math.MaxUint64}}},
			Assignment{"x": {Whole()}},
			0,
		},
		{"partly unowned", Assignment{"x": {lowerHalf()}}, Assignment{"x": {Whole()}}, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Moved(tt.before, tt.after); got != tt.want {
				t.Errorf("Moved = %v, want %v", got, tt.want)
			}
		})
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
	if a["controller-0"][0] == (Range{7, 7}) {
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

// The fraction of namespaces that change owner when a member joins, against the ideal
// 1/N: 10,000 namespaces named as people name them (a word, a dash, a number), for 1 to
// 7 members joined by one more. The table is logged (go test -run NamespacesMoved -v).
func TestAssignNamespacesMovedOnJoin(t *testing.T) {
	words := []string{"shop", "team", "billing", "search", "web", "data", "ml", "infra", "auth", "payments"}
	var namespaces []string
	for i := range 10000 {
		namespaces = append(namespaces, fmt.Sprintf("%s-%d", words[i%len(words)], i/len(words)))
	}
	owner := func(a Assignment, ns string) string { return ownerOf(a, Hash(ns)) }
	for n := 1; n <= 7; n++ {
		before, after := Assign(memberNames(n), DefaultBuckets), Assign(memberNames(n+1), DefaultBuckets)
		moved := 0
		for _, ns := range namespaces {
			if owner(before, ns) != owner(after, ns) {
				moved++
			}
		}
		frac, ideal := float64(moved)/float64(len(namespaces)), 1/float64(n+1)
		t.Logf("%d→%d members: %.3f of the namespaces moved (ideal %.3f), %.3f of the space", n, n+1, frac, ideal, Moved(before, after))
		if frac > 2*ideal {
			t.Errorf("%d→%d members moved %.3f of the namespaces, more than twice the ideal %.3f", n, n+1, frac, ideal)
		}
	}
}
