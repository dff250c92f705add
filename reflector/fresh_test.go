package reflector_test

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
	"github.com/kinformer/kinformer/shard"
)

// These tests are about what a new owner first sees of the part its shard gained: the
// state as of its own, fresh, list, never an older one.

// These helpers return their error rather than fail the test: they also run on the
// server's goroutine, as a list is answered.

// relabel changes pod name's label "v" to value and returns its new resourceVersion.
func (b *podBook) relabel(f *fixture, name, value string) (string, error) {
	p, err := f.pods.Patch(context.Background(), name, listwatch.MergePatch, fmt.Appendf(nil, `{"metadata":{"labels":{"v":%q}}}`, value), "")
	if err != nil {
		return "", err
	}
	b.mu.Lock()
	b.lastRV = p.ResourceVersion
	b.mu.Unlock()
	return p.ResourceVersion, nil
}

// remove deletes pod name and forgets it.
func (b *podBook) remove(f *fixture, name string) error {
	if err := f.pods.Delete(context.Background(), name, listwatch.DeleteOptions{}); err != nil {
		return err
	}
	b.mu.Lock()
	delete(b.uids, name)
	delete(b.rvs, name)
	b.mu.Unlock()
	return nil
}

// createSomeIn creates pods prefix0, prefix1… until one is in sel, and returns its name.
func (b *podBook) createSomeIn(f *fixture, sel shard.Selector, prefix string) (string, error) {
	for i := 0; ; i++ {
		name := fmt.Sprint(prefix, i)
		if err := b.create(f, name); err != nil {
			return "", err
		}
		b.mu.Lock()
		in := sel.Matches(b.uids[name])
		b.mu.Unlock()
		if in {
			return name, nil
		}
	}
}

// must fails t, on t's goroutine, if err is not nil, and returns v.
func must[V any](v V, err error) func(t *testing.T) V {
	return func(t *testing.T) V {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// historyStore keeps the pods by name and logs what it is handed after the first
// ReplaceWithin; it notes every event that is no news: an Add or Update of a pod at a
// resourceVersion no newer than the one held, a Delete of a pod not held.
type historyStore struct {
	mu      sync.Mutex
	objs    map[string]*object.Pod
	merged  bool
	ops     []string // after the first ReplaceWithin
	noNews  []string
	scoped  int
	replace int
}

func newHistoryStore() *historyStore { return &historyStore{objs: map[string]*object.Pod{}} }

func (s *historyStore) log(format string, args ...any) {
	if s.merged {
		s.ops = append(s.ops, fmt.Sprintf(format, args...))
	}
}

func (s *historyStore) Add(p *object.Pod) { s.set("add", p) }

func (s *historyStore) Update(p *object.Pod) { s.set("update", p) }

func (s *historyStore) set(op string, p *object.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if held, ok := s.objs[p.Name]; ok {
		if c, err := object.CompareResourceVersion(p.ResourceVersion, held.ResourceVersion); err != nil || c <= 0 {
			s.noNews = append(s.noNews, fmt.Sprintf("%s %s@%s while holding it at %s", op, p.Name, p.ResourceVersion, held.ResourceVersion))
		}
	}
	s.objs[p.Name] = p
	s.log("%s %s@%s", op, p.Name, p.ResourceVersion)
}

func (s *historyStore) Delete(p *object.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.objs[p.Name]; !ok {
		s.noNews = append(s.noNews, fmt.Sprintf("delete %s@%s, not held", p.Name, p.ResourceVersion))
	}
	delete(s.objs, p.Name)
	s.log("delete %s@%s", p.Name, p.ResourceVersion)
}

func (s *historyStore) Replace(ps []*object.Pod, _ string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replace++
	s.objs = map[string]*object.Pod{}
	for _, p := range ps {
		s.objs[p.Name] = p
	}
	s.log("replace %d", len(ps))
}

func (s *historyStore) ReplaceWithin(scope func(*object.Pod) bool, ps []*object.Pod, rv string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scoped++
	maps.DeleteFunc(s.objs, func(_ string, p *object.Pod) bool { return scope(p) })
	for _, p := range ps {
		s.objs[p.Name] = p
	}
	s.merged = true
	s.log("within %d at %s", len(ps), rv)
}

// state is name → resourceVersion of what the store holds.
func (s *historyStore) state() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for n, p := range s.objs {
		out[n] = p.ResourceVersion
	}
	return out
}

func (s *historyStore) history() (ops, noNews []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ops), slices.Clone(s.noNews)
}

// serverState is name → resourceVersion of the pods the server holds that sel selects.
func serverState(t *testing.T, f *fixture, sel shard.Selector) map[string]string {
	t.Helper()
	l, err := f.pods.List(context.Background(), listwatch.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range l.Items {
		if sel.IsZero() || sel.Matches(p.UID) {
			out[p.Name] = p.ResourceVersion
		}
	}
	return out
}

// only keeps the entries of m whose name is in names.
func only(m map[string]string, names []string) map[string]string {
	out := map[string]string{}
	for _, n := range names {
		if rv, ok := m[n]; ok {
			out[n] = rv
		}
	}
	return out
}

// The bug a sharded controller manager met on a real apiserver: a member whose part was
// quiet has a store at an old resourceVersion R (its watch moves only with events of its
// own part, or bookmarks), and the previous owner of the part it gains wrote there after
// R. The channel of the growth closes with those writes in the store: the part gained is
// listed fresh (no resourceVersion, no resourceVersionMatch), not at R, and the watch
// then resumes from R.
func TestSetShardGrowthSeesWritesAfterTheStoresResourceVersion(t *testing.T) {
	f := newFixtureWith(t, 0, apisim.Options{BookmarkInterval: time.Hour}) // no bookmark moves R
	book := newPodBook()
	book.createAll(t, f, seq("p", 12)...)
	gained := partOf(lowerHalf, lowerQuarter)
	before := must(book.createSomeIn(f, gained, "before"))(t)
	must(book.createSomeIn(f, lowerQuarter, "q"))(t) // the last write the store sees
	store := newHistoryStore()
	r := f.run(t, store, reflector.Options{Name: "pods", Shard: lowerQuarter})
	following(t, r, book.rv())

	// The previous owner's last writes in the part: a pod created, one changed. (Pods
	// that createSomeIn makes in the quarter on the way move the store, to before them.)
	late := must(book.createSomeIn(f, gained, "late"))(t)
	lateRV := book.rv()
	changed := must(book.relabel(f, before, "2"))(t)
	mark := len(f.log.snapshot())
	done, err := r.SetShard(lowerHalf)
	if err != nil {
		t.Fatal(err)
	}
	awaitShard(t, done, r)
	held := store.state() // at the close
	testwait.Eventually(t, 10*time.Second, func() bool { _, w := splitRequests(f.log.snapshot()[mark:]); return len(w) > 0 },
		"waiting for the watch after SetShard")
	lists, watches := splitRequests(f.log.snapshot()[mark:])
	at := watches[0].Get("resourceVersion") // the store's resourceVersion, R
	if c, err := object.CompareResourceVersion(at, lateRV); err != nil || c >= 0 {
		t.Fatalf("the store was at %s, not before %s's creation at %s: the scenario needs it older", at, late, lateRV)
	}
	if _, ok := held[late]; !ok {
		t.Errorf("the channel closed without %s, created in the part gained after the store's resourceVersion %s", late, at)
	}
	if held[before] != changed {
		t.Errorf("the channel closed with %s at %s: want %s, its change after the store's resourceVersion %s", before, held[before], changed, at)
	}
	if d := cmp.Diff(only(serverState(t, f, gained), book.selected(gained)), only(held, book.selected(gained))); d != "" {
		t.Errorf("at the close, the part gained (-the server +stored):\n%s", d)
	}
	if len(lists) != 1 {
		t.Fatalf("%d lists after SetShard: want the part gained's alone: %v", len(lists), lists)
	}
	if d := cmp.Diff(map[string]string{"shardSelector": gained.String()}, pick(lists[0], "shardSelector", "resourceVersion", "resourceVersionMatch")); d != "" {
		t.Errorf("the list of the part gained (-want: fresh +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{"shardSelector": lowerHalf.String(), "resourceVersion": at}, pick(watches[0], "shardSelector", "resourceVersion")); d != "" {
		t.Errorf("the watch after the list (-want: the whole shard from the store's resourceVersion +got):\n%s", d)
	}
	if _, noNews := store.history(); len(noNews) > 0 {
		t.Errorf("events that were no news reached the store: %q", noNews)
	}
}

// What happens in the part gained between R and the fresh list's resourceVersion F comes
// twice: in the list, and again as the watch from R replays it. The replay is dropped,
// up to F: no object of the part goes back to an older state, and no DELETED of an
// object the list did not have reaches the store; the events of the part kept since R,
// which the store has not seen, are applied; so is everything past F.
func TestSetShardGrowthDropsTheReplayOfThePartGained(t *testing.T) {
	for _, ignore := range []bool{false, true} {
		t.Run(fmt.Sprintf("server ignores the selector=%v", ignore), func(t *testing.T) {
			testGrowthDropsTheReplay(t, ignore)
		})
	}
}

func testGrowthDropsTheReplay(t *testing.T, ignore bool) {
	f := newFixtureWith(t, 0, apisim.Options{BookmarkInterval: time.Hour})
	f.sim.Faults().IgnoreShardSelector(ignore)
	book := newPodBook()
	gained := partOf(lowerHalf, lowerQuarter)
	book.createAll(t, f, seq("p", 12)...)
	g := must(book.createSomeIn(f, gained, "g"))(t)
	k := must(book.createSomeIn(f, lowerQuarter, "k"))(t)
	store := newHistoryStore()
	r := f.run(t, store, reflector.Options{Name: "pods", Shard: lowerQuarter})
	following(t, r, book.rv())
	at := r.LastSyncResourceVersion()

	// As the part gained is listed, before the server answers: g changes twice, a pod
	// is created in the part and another created and deleted; in the part kept, k changes
	// and a pod is created.
	var fresh, gone, kept string
	var hookErr error
	var once sync.Once
	f.log.mu.Lock()
	f.log.onList = func(q url.Values) {
		if q.Get("shardSelector") != gained.String() {
			return
		}
		once.Do(func() {
			steps := []func() error{
				func() error { _, err := book.relabel(f, g, "2"); return err },
				func() error { _, err := book.relabel(f, g, "3"); return err },
				func() error { _, err := book.createSomeIn(f, gained, "new"); return err },
				func() (err error) { gone, err = book.createSomeIn(f, gained, "gone"); return err },
				func() error { return book.remove(f, gone) },
				func() error { _, err := book.relabel(f, k, "2"); return err },
				func() (err error) { kept, err = book.createSomeIn(f, lowerQuarter, "kept"); return err },
			}
			for _, step := range steps {
				if hookErr = step(); hookErr != nil {
					return
				}
			}
			fresh = strconv.FormatInt(f.sim.ResourceVersion(), 10)
		})
	}
	f.log.mu.Unlock()
	done, err := r.SetShard(lowerHalf)
	if err != nil {
		t.Fatal(err)
	}
	awaitShard(t, done, r)
	atClose := store.state()
	if hookErr != nil || fresh == "" {
		t.Fatalf("the writes during the list: %v", hookErr)
	}
	server := serverState(t, f, shard.Selector{})
	if d := cmp.Diff(only(server, book.selected(gained)), only(atClose, book.selected(gained))); d != "" {
		t.Errorf("at the close, the part gained (-the server at %s +stored):\n%s", fresh, d)
	}
	// Past F: the part gained changes again, and the watch brings it.
	after := must(book.createSomeIn(f, gained, "after"))(t)
	past := must(book.relabel(f, g, "4"))(t)
	following(t, r, book.rv())
	if d := cmp.Diff(only(serverState(t, f, lowerHalf), book.selected(lowerHalf)), only(store.state(), book.selected(lowerHalf))); d != "" {
		t.Errorf("once the watch has followed the server, the store (-the server +stored):\n%s", d)
	}
	ops, noNews := store.history()
	if len(noNews) > 0 {
		t.Errorf("events that were no news reached the store (the replay of the part gained up to %s): %q", fresh, noNews)
	}
	// After the merge: the part kept's events since R, then the part gained's past F;
	// nothing of the part gained at F or before.
	var want []string
	for _, op := range ops[1:] {
		var kind, name, rv string
		if _, err := fmt.Sscanf(op, "%s %s", &kind, &name); err != nil {
			t.Fatalf("op %q: %v", op, err)
		}
		name, rv, _ = cutLast(name, "@")
		if slices.Contains(book.selected(gained), name) || name == gone {
			if c, _ := object.CompareResourceVersion(rv, fresh); c <= 0 {
				t.Errorf("the store was handed %q, of the part gained at or before the list's %s", op, fresh)
			}
		}
		want = append(want, name)
	}
	for _, name := range []string{k, kept, after, g} {
		if !slices.Contains(want, name) {
			t.Errorf("no event of %s after the merge (ops %q)", name, ops)
		}
	}
	if held := store.state(); held[g] != past || held[k] != server[k] {
		t.Errorf("the store holds %s at %s and %s at %s: want %s and %s", g, held[g], k, held[k], past, server[k])
	}
	_, watches := splitRequests(f.log.snapshot())
	if last := watches[len(watches)-1]; last.Get("resourceVersion") != at {
		t.Errorf("the watch after the growth resumed from %s: want the store's resourceVersion %s", last.Get("resourceVersion"), at)
	}
	if st := r.Status(); st.Relists != 0 || st.LastError != nil {
		t.Errorf("status %+v: want no relist, no error", st)
	}
}

// cutLast splits s around the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	for i := len(s) - len(sep); i >= 0; i-- {
		if s[i:i+len(sep)] == sep {
			return s[:i], s[i+len(sep):], true
		}
	}
	return s, "", false
}

// ConsistentLists: the first list asks for the newest state (no resourceVersion: a
// consistent read) rather than any ("0"), in pages; the watch resumes from its
// resourceVersion; a relist after a 410 still asks for at least the last resourceVersion
// seen; and a streaming list, which reads the newest state anyway, is unchanged.
func TestConsistentListsAskForTheNewestState(t *testing.T) {
	f := newFixture(t, 5)
	listRV := strconv.FormatInt(f.sim.ResourceVersion(), 10)
	store := &logStore{}
	r := f.run(t, store, reflector.Options{PageSize: 2, ConsistentLists: true})
	testwait.Eventually(t, 10*time.Second, func() bool { return r.Status().State == reflector.StateWatching }, "waiting for the reflector to watch")
	lists, watches := f.log.split()
	var got []map[string]string
	for _, l := range lists {
		got = append(got, listQuery(l.query))
	}
	want := []map[string]string{
		{"limit": "2"}, // the newest state
		{"limit": "2", "continue": "<token>"},
		{"limit": "2", "continue": "<token>"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("list requests (-want +got):\n%s", d)
	}
	if len(watches) != 1 || watches[0].query.Get("resourceVersion") != listRV {
		t.Fatalf("watches %v: want one from the list's resourceVersion %s", watches, listRV)
	}

	// A 410: the relist asks for at least the last resourceVersion seen.
	seen := f.expire(t, r, store)
	testwait.Eventually(t, 10*time.Second, func() bool { return store.has("replace 7") }, "waiting for the relist in the store")
	lists, _ = f.log.split()
	if d := cmp.Diff(map[string]string{"resourceVersion": seen, "resourceVersionMatch": "NotOlderThan", "limit": "2"},
		listQuery(lists[3].query)); d != "" {
		t.Errorf("relist (-want +got):\n%s", d)
	}

	// Streaming.
	g := newFixture(t, 2)
	r = g.run(t, &logStore{}, reflector.Options{StreamingList: true, ConsistentLists: true})
	testwait.Eventually(t, 10*time.Second, func() bool { return r.Status().State == reflector.StateWatching }, "waiting for the streaming list")
	_, watches = g.log.split()
	if d := cmp.Diff(map[string]string{"sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan", "resourceVersion": ""},
		pick(watches[0].query, "sendInitialEvents", "resourceVersionMatch", "resourceVersion")); d != "" {
		t.Errorf("the streaming list (-want +got):\n%s", d)
	}
}
