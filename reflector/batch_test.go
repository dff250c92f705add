package reflector_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
)

// batchStore is a logStore that is a reflector.Batcher.
type batchStore struct{ logStore }

func (s *batchStore) Hold()    { s.rec("hold") }
func (s *batchStore) Release() { s.rec("release") }

// scripted is a stream of events, each saying whether another one is already there.
type scripted struct {
	ctx      context.Context
	events   []listwatch.Event[*object.Pod]
	buffered []bool
	i        int
}

func (s *scripted) Next() (listwatch.Event[*object.Pod], error) {
	if s.i == len(s.events) {
		<-s.ctx.Done()
		return listwatch.Event[*object.Pod]{}, s.ctx.Err()
	}
	s.i++
	return s.events[s.i-1], nil
}

func (s *scripted) Buffered() bool { return s.i < len(s.events) && s.buffered[s.i-1] }
func (s *scripted) Close()         {}

type scriptedLW struct{ stream *scripted }

func (l *scriptedLW) List(context.Context, listwatch.ListOptions) (*object.List[*object.Pod], error) {
	return &object.List[*object.Pod]{ListMeta: object.ListMeta{ResourceVersion: "1"}}, nil
}

func (l *scriptedLW) Watch(ctx context.Context, _ listwatch.WatchOptions) (listwatch.Stream[*object.Pod], error) {
	l.stream.ctx = ctx
	return l.stream, nil
}

// Events that arrived together reach a Batcher store between Hold and Release, at most
// 64 per hold; an event alone is handed over unheld.
func TestEventsThatArriveTogetherAreHandedOverHeld(t *testing.T) {
	leakcheck.Check(t)
	s := &scripted{}
	// 70 events in one read, then one alone, then two together.
	for i := range 73 {
		rv := fmt.Sprint(2 + i)
		s.events = append(s.events, listwatch.Event[*object.Pod]{Type: listwatch.Added,
			Object: &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: "ns", Name: "p" + rv, ResourceVersion: rv}}})
		s.buffered = append(s.buffered, i < 69 || i == 71)
	}
	store := &batchStore{}
	r := reflector.New[*object.Pod](&scriptedLW{stream: s}, store, reflector.Options{Name: "pods"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	testwait.Eventually(t, 10*time.Second, func() bool { return store.has("add p74") }, "waiting for the last event")
	store.mu.Lock()
	got := slices.Clone(store.log)
	store.mu.Unlock()
	var want []string
	want = append(want, "replace 0", "hold")
	for i := range 64 {
		want = append(want, fmt.Sprintf("add p%d", 2+i))
	}
	want = append(want, "release", "hold")
	for i := 64; i < 70; i++ {
		want = append(want, fmt.Sprintf("add p%d", 2+i))
	}
	want = append(want, "release", "add p72", "hold", "add p73", "add p74", "release")
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("store calls (-want +got):\n%s", d)
	}
}
