package reflector

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
)

// onlyNamespace is a shard by namespace that holds ns and, in all likelihood, no other
// namespace these tests use.
func onlyNamespace(ns string) shard.Selector {
	h := shard.Hash(ns)
	return shard.Selector{Field: shard.Namespace, Ranges: []shard.Range{{First: h, Last: h}}}
}

func nsPod(ns, name string) *object.Pod {
	return &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: "11"}}
}

// opStore logs what the reflector hands it.
type opStore struct {
	mu  sync.Mutex
	ops []string
}

func (s *opStore) log(format string, args ...any) {
	s.mu.Lock()
	s.ops = append(s.ops, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

func (s *opStore) Add(p *object.Pod)    { s.log("add %s", object.Key(p)) }
func (s *opStore) Update(p *object.Pod) { s.log("update %s", object.Key(p)) }
func (s *opStore) Delete(p *object.Pod) { s.log("delete %s", object.Key(p)) }
func (s *opStore) Replace(ps []*object.Pod, rv string) {
	s.log("replace %d at %s", len(ps), rv)
}

// bufferedStream delivers all its events even once closed, as a connection whose
// frames were already read does, and calls between before it hands out event i.
type bufferedStream struct {
	events  []listwatch.Event[*object.Pod]
	between map[int]func()
	next    int
	closed  chan struct{}
	once    sync.Once
}

func (s *bufferedStream) Next() (listwatch.Event[*object.Pod], error) {
	if f := s.between[s.next]; f != nil {
		f()
	}
	if s.next < len(s.events) {
		s.next++
		return s.events[s.next-1], nil
	}
	<-s.closed
	return listwatch.Event[*object.Pod]{}, listwatch.ErrFakeClosed
}

func (s *bufferedStream) Close() { s.once.Do(func() { close(s.closed) }) }

type streamSource struct{ stream listwatch.Stream[*object.Pod] }

func (s streamSource) List(context.Context, listwatch.ListOptions) (*object.List[*object.Pod], error) {
	return nil, errors.New("no list here")
}

func (s streamSource) Watch(context.Context, listwatch.WatchOptions) (listwatch.Stream[*object.Pod], error) {
	return s.stream, nil
}

// Events already on their way when SetShard returns, from a watch opened with the old
// shard, are filtered by the new one: one outside it is dropped (and, being inside the
// shard the watch asked for, is no sign that the server ignores selectors), one inside
// it is stored. Then the loop fetches the whole state with the new shard.
func TestSetShardFiltersEventsInFlight(t *testing.T) {
	stream := &bufferedStream{closed: make(chan struct{}), events: []listwatch.Event[*object.Pod]{
		{Type: listwatch.Added, Object: nsPod("keep", "a")},
		{Type: listwatch.Added, Object: nsPod("leave", "b")},
		{Type: listwatch.Modified, Object: nsPod("leave", "c")},
		{Type: listwatch.Deleted, Object: nsPod("keep", "d")},
	}}
	store := &opStore{}
	r := New[*object.Pod](streamSource{stream}, store, Options{Name: "pods", Clock: clock.NewFake(time.Unix(1000, 0))})
	r.storedGen, r.appliedGen = 0, 0 // a whole state (unsharded) is in the store
	var done <-chan struct{}
	stream.between = map[int]func(){1: func() {
		var err error
		if done, err = r.SetShard(onlyNamespace("keep")); err != nil {
			t.Error(err)
		}
	}}
	bo := backoffState{cfg: r.opts.Backoff}
	next := r.step(context.Background(), watching[*object.Pod]{}, &bo)

	if d := cmp.Diff([]string{"add keep/a", "delete keep/d"}, store.ops); d != "" {
		t.Errorf("the store (-want +got):\n%s", d)
	}
	if l, ok := next.(listing); !ok || !l.resharded {
		t.Errorf("next state %#v: want a list of the newest state with the new shard", next)
	}
	st := r.Status()
	if st.ShardDropped != 0 || st.ShardFiltering != ShardFilteringUnknown || st.Relists != 0 {
		t.Errorf("status %+v: want nothing counted as dropped, ShardFiltering Unknown, no relist", st)
	}
	if done == nil || isDone(done) {
		t.Error("the SetShard channel is closed before a list with the new shard")
	}
}

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// pager serves a two-page list and, answering the first page of the first list, runs
// during; it records the options of every page asked for.
type pager struct {
	during func()
	asked  []listwatch.ListOptions
}

func (p *pager) List(_ context.Context, opts listwatch.ListOptions) (*object.List[*object.Pod], error) {
	p.asked = append(p.asked, opts)
	if len(p.asked) == 1 && p.during != nil {
		p.during()
	}
	l := &object.List[*object.Pod]{ListMeta: object.ListMeta{ResourceVersion: "10"}}
	switch {
	case !opts.Shard.IsZero(): // one page, filtered
		l.ShardInfo = &object.ShardInfo{Selector: opts.Shard.String()}
		l.Items = []*object.Pod{nsPod("keep", "a")}
	case opts.Continue == "":
		l.Items, l.Continue = []*object.Pod{nsPod("keep", "a")}, "next"
	default:
		l.Items = []*object.Pod{nsPod("leave", "b")}
	}
	return l, nil
}

func (p *pager) Watch(context.Context, listwatch.WatchOptions) (listwatch.Stream[*object.Pod], error) {
	return nil, errors.New("no watch here")
}

// A list under way when the shard changes asks for no further page, stores nothing, and
// is followed by a list with the new shard, of the newest state, whose storing closes the
// channel.
func TestSetShardAbandonsAListBetweenPages(t *testing.T) {
	src := &pager{}
	store := &opStore{}
	r := New[*object.Pod](src, store, Options{Name: "pods", PageSize: 1, Clock: clock.NewFake(time.Unix(1000, 0))})
	keep := onlyNamespace("keep")
	var done <-chan struct{}
	src.during = func() {
		var err error
		if done, err = r.SetShard(keep); err != nil {
			t.Error(err)
		}
	}
	bo := backoffState{cfg: r.opts.Backoff}
	ctx := context.Background()
	next := r.step(ctx, listing{}, &bo)
	if l, ok := next.(listing); !ok || !l.resharded {
		t.Fatalf("next state %#v: want a list with the new shard", next)
	}
	if len(src.asked) != 1 || len(store.ops) != 0 || isDone(done) {
		t.Fatalf("%d pages asked for, store %v, channel closed %v: want one page, nothing stored, open", len(src.asked), store.ops, isDone(done))
	}
	if next = r.step(ctx, next, &bo); next != (watching[*object.Pod]{}) {
		t.Errorf("after the list with the new shard: %#v, want a watch", next)
	}
	if d := cmp.Diff([]string{"replace 1 at 10"}, store.ops); d != "" {
		t.Errorf("the store (-want +got):\n%s", d)
	}
	if got := src.asked[1]; got.Shard.String() != keep.String() || got.Continue != "" || got.ResourceVersion != "" || got.ResourceVersionMatch != "" {
		t.Errorf("the second list asked for shard %q, continue %q, resourceVersion %q (%q): want the new shard, from the start, the newest state",
			got.Shard.String(), got.Continue, got.ResourceVersion, got.ResourceVersionMatch)
	}
	if !isDone(done) {
		t.Error("the channel is still open once the new shard's list is stored")
	}
	if got := r.Status().ShardFiltering; got != ShardFilteringServer {
		t.Errorf("ShardFiltering %q after a list that echoed the new shard", got)
	}
}

// An Applier's store closes the SetShard channel when it has applied the Replace, not
// when it was handed it; a reflector that stops closes the channels still waiting.
func TestSetShardWaitsForTheApplier(t *testing.T) {
	src := &pager{}
	store := &applierStore{}
	r := New[*object.Pod](src, store, Options{Name: "pods", Clock: clock.NewFake(time.Unix(1000, 0))})
	done, err := r.SetShard(onlyNamespace("keep"))
	if err != nil {
		t.Fatal(err)
	}
	bo := backoffState{cfg: r.opts.Backoff}
	r.step(context.Background(), listing{}, &bo)
	if len(store.pending) != 1 || isDone(done) {
		t.Fatalf("%d functions handed to the Applier, channel closed %v: want one, open", len(store.pending), isDone(done))
	}
	again, _ := r.SetShard(onlyNamespace("keep"))
	if isDone(again) {
		t.Error("SetShard with the current shard, not applied yet, answered with a closed channel")
	}
	store.pending[0]()
	if !isDone(done) || !isDone(again) {
		t.Error("the channels are open once the Applier has applied the list")
	}
	if same, _ := r.SetShard(onlyNamespace("keep")); !isDone(same) {
		t.Error("SetShard with the current shard, applied, answered with an open channel")
	}

	waiting, _ := r.SetShard(onlyNamespace("other"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.Run(ctx)
	if !isDone(waiting) {
		t.Error("the channel still waits after Run returned")
	}
}

// applierStore keeps the functions AfterReplace is handed, for the test to call.
type applierStore struct {
	opStore
	pending []func()
}

func (s *applierStore) AfterReplace(f func()) { s.pending = append(s.pending, f) }
