package shardgroup

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/object"
)

// lease is a Lease of the group as member id would write it.
func testLease(id, uid, rv, acting, target string) *object.Lease {
	l := &object.Lease{ObjectMeta: object.ObjectMeta{Name: leaseName(group, id), UID: uid, ResourceVersion: rv,
		Labels: map[string]string{GroupLabel: group}, Annotations: map[string]string{}}}
	l.Spec.HolderIdentity = ptr(id)
	l.Spec.LeaseDurationSeconds = ptr[int32](15)
	if acting != "-" {
		l.Annotations[ActingAnnotation] = acting
	}
	if target != "" {
		l.Annotations[TargetAnnotation] = target
	}
	return l
}

// peerView is what the tests compare of a peer.
type peerView struct {
	Holder  string
	Live    bool
	Acting  string
	Target  string
	Expires time.Duration // after t0
	Bad     bool
}

func TestView(t *testing.T) {
	t0 := epoch
	sec := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
	type step struct {
		at      int // seconds after t0
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
			{at: 0, list: []*object.Lease{testLease("b", "u1", "10", "256:0-9", "256:0-9")}, listRV: "10",
				want: []peerView{{"b", true, "256:0-9", "256:0-9", 15 * time.Second, false}}},
			// A renewal 10 s later (renewTime is not even read): the duration restarts.
			{at: 10, event: modified, lease: testLease("b", "u1", "11", "256:0-9", "256:0-9"), changed: false,
				want: []peerView{{"b", true, "256:0-9", "256:0-9", 25 * time.Second, false}}},
			// An older version from a lagging watch changes nothing.
			{at: 12, event: modified, lease: testLease("b", "u1", "9", "256:", "256:"), changed: false,
				want: []peerView{{"b", true, "256:0-9", "256:0-9", 25 * time.Second, false}}},
			{at: 24, want: []peerView{{"b", true, "256:0-9", "256:0-9", 25 * time.Second, false}}},
			{at: 25, want: nil},
		},
	}, {
		name: "a member that leaves publishes an empty claim: its deletion counts at once",
		steps: []step{
			{at: 0, list: []*object.Lease{testLease("b", "u1", "10", "256:0-9", "256:0-9")}, listRV: "10",
				want: []peerView{{"b", true, "256:0-9", "256:0-9", 15 * time.Second, false}}},
			{at: 1, event: modified, lease: testLease("b", "u1", "11", "256:", "256:"), changed: true,
				want: []peerView{{"b", true, "256:", "256:", 16 * time.Second, false}}},
			{at: 1, event: deletedEv, lease: testLease("b", "u1", "12", "256:", "256:"), changed: true, want: nil},
			// The list that follows agrees; a stale event does not bring it back.
			{at: 2, list: nil, listRV: "12", want: nil},
			{at: 2, event: modified, lease: testLease("b", "u1", "11", "256:", "256:"), changed: false, want: nil},
		},
	}, {
		name: "a Lease deleted with claims keeps them for a LeaseDuration after the deletion was seen",
		steps: []step{
			{at: 0, list: []*object.Lease{testLease("b", "u1", "10", "256:0-9", "256:0-9")}, listRV: "10",
				want: []peerView{{"b", true, "256:0-9", "256:0-9", 15 * time.Second, false}}},
			{at: 5, list: nil, listRV: "20",
				want: []peerView{{"b", false, "256:0-9", "256:0-9", 20 * time.Second, false}}},
			{at: 19, want: []peerView{{"b", false, "256:0-9", "256:0-9", 20 * time.Second, false}}},
			{at: 20, want: nil},
		},
	}, {
		name: "a Lease deleted after it expired leaves nothing behind",
		steps: []step{
			{at: 0, list: []*object.Lease{testLease("b", "u1", "10", "256:0-9", "256:0-9")}, listRV: "10",
				want: []peerView{{"b", true, "256:0-9", "256:0-9", 15 * time.Second, false}}},
			{at: 15, want: nil},
			// Collected by another member: the event's version is the deletion's.
			{at: 150, event: deletedEv, lease: testLease("b", "u1", "11", "256:0-9", "256:0-9"), changed: false, want: nil},
		},
	}, {
		name: "a Lease deleted after it expired, seen by a list, leaves nothing behind",
		steps: []step{
			{at: 0, list: []*object.Lease{testLease("b", "u1", "10", "256:0-9", "256:0-9")}, listRV: "10",
				want: []peerView{{"b", true, "256:0-9", "256:0-9", 15 * time.Second, false}}},
			{at: 150, list: nil, listRV: "12", want: nil},
			{at: 151, event: modified, lease: testLease("b", "u1", "10", "256:0-9", "256:0-9"), changed: false, want: nil},
		},
	}, {
		name: "a Lease renewed unseen just before its deletion keeps its claims",
		steps: []step{
			{at: 0, list: []*object.Lease{testLease("b", "u1", "10", "256:0-9", "256:0-9")}, listRV: "10",
				want: []peerView{{"b", true, "256:0-9", "256:0-9", 15 * time.Second, false}}},
			{at: 20, event: deletedEv, lease: renewed(testLease("b", "u1", "12", "256:0-9", "256:0-9"), 19), changed: true,
				want: []peerView{{"b", false, "256:0-9", "256:0-9", 35 * time.Second, false}}},
		},
	}, {
		name: "a Lease made anew by its member replaces what was left of the old one",
		steps: []step{
			{at: 0, list: []*object.Lease{testLease("b", "u1", "10", "256:0-9", "256:0-9")}, listRV: "10",
				want: []peerView{{"b", true, "256:0-9", "256:0-9", 15 * time.Second, false}}},
			{at: 1, event: deletedEv, lease: testLease("b", "u1", "11", "256:0-9", "256:0-9"), changed: true,
				want: []peerView{{"b", false, "256:0-9", "256:0-9", 16 * time.Second, false}}},
			{at: 2, event: added, lease: testLease("b", "u2", "12", "256:", "256:0-9"), changed: true,
				want: []peerView{{"b", true, "256:", "256:0-9", 17 * time.Second, false}}},
		},
	}, {
		name: "a list older than the watch does not drop what the watch showed",
		steps: []step{
			{at: 0, event: added, lease: testLease("b", "u1", "30", "256:", ""), changed: true,
				want: []peerView{{"b", true, "256:", "256:", 15 * time.Second, false}}},
			{at: 1, list: nil, listRV: "29", want: []peerView{{"b", true, "256:", "256:", 15 * time.Second, false}}},
		},
	}, {
		name: "claims that do not parse are taken as everything; another division is mapped",
		steps: []step{
			{at: 0, list: []*object.Lease{
				testLease("b", "u1", "10", "256:1,2", ""),
				testLease("c", "u2", "11", "16:1", "16:1"),
				testLease("d", "u3", "12", "-", ""),
			}, listRV: "12",
				want: []peerView{
					{"b", true, "256:0-255", "256:", 15 * time.Second, true},
					{"c", true, "256:16-31", "256:16-31", 15 * time.Second, false},
					{"d", true, "256:", "256:", 15 * time.Second, false},
				}},
		},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			v := newView(leaseName(group, "a"), buckets)
			for i, s := range tt.steps {
				now := sec(s.at)
				switch {
				case s.event == added || s.event == modified:
					if got := v.observe(s.lease, now, DefaultLeaseDuration); got != s.changed {
						t.Errorf("step %d: observe = %v, want %v", i, got, s.changed)
					}
				case s.event == deletedEv:
					if got := v.deleted(s.lease, now, DefaultLeaseDuration); got != s.changed {
						t.Errorf("step %d: deleted = %v, want %v", i, got, s.changed)
					}
				case s.listRV != "":
					v.observeList(s.list, s.listRV, now, DefaultLeaseDuration)
				}
				var got []peerView
				for _, p := range v.peers(now) {
					got = append(got, peerView{p.holder, p.live, p.acting.String(), p.target.String(), p.expiresAt.Sub(t0), p.actErr != nil})
				}
				if d := cmp.Diff(s.want, got); d != "" {
					t.Errorf("step %d at %ds (-want +got):\n%s", i, s.at, d)
				}
			}
			// Its own Lease is never a peer.
			if v.observe(testLease("a", "u9", "99", "256:0-255", ""), sec(0), DefaultLeaseDuration) {
				t.Error("observe reported a change for the member's own Lease")
			}
		})
	}
}

// renewed sets l's renewTime, on its holder's clock, s seconds after the epoch.
func renewed(l *object.Lease, s int) *object.Lease {
	l.Spec.RenewTime = ptr(object.NewMicroTime(epoch.Add(time.Duration(s) * time.Second)))
	return l
}

type listwatchEvent string

const (
	added     listwatchEvent = "ADDED"
	modified  listwatchEvent = "MODIFIED"
	deletedEv listwatchEvent = "DELETED"
)
