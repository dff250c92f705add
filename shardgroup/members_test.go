package shardgroup

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/shard"
)

func TestConflicts(t *testing.T) {
	now := epoch
	half := shard.SetOf(shard.Range{First: 0, Last: 1<<63 - 1})
	other := shard.WholeSet().Minus(half)
	quarter := shard.SetOf(shard.Range{First: 1 << 62, Last: 1<<63 - 1})
	member := func(id string, acting shard.Set, renewed time.Duration) MemberState {
		return MemberState{ID: id, Acting: acting, RenewTime: now.Add(-renewed), LeaseDuration: 15 * time.Second}
	}
	for _, tt := range []struct {
		name    string
		members []MemberState
		want    []Conflict
	}{
		{"apart", []MemberState{member("a", half, 0), member("b", other, 0)}, nil},
		{"overlapping", []MemberState{member("a", half, 0), member("b", quarter, time.Second)},
			[]Conflict{{Part: quarter, Members: [2]string{"a", "b"}}}},
		{"one stale: its claims lapsed", []MemberState{member("a", half, 0), member("b", quarter, time.Minute)}, nil},
		{"claims that do not parse claim everything", []MemberState{member("a", half, 0),
			{ID: "z", RenewTime: now, LeaseDuration: 15 * time.Second, Err: errors.New(ActingAnnotation + ": bad")}},
			[]Conflict{{Part: half, Members: [2]string{"a", "z"}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, Conflicts(tt.members, now), cmp.AllowUnexported(shard.Set{})); d != "" {
				t.Errorf("Conflicts (-want +got):\n%s", d)
			}
		})
	}
}

func TestLoadText(t *testing.T) {
	points := []shard.Point{{Hash: 1, Load: 3}, {Hash: 0xff00000000000000, Load: 0}}
	back, err := parseLoad(formatLoad(points))
	if err != nil || !cmp.Equal(points, back) {
		t.Fatalf("load %q reads back as %v, %v", formatLoad(points), back, err)
	}
	// More points than a Lease carries are grouped, neighbours with neighbours, the
	// load kept whole.
	many := make([]shard.Point, 3*MaxLoadPoints+1)
	var total int64
	for i := range many {
		many[i] = shard.Point{Hash: uint64(i) << 40, Load: int64(i % 7)}
		total += many[i].Load
	}
	grouped, err := parseLoad(formatLoad(many))
	if err != nil || len(grouped) > MaxLoadPoints {
		t.Fatalf("%d points grouped into %d: %v", len(many), len(grouped), err)
	}
	var sum int64
	for _, p := range grouped {
		sum += p.Load
	}
	if sum != total || grouped[len(grouped)-1].Hash != many[len(many)-1].Hash {
		t.Errorf("grouping kept %d of %d, ends at %#x", sum, total, grouped[len(grouped)-1].Hash)
	}
	for _, bad := range []string{"1:2", "0000000000000002:1,0000000000000001:1", "0000000000000001:-1"} {
		if _, err := parseLoad(bad); err == nil {
			t.Errorf("parseLoad(%q) accepted", bad)
		}
	}
}
