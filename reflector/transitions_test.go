package reflector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
)

// scriptedSource answers a reflector's list and watch as a scenario says.
type scriptedSource struct {
	listErr  error
	listRV   string // the lists' resourceVersion ["10", the store's]
	watchErr error
	events   []listwatch.Event[*object.Pod] // what the watch delivers
	end      error                          // then how it ends (io.EOF: cleanly)
	hang     bool                           // or it delivers nothing more until closed
	// reshard, when set, runs as a list is answered, and as the watch has delivered its
	// events: the shard changes while the request is under way.
	reshard func()

	lists []listwatch.ListOptions // what each list asked for (on step's goroutine, read after it)
}

func (s *scriptedSource) List(_ context.Context, opts listwatch.ListOptions) (*object.List[*object.Pod], error) {
	s.lists = append(s.lists, opts)
	if s.listErr != nil {
		return nil, s.listErr
	}
	if s.reshard != nil {
		s.reshard()
	}
	rv := s.listRV
	if rv == "" {
		rv = "10"
	}
	return &object.List[*object.Pod]{ListMeta: object.ListMeta{ResourceVersion: rv}}, nil
}

func (s *scriptedSource) Watch(context.Context, listwatch.WatchOptions) (listwatch.Stream[*object.Pod], error) {
	if s.watchErr != nil {
		return nil, s.watchErr
	}
	st := &scriptStream{events: s.events, end: s.end, closed: make(chan struct{}), idle: s.reshard}
	if !s.hang {
		st.Close()
	}
	return st, nil
}

// scriptStream delivers its events, then ends with end once it is closed (at once,
// unless the script hangs).
type scriptStream struct {
	events []listwatch.Event[*object.Pod]
	end    error
	once   sync.Once
	closed chan struct{}
	idle   func() // runs once, when the events are all delivered
}

func (s *scriptStream) Next() (listwatch.Event[*object.Pod], error) {
	if len(s.events) == 0 {
		if idle := s.idle; idle != nil {
			s.idle = nil
			idle()
		}
		<-s.closed
		return listwatch.Event[*object.Pod]{}, s.end
	}
	ev := s.events[0]
	s.events = s.events[1:]
	return ev, nil
}

func (s *scriptStream) Close() { s.once.Do(func() { close(s.closed) }) }

func podEvent(t listwatch.EventType, rv string) listwatch.Event[*object.Pod] {
	return listwatch.Event[*object.Pod]{Type: t, Object: &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: "ns", Name: "p", ResourceVersion: rv}}}
}

func initialEventsEnd(rv string) listwatch.Event[*object.Pod] {
	ev := podEvent(listwatch.Bookmark, rv)
	ev.Object.Annotations = map[string]string{listwatch.InitialEventsEndAnnotation: "true"}
	return ev
}

// countStore takes what the reflector hands it, and counts the Replaces and the
// ReplaceWithins.
type countStore struct{ replaces, scoped int }

func (*countStore) Add(*object.Pod)                 {}
func (*countStore) Update(*object.Pod)              {}
func (*countStore) Delete(*object.Pod)              {}
func (s *countStore) Replace([]*object.Pod, string) { s.replaces++ }
func (s *countStore) ReplaceWithin(func(*object.Pod) bool, []*object.Pod, string) {
	s.scoped++
}

// The shards of the scenarios, by namespace but the last: a quarter of the space, the
// half that holds it (otherShard, which a SetShard under way switches to), three
// quarters that hold both, and a half of the uid space.
var (
	quarterShard      = shard.Selector{Field: shard.Namespace, Ranges: []shard.Range{{First: 0, Last: 1<<62 - 1}}}
	otherShard        = shard.Selector{Field: shard.Namespace, Ranges: []shard.Range{{First: 0, Last: 1<<63 - 1}}}
	threeQuarterShard = shard.Selector{Field: shard.Namespace, Ranges: []shard.Range{{First: 0, Last: 3<<62 - 1}}}
	uidShard          = shard.Selector{Field: shard.UID, Ranges: []shard.Range{{First: 0, Last: 1<<63 - 1}}}
)

// scenario is one row's event: the state it starts from, what the server does, and
// optionally what else must hold of the reflector or the state that follows.
type scenario struct {
	from      state
	source    scriptedSource
	streaming bool // Options.StreamingList
	cancelled bool // ctx has ended
	// shard is Options.Shard: the store holds its whole state at resourceVersion 10.
	shard shard.Selector
	// grown, when set, is SetShard's before the step: the shard the loop moves to.
	grown shard.Selector
	// reshard, when set, is SetShard's while the request is under way (source.reshard).
	reshard shard.Selector
	check   func(t *testing.T, r *Reflector[*object.Pod], next state, bo *backoffState)
}

var (
	errReset = errors.New("read: connection reset by peer")
	errGone  = object.NewExpired("too old resource version: 1 (5)")
)

// scenarios are keyed by the event's words in the package doc's table.
func scenarios() map[string]scenario {
	return map[string]scenario{
		"the list is stored": {from: listing{}},
		"the list fails":     {from: listing{}, source: scriptedSource{listErr: object.NewStatusError(http.StatusInternalServerError, "", "boom")}},
		"the shard changes before the list is stored": {from: listing{}, reshard: otherShard,
			check: func(t *testing.T, r *Reflector[*object.Pod], next state, bo *backoffState) {
				refetched(t, r, next, bo)
				if l, ok := next.(listing); !ok || !l.resharded {
					t.Errorf("next state %#v: want a list of the newest state", next)
				}
			}},
		"the initial-events-end bookmark arrives": {from: streamingList{}, streaming: true,
			source: scriptedSource{events: []listwatch.Event[*object.Pod]{podEvent(listwatch.Added, "5"), initialEventsEnd("10")}, end: io.EOF},
			check: func(t *testing.T, _ *Reflector[*object.Pod], next state, _ *backoffState) {
				if w, ok := next.(watching[*object.Pod]); !ok || w.open == nil {
					t.Errorf("next state %#v: want the streaming list's stream, still open", next)
				}
			}},
		"the server refuses or ignores the request": {from: streamingList{}, streaming: true,
			source: scriptedSource{events: []listwatch.Event[*object.Pod]{podEvent(listwatch.Modified, "5")}, end: io.EOF},
			check:  fellBack},
		"no initial-events-end bookmark in time": {from: streamingList{}, streaming: true,
			source: scriptedSource{events: []listwatch.Event[*object.Pod]{podEvent(listwatch.Added, "5")}, end: listwatch.ErrFakeClosed, hang: true},
			check:  fellBack},
		"the stream fails": {from: streamingList{}, streaming: true, source: scriptedSource{watchErr: errReset}},
		"the shard changes before the bookmark": {from: streamingList{}, streaming: true, reshard: otherShard,
			source: scriptedSource{events: []listwatch.Event[*object.Pod]{podEvent(listwatch.Added, "5")}, end: listwatch.ErrFakeClosed, hang: true},
			check:  refetched},
		"the server ends the stream on time": {from: watching[*object.Pod]{},
			source: scriptedSource{events: []listwatch.Event[*object.Pod]{podEvent(listwatch.Modified, "11")}, end: io.EOF}},
		"410 Gone, too large a resourceVersion": {from: watching[*object.Pod]{}, source: scriptedSource{end: errGone},
			check: func(t *testing.T, r *Reflector[*object.Pod], next state, _ *backoffState) {
				if l, ok := next.(listing); !ok || !l.relist || r.Status().Relists != 1 {
					t.Errorf("next state %#v with %d relists: want a relist, counted", next, r.Status().Relists)
				}
			}},
		"an event over MaxFrameSize": {from: watching[*object.Pod]{},
			source: scriptedSource{end: &listwatch.FrameError{Reason: "too large", Err: listwatch.ErrFrameTooLarge}}},
		"a stream that worked breaks": {from: watching[*object.Pod]{},
			source: scriptedSource{events: []listwatch.Event[*object.Pod]{podEvent(listwatch.Modified, "11")}, end: errReset},
			check: func(t *testing.T, _ *Reflector[*object.Pod], _ state, bo *backoffState) {
				if bo.current != 0 {
					t.Errorf("the backoff did not start over: %v", bo.current)
				}
			}},
		"any other failure": {from: watching[*object.Pod]{}, source: scriptedSource{end: errReset}},
		"the shard shrinks": {from: watching[*object.Pod]{}, shard: otherShard, reshard: quarterShard,
			source: scriptedSource{events: []listwatch.Event[*object.Pod]{podEvent(listwatch.Modified, "11")}, end: io.EOF, hang: true},
			check: func(t *testing.T, r *Reflector[*object.Pod], _ state, _ *backoffState) {
				noRequestButTheWatch(t, r)
				if st := r.store.(*countStore); st.scoped != 1 || st.replaces != 0 {
					t.Errorf("%d ReplaceWithins and %d Replaces: want the part lost dropped, alone", st.scoped, st.replaces)
				}
				holdsCurrentShard(t, r)
			}},
		"the shard grows": {from: watching[*object.Pod]{}, shard: quarterShard, reshard: otherShard,
			source: scriptedSource{events: []listwatch.Event[*object.Pod]{podEvent(listwatch.Modified, "11")}, end: io.EOF, hang: true},
			check: func(t *testing.T, r *Reflector[*object.Pod], _ state, _ *backoffState) {
				noRequestButTheWatch(t, r)
				if st := r.store.(*countStore); st.scoped != 0 || st.replaces != 0 {
					t.Errorf("%d ReplaceWithins and %d Replaces: nothing to store before the part gained is listed", st.scoped, st.replaces)
				}
			}},
		"the shard moves to another field": {from: watching[*object.Pod]{}, shard: uidShard, reshard: otherShard,
			source: scriptedSource{events: []listwatch.Event[*object.Pod]{podEvent(listwatch.Modified, "11")}, end: io.EOF, hang: true},
			check: func(t *testing.T, r *Reflector[*object.Pod], next state, bo *backoffState) {
				refetched(t, r, next, bo)
				if l, ok := next.(listing); !ok || !l.resharded {
					t.Errorf("next state %#v: want a list of the newest state", next)
				}
			}},
		"the part gained is stored": {from: listingAdded{}, shard: quarterShard, grown: otherShard,
			source: scriptedSource{listRV: "12"}, // newer than the store's 10
			check: func(t *testing.T, r *Reflector[*object.Pod], _ state, _ *backoffState) {
				askedForThePartGained(t, r)
				if st := r.store.(*countStore); st.scoped != 1 || st.replaces != 0 {
					t.Errorf("%d ReplaceWithins and %d Replaces: want the part gained merged, alone", st.scoped, st.replaces)
				}
				holdsCurrentShard(t, r)
				if st := r.Status(); st.ShardFiltering != ShardFilteringClient || st.Relists != 0 || st.LastError != nil {
					t.Errorf("status %+v: want the list without shardInfo judged, no relist, no error", st)
				}
				// The watch resumes from the rest's position, the part's events up to 12
				// dropped, and a relist would ask for at least 12.
				if rv, rel := r.LastSyncResourceVersion(), r.relistRV(); rv != "10" || len(r.fresh) != 1 || r.fresh[0].rv != "12" || rel != "12" {
					t.Errorf("resourceVersion %s, fresh parts %+v, relist at %s: want 10, the part at 12, 12", rv, r.fresh, rel)
				}
			}},
		"the server refuses the list of the part": {from: listingAdded{}, shard: quarterShard, grown: otherShard,
			source: scriptedSource{listErr: object.NewStatusError(http.StatusUnprocessableEntity, object.ReasonInvalid, "no")},
			check: func(t *testing.T, r *Reflector[*object.Pod], next state, bo *backoffState) {
				askedForThePartGained(t, r)
				refetched(t, r, next, bo)
				if l, ok := next.(listing); !ok || !l.resharded {
					t.Errorf("next state %#v: want a list of the newest state", next)
				}
			}},
		"the list of the part fails": {from: listingAdded{}, shard: quarterShard, grown: otherShard,
			source: scriptedSource{listErr: object.NewStatusError(http.StatusInternalServerError, "", "boom")}},
		"the shard changes before the part is stored": {from: listingAdded{}, shard: quarterShard, grown: otherShard,
			reshard: threeQuarterShard,
			check: func(t *testing.T, r *Reflector[*object.Pod], _ state, _ *backoffState) {
				askedForThePartGained(t, r)
				if st := r.store.(*countStore); st.scoped != 0 || st.replaces != 0 {
					t.Errorf("%d ReplaceWithins and %d Replaces: a part listed for a shard no longer current was stored", st.scoped, st.replaces)
				}
			}},
		"the wait is over": {from: backingOff{err: errReset, then: listing{relist: true}}},
		"ctx ends":         {from: watching[*object.Pod]{}, cancelled: true},
	}
}

// refetched checks what follows a SetShard under way: nothing of the old shard is
// stored, no relist is counted (nothing failed), no error, the streaming list is not
// given up, and who filters is to be told again.
func refetched(t *testing.T, r *Reflector[*object.Pod], _ state, _ *backoffState) {
	t.Helper()
	st := r.Status()
	if st.Relists != 0 || st.LastError != nil || st.StreamingFallback || st.ShardFiltering != ShardFilteringUnknown {
		t.Errorf("status %+v: want no relist, no error, no fallback, ShardFiltering Unknown", st)
	}
	if s := r.store.(*countStore); s.replaces != 0 || s.scoped != 0 {
		t.Error("a state fetched with the old shard was stored")
	}
}

// noRequestButTheWatch checks that a shard change under a watch listed nothing.
func noRequestButTheWatch(t *testing.T, r *Reflector[*object.Pod]) {
	t.Helper()
	if lists := r.lw.(*scriptedSource).lists; len(lists) != 0 {
		t.Errorf("%d lists: want none", len(lists))
	}
}

// askedForThePartGained checks that the one list asked for the part of otherShard
// outside quarterShard, fresh: at resourceVersion "", with no resourceVersionMatch.
func askedForThePartGained(t *testing.T, r *Reflector[*object.Pod]) {
	t.Helper()
	part := shard.Selector{Field: shard.Namespace, Ranges: []shard.Range{{First: 1 << 62, Last: 1<<63 - 1}}}
	var got []string
	for _, o := range r.lw.(*scriptedSource).lists {
		got = append(got, fmt.Sprintf("%s rv=%s match=%s limit=%d", o.Shard, o.ResourceVersion, o.ResourceVersionMatch, o.Limit))
	}
	if d := cmp.Diff([]string{fmt.Sprintf("%s rv= match= limit=500", part)}, got); d != "" {
		t.Errorf("lists (-want +got):\n%s", d)
	}
}

// holdsCurrentShard checks that the store holds the current shard, whose SetShard
// channel is closed.
func holdsCurrentShard(t *testing.T, r *Reflector[*object.Pod]) {
	t.Helper()
	sh := r.shard.Load()
	if r.storedGen != sh.gen || r.appliedGen != sh.gen || !cmp.Equal(r.held, spanOf(sh.sel), cmp.AllowUnexported(span{})) {
		t.Errorf("the store holds %+v of generation %d (applied %d); want the current shard, generation %d", r.held, r.storedGen, r.appliedGen, sh.gen)
	}
}

func fellBack(t *testing.T, r *Reflector[*object.Pod], _ state, _ *backoffState) {
	if !r.Status().StreamingFallback {
		t.Error("the streaming list was not given up for good")
	}
	if s := r.fetchWhole(listing{relist: true}); s != (listing{relist: true}) {
		t.Errorf("a later relist would be %#v, not a list", s)
	}
}

// describe names where step led: a state, a backoff and the state after it, or Stopped.
func describe(s state, from state) string {
	switch s := s.(type) {
	case nil:
		return string(StateStopped)
	case backingOff:
		return string(StateBackingOff) + " → " + string(s.then.name())
	}
	if b, ok := from.(backingOff); ok && s == b.then {
		return "the state that failed"
	}
	return string(s.name())
}

// transitionRow is a row of the package doc's table: "From  event  → To (remark)".
var transitionRow = regexp.MustCompile(`^//\t(any state|\S+)\s{2,}(.+?)\s+→ (.+)$`)

// TestTransitions runs every row of the package doc's transition table against step, so
// the documentation and the code cannot drift apart: a row without a scenario, a
// scenario without a row, or a step that leads elsewhere fails.
func TestTransitions(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	all := scenarios()
	seen := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		m := transitionRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		from, event, to := m[1], m[2], strings.TrimSpace(regexp.MustCompile(`\s*\(.*\)$`).ReplaceAllString(m[3], ""))
		seen[event] = true
		t.Run(event, func(t *testing.T) {
			sc, ok := all[event]
			if !ok {
				t.Fatalf("the doc's row %q has no scenario here", event)
			}
			if from != "any state" && string(sc.from.name()) != from {
				t.Fatalf("the scenario starts in %s, the row in %s", sc.from.name(), from)
			}
			clk := clock.NewFake(time.Unix(1000, 0))
			var r *Reflector[*object.Pod]
			if !sc.reshard.IsZero() {
				sc.source.reshard = func() {
					if _, err := r.SetShard(sc.reshard); err != nil {
						t.Error(err)
					}
				}
			}
			r = New[*object.Pod](&sc.source, &countStore{}, Options{Name: "pods", Clock: clk, StreamingList: sc.streaming,
				Backoff: Backoff{Initial: time.Second, Jitter: -1}, Shard: sc.shard})
			// Whatever the state, the loop got there with a whole state of the shard in the
			// store at resourceVersion 10, as every Watching needs.
			r.storedGen, r.appliedGen, r.held = 0, 0, spanOf(sc.shard)
			r.recordRV("10")
			if !sc.grown.IsZero() {
				if _, err := r.SetShard(sc.grown); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if sc.cancelled {
				cancel()
			}
			bo := backoffState{cfg: r.opts.Backoff, current: 4 * time.Second}
			stepped := make(chan state, 1)
			go func() { stepped <- r.step(ctx, sc.from, &bo) }()
			var next state
			for done := false; !done; {
				select {
				case next = <-stepped:
					done = true
				case <-time.After(10 * time.Millisecond):
					clk.Step(time.Minute) // a backoff or a timeout under way: let it pass
				}
			}
			if got := describe(next, sc.from); got != to {
				t.Errorf("from %s on %q: %s, the doc says %s", sc.from.name(), event, got, to)
			}
			if sc.check != nil {
				sc.check(t, r, next, &bo)
			}
		})
	}
	var unlisted []string
	for event := range all {
		if !seen[event] {
			unlisted = append(unlisted, event)
		}
	}
	if d := cmp.Diff([]string(nil), unlisted); d != "" {
		t.Errorf("scenarios the doc's table does not list:\n%s", d)
	}
}
