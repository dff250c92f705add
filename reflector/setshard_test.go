package reflector_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
	"github.com/kinformer/kinformer/shard"
)

// These tests change the shard of a running reflector between a quarter and a half of
// the uid space (the half holds the quarter), over the pods of namespace "ns".
var (
	lowerQuarter = shard.Selector{Field: shard.UID, Ranges: []shard.Range{{First: 0, Last: 1<<62 - 1}}}
	lowerHalf    = lowerUIDs
)

// podBook records the pods a test created: their uids by name, and the newest
// resourceVersion. It is safe for concurrent use.
type podBook struct {
	mu     sync.Mutex
	uids   map[string]string
	rvs    map[string]string // the resourceVersion each pod was created at
	lastRV string
}

func newPodBook() *podBook { return &podBook{uids: map[string]string{}, rvs: map[string]string{}} }

func (b *podBook) create(f *fixture, name string) error {
	p, err := f.pods.Create(context.Background(), &object.Pod{ObjectMeta: object.ObjectMeta{Name: name}})
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.uids[name], b.rvs[name], b.lastRV = p.UID, p.ResourceVersion, p.ResourceVersion
	b.mu.Unlock()
	return nil
}

func (b *podBook) createAll(t *testing.T, f *fixture, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := b.create(f, n); err != nil {
			t.Fatal(err)
		}
	}
}

// createIn creates pods prefix0, prefix1… until one is in sel, so that a watch the
// server filters sees the newest resourceVersion.
func (b *podBook) createIn(t *testing.T, f *fixture, sel shard.Selector, prefix string) {
	t.Helper()
	for i := 0; ; i++ {
		name := fmt.Sprint(prefix, i)
		b.createAll(t, f, name)
		b.mu.Lock()
		in := sel.Matches(b.uids[name])
		b.mu.Unlock()
		if in {
			return
		}
	}
}

// selected is the names of the pods created so far that sel selects, sorted.
func (b *podBook) selected(sel shard.Selector) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for name, uid := range b.uids {
		if sel.Matches(uid) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// selectedAt is the names of the pods sel selects that were created at rv or before,
// sorted: the shard as it was at rv (pods are only created).
func (b *podBook) selectedAt(sel shard.Selector, rv string) []string {
	var out []string
	for _, name := range b.selected(sel) {
		b.mu.Lock()
		created := b.rvs[name]
		b.mu.Unlock()
		if c, err := object.CompareResourceVersion(created, rv); err == nil && c <= 0 {
			out = append(out, name)
		}
	}
	return out
}

// newest is the newest resourceVersion the pods names were created at.
func (b *podBook) newest(names []string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := ""
	for _, n := range names {
		if c, err := object.CompareResourceVersion(b.rvs[n], out); out == "" || err == nil && c > 0 {
			out = b.rvs[n]
		}
	}
	return out
}

func (b *podBook) rv() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lastRV
}

// churn creates pods (prefix0, prefix1, …) until the returned function is called, which
// waits for the last create to return: events keep arriving while the shard changes.
func (b *podBook) churn(t *testing.T, f *fixture, prefix string) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			if err := b.create(f, fmt.Sprint(prefix, i)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { close(done); <-stopped }) }
	t.Cleanup(stop) // a test that fails first stops it too
	return stop
}

// guardStore keeps the pods by name and, once guard is set, notes every pod handed to it
// (added, updated or in a Replace) outside guard's shard.
type guardStore struct {
	mu         sync.Mutex
	objs       map[string]*object.Pod
	guard      *shard.Selector
	outside    []string
	scoped     int      // ReplaceWithin calls
	outOfScope []string // pods a ReplaceWithin was handed outside its scope
}

func newGuardStore() *guardStore { return &guardStore{objs: map[string]*object.Pod{}} }

func (s *guardStore) check(p *object.Pod) {
	if s.guard != nil && !s.guard.Matches(p.UID) {
		s.outside = append(s.outside, p.Name)
	}
}

func (s *guardStore) Add(p *object.Pod) { s.Update(p) }
func (s *guardStore) Update(p *object.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.check(p)
	s.objs[p.Name] = p
}

func (s *guardStore) Delete(p *object.Pod) { s.mu.Lock(); delete(s.objs, p.Name); s.mu.Unlock() }

func (s *guardStore) Replace(ps []*object.Pod, _ string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objs = map[string]*object.Pod{}
	for _, p := range ps {
		s.check(p)
		s.objs[p.Name] = p
	}
}

// ReplaceWithin makes guardStore a reflector.ScopedReplacer: a shard change costs the
// difference.
func (s *guardStore) ReplaceWithin(scope func(*object.Pod) bool, ps []*object.Pod, _ string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scoped++
	maps.DeleteFunc(s.objs, func(_ string, p *object.Pod) bool { return scope(p) })
	for _, p := range ps {
		if !scope(p) {
			s.outOfScope = append(s.outOfScope, p.Name)
		}
		s.check(p)
		s.objs[p.Name] = p
	}
}

func (s *guardStore) setGuard(sel shard.Selector) { s.mu.Lock(); s.guard = &sel; s.mu.Unlock() }

func (s *guardStore) names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.objs))
}

func (s *guardStore) strays() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append(slices.Clone(s.outside), s.outOfScope...)
}

// following waits until r watches and has followed the server to rv.
func following(t *testing.T, r *reflector.Reflector[*object.Pod], rv string) {
	t.Helper()
	testwait.Eventually(t, 10*time.Second, func() bool {
		c, err := object.CompareResourceVersion(r.LastSyncResourceVersion(), rv)
		return err == nil && c >= 0 && r.Status().State == reflector.StateWatching
	}, "waiting for the reflector to reach resourceVersion %s; status %+v", rv, testwait.Lazy(func() any { return r.Status() }))
}

// awaitShard waits for a SetShard channel.
func awaitShard(t *testing.T, done <-chan struct{}, r *reflector.Reflector[*object.Pod]) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("the shard was never applied; status %+v", r.Status())
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// A running reflector's shard grows and shrinks while pods are created. Once SetShard
// returns nothing outside the new shard reaches the store, even from events already on
// their way; its channel is closed only once the store holds the new shard: the part it
// kept as of the resourceVersion the store was at, from which the watch resumes, and the
// part it gained as of a fresh list (every pod created there before the call); the pods
// that left are gone. A growth lists the part gained alone, fresh, a shrink lists
// nothing. Whether the server filters or not, with streaming lists or without.
func TestSetShardWhileRunning(t *testing.T) {
	type change struct {
		name     string
		from, to shard.Selector
	}
	for _, ch := range []change{{"grow", lowerQuarter, lowerHalf}, {"shrink", lowerHalf, lowerQuarter}} {
		for _, ignore := range []bool{false, true} {
			for _, streaming := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/server ignores the selector=%v/streaming=%v", ch.name, ignore, streaming), func(t *testing.T) {
					testSetShardWhileRunning(t, ch.from, ch.to, ignore, streaming)
				})
			}
		}
	}
}

func testSetShardWhileRunning(t *testing.T, from, to shard.Selector, ignore, streaming bool) {
	f := newFixture(t, 0)
	f.sim.Faults().IgnoreShardSelector(ignore)
	book := newPodBook()
	book.createAll(t, f, seq("p", 24)...)
	// FNV-1a spreads uids less evenly than chance over the top bits: a few more pods
	// when the 24 miss one of the parts.
	for i := 0; ; i++ {
		q, h := len(book.selected(lowerQuarter)), len(book.selected(lowerHalf))
		if q > 0 && q < h && h < 24+i {
			break
		}
		if i == 100 {
			t.Fatalf("the uids do not straddle the quarter and the half: %d in the quarter, %d in the half, of %d", q, h, 24+i)
		}
		book.createAll(t, f, fmt.Sprint("x", i))
	}
	store := newGuardStore()
	r := f.run(t, store, reflector.Options{Name: "pods", Shard: from, StreamingList: streaming})
	following(t, r, book.rv())
	if d := cmp.Diff(book.selected(from), store.names()); d != "" {
		t.Fatalf("before SetShard, the store (-in the shard +stored):\n%s", d)
	}

	stop := book.churn(t, f, "churn")
	mark := len(f.log.snapshot())
	before := book.rv() // every pod created before the call is at most this one
	done, err := r.SetShard(to)
	if err != nil {
		t.Fatal(err)
	}
	store.setGuard(to)
	awaitShard(t, done, r)
	atClose := store.names()
	// At the close, the store holds the part kept as it was at the resourceVersion the
	// watch after the call resumes from (a shrink closes the channel before that watch is
	// asked for), and the part gained as a list after the call saw it.
	var at string
	testwait.Eventually(t, 10*time.Second, func() bool {
		_, watches := splitRequests(f.log.snapshot()[mark:])
		if len(watches) > 0 {
			at = watches[0].Get("resourceVersion")
		}
		return at != ""
	}, "waiting for the watch after SetShard")
	held := book.selectedAt(to, at)
	if gained := partOf(to, from); len(gained.Ranges) > 0 {
		held = append(setMinus(held, book.selected(gained)), book.selectedAt(gained, before)...)
	}
	if missing := setMinus(held, atClose); len(missing) > 0 {
		t.Errorf("the channel closed with pods of the new shard missing from the store (the part kept at %s, the part gained at %s): %v", at, before, missing)
	}
	stop()
	book.createIn(t, f, to, "last")
	following(t, r, book.rv())
	if d := cmp.Diff(book.selected(to), store.names()); d != "" {
		t.Errorf("after SetShard, the store (-in the new shard +stored):\n%s", d)
	}
	if s := store.strays(); len(s) > 0 {
		t.Errorf("pods outside the new shard stored after SetShard returned: %v", s)
	}

	st := r.Status()
	want := reflector.ShardFilteringServer
	switch {
	case ignore:
		want = reflector.ShardFilteringClient
	case streaming:
		// A streaming list never tells, a shrink lists nothing, and the list of the part
		// a growth gained does.
		want = reflector.ShardFilteringUnknown
		if len(shard.Without(to.Ranges, from.Ranges)) > 0 {
			want = reflector.ShardFilteringServer
		}
	}
	if st.ShardFiltering != want || st.Relists != 0 || st.LastError != nil || st.StreamingFallback {
		t.Errorf("status %+v: want ShardFiltering %s, no relist counted, no error, no fallback", st, want)
	}
	if !ignore && st.ShardDropped != 0 {
		t.Errorf("%d dropped while the server filters: the events of the part the shard lost are no fault", st.ShardDropped)
	}
	// The requests after the change cost the difference: a growth lists the part gained
	// alone, fresh, a shrink lists nothing; the watches ask for the new shard.
	var fetches []map[string]string
	lastWatch := ""
	for _, req := range f.log.snapshot()[mark:] {
		switch q := req.query; {
		case !req.watch() || q.Get("sendInitialEvents") == "true":
			fetches = append(fetches, pick(q, "shardSelector", "resourceVersionMatch", "sendInitialEvents"))
		default:
			lastWatch = q.Get("shardSelector")
		}
	}
	var wantFetches []map[string]string
	if gained := shard.Without(to.Ranges, from.Ranges); len(gained) > 0 {
		wantFetches = append(wantFetches, map[string]string{"shardSelector": shard.Selector{Field: to.Field, Ranges: gained}.String()})
	}
	if d := cmp.Diff(wantFetches, fetches); d != "" {
		t.Errorf("the lists after SetShard (-want +got):\n%s", d)
	}
	if lastWatch != to.String() {
		t.Errorf("the last watch asked for %q; want the new shard %q", lastWatch, to.String())
	}
}

// setMinus is the elements of a (sorted) not in b.
func setMinus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// SetShard with the shard already current, however it is written, changes nothing: its
// channel is closed at once, and the watch goes on without a list.
func TestSetShardSameSelectorIsANoOp(t *testing.T) {
	f := newFixture(t, 0)
	book := newPodBook()
	book.createAll(t, f, seq("p", 6)...)
	store := newGuardStore()
	r := f.run(t, store, reflector.Options{Shard: lowerHalf})
	following(t, r, book.rv())
	before := r.Status()
	// The same half, cut in two adjacent ranges.
	split := shard.Selector{Field: shard.UID, Ranges: []shard.Range{{First: 1 << 62, Last: 1<<63 - 1}, {First: 0, Last: 1<<62 - 1}}}
	done, err := r.SetShard(split)
	if err != nil {
		t.Fatal(err)
	}
	if !isClosed(done) {
		t.Error("the channel of SetShard with the current shard is not closed")
	}
	book.createIn(t, f, lowerHalf, "q")
	following(t, r, book.rv())
	if d := cmp.Diff(book.selected(lowerHalf), store.names()); d != "" {
		t.Errorf("the store (-in the shard +stored):\n%s", d)
	}
	lists, watches := f.log.split()
	if len(lists) != 1 || len(watches) != 1 {
		t.Errorf("%d lists and %d watches: want the first of each, nothing more", len(lists), len(watches))
	}
	if after := r.Status(); after.ShardFiltering != before.ShardFiltering || after.ShardFiltering != reflector.ShardFilteringServer {
		t.Errorf("ShardFiltering went from %q to %q", before.ShardFiltering, after.ShardFiltering)
	}
}

// SetShard before Run sets the shard of every request; the channel is closed by the
// first list. An invalid selector is refused and changes nothing.
func TestSetShardBeforeRun(t *testing.T) {
	f := newFixture(t, 0)
	book := newPodBook()
	book.createAll(t, f, seq("p", 12)...)
	store := newGuardStore()
	r := reflector.New[*object.Pod](f.pods, store, reflector.Options{Shard: lowerQuarter})
	if _, err := r.SetShard(shard.Selector{Field: shard.UID, Ranges: []shard.Range{{First: 2, Last: 1}}}); err == nil {
		t.Error("SetShard accepted an inverted range")
	}
	done, err := r.SetShard(lowerHalf)
	if err != nil {
		t.Fatal(err)
	}
	if isClosed(done) || r.Status().ShardFiltering != reflector.ShardFilteringUnknown {
		t.Fatalf("before Run: channel closed %v, ShardFiltering %q", isClosed(done), r.Status().ShardFiltering)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { r.Run(ctx); close(stopped) }()
	awaitShard(t, done, r)
	if d := cmp.Diff(book.selected(lowerHalf), store.names()); d != "" {
		t.Errorf("at the close, the store (-in the shard +stored):\n%s", d)
	}
	following(t, r, book.rv())
	for _, req := range f.log.snapshot() {
		if got := req.query.Get("shardSelector"); got != lowerHalf.String() {
			t.Errorf("a request asked for %q, want %q", got, lowerHalf.String())
		}
	}
	// Once Run has returned, a change is answered at once: no list will come.
	cancel()
	<-stopped
	if done, err := r.SetShard(lowerQuarter); err != nil || !isClosed(done) {
		t.Errorf("SetShard on a stopped reflector: closed %v, err %v; want closed at once", isClosed(done), err)
	}
}

// A SetShard while the reflector backs off (the server is gone) waits the backoff out,
// and its first request then is a list with the new shard: the watch the backoff was
// for would have followed the old one.
func TestSetShardWhileBackingOff(t *testing.T) {
	f := newFixture(t, 0)
	book := newPodBook()
	book.createAll(t, f, seq("p", 12)...)
	store := newGuardStore()
	clk := clock.NewFake(time.Unix(1000, 0))
	r := f.run(t, store, reflector.Options{Clock: clk, Shard: lowerQuarter})
	following(t, r, book.rv())
	f.server.stop()
	var st reflector.Status
	testwait.Eventually(t, 10*time.Second, func() bool { var ok bool; st, ok = backingOff(r, clk); return ok },
		"waiting for a backoff; status %+v", testwait.Lazy(func() any { return r.Status() }))
	done, err := r.SetShard(lowerHalf)
	if err != nil {
		t.Fatal(err)
	}
	if now := r.Status(); now.State != reflector.StateBackingOff || isClosed(done) {
		t.Fatalf("after SetShard: state %s, channel closed %v; want still backing off, open", now.State, isClosed(done))
	}
	served := len(f.log.snapshot())
	f.server = serveOn(t, f.server.addr, f.log.wrap(f.sim))
	clk.Step(st.Backoff)
	awaitShard(t, done, r)
	if d := cmp.Diff(book.selected(lowerHalf), store.names()); d != "" {
		t.Errorf("the store (-in the new shard +stored):\n%s", d)
	}
	after := f.log.snapshot()[served:]
	if len(after) == 0 || after[0].watch() {
		t.Fatalf("after the backoff, the first request is %v; want the list of the part gained", after)
	}
	// The store holds the quarter: the part the half adds is listed, fresh.
	gained := shard.Selector{Field: shard.UID, Ranges: shard.Without(lowerHalf.Ranges, lowerQuarter.Ranges)}
	if d := cmp.Diff(map[string]string{"shardSelector": gained.String()},
		pick(after[0].query, "resourceVersion", "resourceVersionMatch", "shardSelector")); d != "" {
		t.Errorf("the list after the backoff (-want +got): the part gained, fresh\n%s", d)
	}
}

// SetShard from several goroutines at once, while pods are created: once the last call's
// channel is closed, every earlier channel is too (a later shard answers them), and the
// store holds exactly the last shard.
func TestSetShardConcurrently(t *testing.T) {
	f := newFixture(t, 0)
	book := newPodBook()
	book.createAll(t, f, seq("p", 12)...)
	store := newGuardStore()
	r := f.run(t, store, reflector.Options{Shard: lowerQuarter, PageSize: 3})
	following(t, r, book.rv())
	stop := book.churn(t, f, "churn")
	var wg sync.WaitGroup
	chans := make([][]<-chan struct{}, 4)
	for g := range chans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				sel := lowerQuarter
				if (g+i)%2 == 0 {
					sel = lowerHalf
				}
				done, err := r.SetShard(sel)
				if err != nil {
					t.Error(err)
					return
				}
				chans[g] = append(chans[g], done)
			}
		}()
	}
	wg.Wait()
	second := shard.Selector{Field: shard.UID, Ranges: []shard.Range{{First: 1 << 62, Last: 1<<63 - 1}}} // the second quarter
	last, err := r.SetShard(second)
	if err != nil {
		t.Fatal(err)
	}
	awaitShard(t, last, r)
	for g, cs := range chans {
		for i, c := range cs {
			if !isClosed(c) {
				t.Errorf("goroutine %d's call %d: its channel is open after a later shard was applied", g, i)
			}
		}
	}
	stop()
	book.createIn(t, f, second, "last")
	following(t, r, book.rv())
	if d := cmp.Diff(book.selected(second), store.names()); d != "" {
		t.Errorf("the store (-in the last shard +stored):\n%s", d)
	}
}
