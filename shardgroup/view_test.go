package shardgroup

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
)

// Claims the tests write, as text.
var (
	first10 = shard.SetOf(shard.Range{First: 0, Last: 0x09ffffffffffffff}).String()
	whole   = shard.WholeSet().String()
)

// testLease is a Lease of the group as member id would write it ("-": no acting
// annotation at all).
func testLease(id, uid, rv, acting, target string) *object.Lease {
	l := &object.Lease{ObjectMeta: object.ObjectMeta{Name: leaseName(group, id), UID: uid, ResourceVersion: rv,
		Labels: map[string]string{GroupLabel: group}, Annotations: map[string]string{IncarnationAnnotation: "inc-" + id}}}
	l.Spec.HolderIdentity = &id
	d := int32(15)
	l.Spec.LeaseDurationSeconds = &d
	if acting != "-" {
		l.Annotations[ActingAnnotation] = acting
	}
	if target != "" {
		l.Annotations[TargetAnnotation] = target
	}
	return l
}

// renewed sets l's renewTime, on its holder's clock, s seconds after the epoch: what
// every renewal changes.
func renewed(l *object.Lease, s int) *object.Lease {
	t := object.NewMicroTime(epoch.Add(time.Duration(s) * time.Second))
	l.Spec.RenewTime = &t
	return l
}

// peerView is what the tests compare of a peer.
type peerView struct {
	Holder  string
	Live    bool
	Acting  string
	Target  string
	Expires time.Duration // after the epoch
	Bad     bool
}

type listwatchEvent string

const (
	added     listwatchEvent = "ADDED"
	modified  listwatchEvent = "MODIFIED"
	deletedEv listwatchEvent = "DELETED"
)

func TestView(t *testing.T) {
	type step struct {
		at      int // seconds after the epoch
		list    []*object.Lease
		listRV  string
		event   listwatchEvent
		lease   *object.Lease
		changed bool // what observe or deleted should report (events only)
		want    []peerView
	}
	for _, tt := range []struct {
		name  string
		steps []step
	}{{
		name: "expiry counts from the last change seen, on this clock",
		steps: []step{
			{at: 0, list: []*object.Lease{testLease("b", "u1", "10", first10, first10)}, listRV: "10",
				want: []peerView{{"b", true, first10, first10, 15 * time.Second, false}}},
			// A renewal 10 s later (its renewTime changed; its value is never compared
			// with this clock): the duration restarts.
			{at: 10, event: modified, lease: renewed(testLease("b", "u1", "11", first10, first10), 3), changed: false,
				want: []peerView{{"b", true, first10, first10, 25 * time.Second, false}}},
			// An older version from a lagging watch changes nothing.
			{at: 12, event: modified, lease: testLease("b", "u1", "9", "", ""), changed: false,
				want: []peerView{{"b", true, first10, first10, 25 * time.Second, false}}},
			{at: 24, want: []peerView{{"b", true, first10, first10, 25 * time.Second, false}}},
			{at: 25, want: nil},
		},
	}, {
		name: "a write that renews nothing (another process's mark) does not extend the Lease",
		steps: []step{
			{at: 0, list: []*object.Lease{testLease("b", "u1", "10", first10, first10)}, listRV: "10",
				want: []peerView{{"b", true, first10, first10, 15 * time.Second, false}}},
			{at: 10, event: modified, lease: func() *object.Lease {
				l := testLease("b", "u1", "11", first10, first10)
				l.Annotations[ContenderAnnotation] = "other 2026-03-01T12:00:10Z"
				return l
			}(), changed: true,
				want: []peerView{{"b", true, first10, first10, 15 * time.Second, false}}},
		},
	}, {
		name: "a member that leaves publishes an empty claim: its deletion counts at once",
		steps: []step{
			{at: 0, list: []*object.Lease{testLease("b", "u1", "10", first10, first10)}, listRV: "10",
				want: []peerView{{"b", true, first10, first10, 15 * time.Second, false}}},
			{at: 1, event: modified, lease: testLease("b", "u1", "11", "", ""), changed: true,
				want: []peerView{{"b", true, "", "", 16 * time.Second, false}}},
			{at: 1, event: deletedEv, lease: testLease("b", "u1", "12", "", ""), changed: true, want: nil},
			// The list that follows agrees; a stale event does not bring it back.
			{at: 2, list: nil, listRV: "12", want: nil},
			{at: 2, event: modified, lease: testLease("b", "u1", "11", "", ""), changed: false, want: nil},
		},
	}, {
		name: "a Lease deleted with claims keeps them for a LeaseDuration after the deletion was seen",
		steps: []step{
			{at: 0, list: []*object.Lease{testLease("b", "u1", "10", first10, first10)}, listRV: "10",
				want: []peerView{{"b", true, first10, first10, 15 * time.Second, false}}},
			{at: 5, list: nil, listRV: "20",
				want: []peerView{{"b", false, first10, first10, 20 * time.Second, false}}},
			{at: 19, want: []peerView{{"b", false, first10, first10, 20 * time.Second, false}}},
			{at: 20, want: nil},
		},
	}, {
		name: "a Lease deleted after it expired leaves nothing behind",
		steps: []step{
			{at: 0, list: []*object.Lease{testLease("b", "u1", "10", first10, first10)}, listRV: "10",
				want: []peerView{{"b", true, first10, first10, 15 * time.Second, false}}},
			{at: 15, want: nil},
			// Collected by another member: the event's version is the deletion's.
			{at: 150, event: deletedEv, lease: testLease("b", "u1", "11", first10, first10), changed: false, want: nil},
		},
	}, {
		name: "a Lease deleted after it expired, seen by a list, leaves nothing behind",
		steps: []step{
			{at: 0, list: []*object.Lease{testLease("b", "u1", "10", first10, first10)}, listRV: "10",
				want: []peerView{{"b", true, first10, first10, 15 * time.Second, false}}},
			{at: 150, list: nil, listRV: "12", want: nil},
			{at: 151, event: modified, lease: testLease("b", "u1", "10", first10, first10), changed: false, want: nil},
		},
	}, {
		name: "a Lease renewed unseen just before its deletion keeps its claims",
		steps: []step{
			{at: 0, list: []*object.Lease{testLease("b", "u1", "10", first10, first10)}, listRV: "10",
				want: []peerView{{"b", true, first10, first10, 15 * time.Second, false}}},
			{at: 20, event: deletedEv, lease: renewed(testLease("b", "u1", "12", first10, first10), 19), changed: true,
				want: []peerView{{"b", false, first10, first10, 35 * time.Second, false}}},
		},
	}, {
		name: "a Lease made anew under a deleted one's name leaves the old claims standing until they lapse",
		steps: []step{
			{at: 0, list: []*object.Lease{testLease("b", "u1", "10", first10, first10)}, listRV: "10",
				want: []peerView{{"b", true, first10, first10, 15 * time.Second, false}}},
			{at: 1, event: deletedEv, lease: testLease("b", "u1", "11", first10, first10), changed: true,
				want: []peerView{{"b", false, first10, first10, 16 * time.Second, false}}},
			{at: 2, event: added, lease: testLease("b", "u2", "12", "", first10), changed: true,
				want: []peerView{{"b", true, "", first10, 17 * time.Second, false}, {"b", false, first10, first10, 16 * time.Second, false}}},
			{at: 16, want: []peerView{{"b", true, "", first10, 17 * time.Second, false}}},
		},
	}, {
		name: "a list older than the watch does not drop what the watch showed",
		steps: []step{
			{at: 0, event: added, lease: testLease("b", "u1", "30", "", ""), changed: true,
				want: []peerView{{"b", true, "", "", 15 * time.Second, false}}},
			{at: 1, list: nil, listRV: "29", want: []peerView{{"b", true, "", "", 15 * time.Second, false}}},
		},
	}, {
		name: "claims that do not parse are taken as everything",
		steps: []step{
			{at: 0, list: []*object.Lease{
				testLease("b", "u1", "10", "256:1,2", ""),
				testLease("d", "u3", "12", "-", ""),
			}, listRV: "12",
				want: []peerView{
					{"b", true, whole, "", 15 * time.Second, true},
					{"d", true, "", "", 15 * time.Second, false},
				}},
		},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			clk := clock.NewFake(epoch)
			v := newView(leaseName(group, "a"), group, "a", "inc-self", clk, DefaultLeaseDuration)
			for i, s := range tt.steps {
				clk.Step(epoch.Add(time.Duration(s.at) * time.Second).Sub(clk.Now()))
				switch {
				case s.event == added || s.event == modified:
					if got := v.observe(s.lease); got != s.changed {
						t.Errorf("step %d: observe = %v, want %v", i, got, s.changed)
					}
				case s.event == deletedEv:
					if got := v.deleted(s.lease); got != s.changed {
						t.Errorf("step %d: deleted = %v, want %v", i, got, s.changed)
					}
				case s.listRV != "":
					v.observeList(s.list, s.listRV)
				}
				var got []peerView
				for _, p := range v.peers(clk.Now()) {
					got = append(got, peerView{p.holder, p.live, p.acting.String(), p.target.String(), p.expiresAt.Sub(epoch), p.actErr != nil})
				}
				if d := cmp.Diff(s.want, got); d != "" {
					t.Errorf("step %d at %ds (-want +got):\n%s", i, s.at, d)
				}
			}
		})
	}
}

// A member's own Lease is no peer as its incarnation writes it; written by another
// incarnation of its ID, its claims stand as a peer's (a predecessor's) until they
// expire.
func TestViewOwnLease(t *testing.T) {
	clk := clock.NewFake(epoch)
	v := newView(leaseName(group, "a"), group, "a", "inc-a", clk, DefaultLeaseDuration)
	if v.observe(testLease("a", "u9", "99", whole, "")) {
		t.Error("its own Lease, in its own incarnation, was seen as a change")
	}
	if _, _, ok := v.predecessor(clk.Now()); ok || len(v.peers(clk.Now())) != 0 {
		t.Error("its own Lease counted as a peer")
	}
	old := testLease("a", "u9", "100", whole, "")
	old.Annotations[IncarnationAnnotation] = "inc-old"
	v.observe(old)
	inc, until, ok := v.predecessor(clk.Now())
	if !ok || inc != "inc-old" || !until.Equal(epoch.Add(DefaultLeaseDuration)) {
		t.Errorf("predecessor = %q, %v, %v; want inc-old until a duration from now", inc, until, ok)
	}
	clk.Step(DefaultLeaseDuration)
	if _, _, ok := v.predecessor(clk.Now()); ok {
		t.Error("the predecessor's Lease did not expire")
	}
}
