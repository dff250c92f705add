package events

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/simtest"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// run starts a recorder on a simulator with a settable clock and returns it, a stop
// function that flushes it, and a handle to read the events written.
func run(t *testing.T, opts Options) (*Recorder, func(), *listwatch.Resource[*Event], *time.Time) {
	t.Helper()
	_, c := simtest.Start(t, apisim.Options{})
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	opts.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	r, err := NewRecorder(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	info, _ := c.Discover(context.Background(), "events")
	return r, stop, listwatch.For[*Event](c, info, "ns"), &now
}

func list(t *testing.T, evs *listwatch.Resource[*Event]) []*Event {
	t.Helper()
	l, err := evs.List(context.Background(), listwatch.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

var rs = Ref{APIVersion: "apps/v1", Kind: "ReplicaSet", Meta: &object.ObjectMeta{Namespace: "ns", Name: "web", UID: "u1", ResourceVersion: "5"}}

func TestRepeatsAreAggregated(t *testing.T) {
	r, stop, evs, _ := run(t, Options{Component: "replicaset-controller", Host: "h1"})
	for range 3 {
		r.Eventf(rs, Warning, "FailedCreate", "Error creating: %s", "quota exceeded")
	}
	r.Eventf(rs, Normal, "SuccessfulCreate", "Created pod: %s", "web-a")
	stop() // flushes the queue
	type row struct {
		Reason, Message, Type, Kind, Name, UID, Component string
		Count                                             int32
	}
	var got []row
	for _, e := range list(t, evs) {
		got = append(got, row{e.Reason, e.Message, e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.InvolvedObject.UID, e.Source.Component, e.Count})
	}
	want := []row{
		{"FailedCreate", "Error creating: quota exceeded", Warning, "ReplicaSet", "web", "u1", "replicaset-controller", 3},
		{"SuccessfulCreate", "Created pod: web-a", Normal, "ReplicaSet", "web", "u1", "replicaset-controller", 1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

func TestEachObjectIsRateLimited(t *testing.T) {
	r, stop, evs, _ := run(t, Options{Burst: 3, Refill: time.Hour})
	for i := range 10 {
		r.Eventf(rs, Normal, "SuccessfulCreate", "Created pod: web-%d", i)
	}
	other := Ref{Kind: "ReplicaSet", Meta: &object.ObjectMeta{Namespace: "ns", Name: "db", UID: "u2"}}
	r.Eventf(other, Normal, "SuccessfulCreate", "Created pod: db-0")
	stop()
	if n := len(list(t, evs)); n != 4 {
		t.Errorf("%d events written, want the burst of 3 for one object and 1 for the other", n)
	}
	if r.Dropped() != 7 {
		t.Errorf("dropped %d, want 7", r.Dropped())
	}
}

// A controller goes on writing its object after recording an event about it (the
// Deployment controller writes the revision): the event names the object as it was when
// recorded, and reading it later races with nothing (run with -race).
func TestTheEventKeepsTheObjectAsRecorded(t *testing.T) {
	r, stop, evs, _ := run(t, Options{})
	meta := *rs.Meta
	ref := Ref{APIVersion: rs.APIVersion, Kind: rs.Kind, Meta: &meta}
	r.Eventf(ref, Normal, "ScalingReplicaSet", "Scaled up")
	meta.ResourceVersion = "6"
	stop()
	got := list(t, evs)
	if len(got) != 1 {
		t.Fatalf("events: %d, want 1", len(got))
	}
	want := ObjectReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "ns", Name: "web", UID: "u1", ResourceVersion: "5"}
	if d := cmp.Diff(want, got[0].InvolvedObject); d != "" {
		t.Errorf("involved object (-want +got):\n%s", d)
	}
}
