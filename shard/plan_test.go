package shard

import (
	"errors"
	"math"
	"testing"
)

func TestEqualPlanRoundTrips(t *testing.T) {
	for _, n := range []int{1, 3, 256, 1000} {
		p := EqualPlan(n)
		back, err := ParsePlan(p.String())
		if err != nil || !back.Equal(p) {
			t.Fatalf("EqualPlan(%d): ParsePlan(String) = %v, %v", n, back.Len(), err)
		}
		checkPlan(t, p)
	}
}

// checkPlan fails unless the slots cover the space in order without gap or overlap.
func checkPlan(t *testing.T, p Plan) {
	t.Helper()
	next := uint64(0)
	for i, s := range p.slots {
		if s.First != next || s.Last < s.First {
			t.Fatalf("slot %d %+v does not follow %#x", i, s, next)
		}
		next = s.Last + 1
	}
	if p.slots[len(p.slots)-1].Last != math.MaxUint64 {
		t.Fatal("the plan does not reach the top of the space")
	}
}

func TestPlanForCutsBetweenPoints(t *testing.T) {
	sets := namespaceSets()
	for name, loads := range sets {
		points := PointsOf(loads)
		p := PlanFor(points, DefaultBuckets)
		checkPlan(t, p)
		if p.Len() > 2*DefaultBuckets || p.Len() > len(points) {
			t.Errorf("%s: %d slots for %d points", name, p.Len(), len(points))
		}
		// The loads the plan records are what the points put in each slot, and none
		// is empty.
		for i, l := range p.Loads(points) {
			if l != p.slots[i].Load || l == 0 {
				t.Errorf("%s: slot %d records %d, holds %d", name, i, p.slots[i].Load, l)
			}
		}
		back, err := ParsePlan(p.String())
		if err != nil || !back.Equal(p) {
			t.Errorf("%s: the plan does not round-trip: %v", name, err)
		}
	}
	if p := PlanFor(nil, 8); !p.Equal(EqualPlan(8)) {
		t.Error("a plan without load is not the equal plan")
	}
	// A point heavier than a slot's share has a slot of its own.
	heavy := []Point{{Hash: 10, Load: 1}, {Hash: 20, Load: 100}, {Hash: 30, Load: 1}}
	p := PlanFor(heavy, 4)
	if s := p.slots[p.SlotOf(20)]; s.Load != 100 || s.First <= 10 || s.Last >= 30 {
		t.Errorf("the heavy point's slot is %+v", s)
	}
}

func TestParsePlanIsStrict(t *testing.T) {
	for _, text := range []string{
		"",
		"0000000000000001:1",                    // does not start at 0
		"0000000000000000:1,0000000000000000:1", // not ascending
		"0000000000000000:-1",                   // negative
		"0000000000000000:01",                   // leading zero
		"0000000000000000",                      // no load
	} {
		if _, err := ParsePlan(text); !errors.Is(err, ErrPlanSyntax) {
			t.Errorf("ParsePlan(%q) = %v, want ErrPlanSyntax", text, err)
		}
	}
}
