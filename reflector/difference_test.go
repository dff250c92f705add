package reflector_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
	"github.com/kinformer/kinformer/shard"
)

// listedCounter is a reflector's Metrics that counts its lists and the objects they
// delivered (reflector.ListedMetrics).
type listedCounter struct{ lists, listed atomic.Int64 }

func (c *listedCounter) List()                     { c.lists.Add(1) }
func (c *listedCounter) Watch()                    {}
func (c *listedCounter) Relist()                   {}
func (c *listedCounter) Event(listwatch.EventType) {}
func (c *listedCounter) ResourceVersion(string)    {}
func (c *listedCounter) Listed(n int)              { c.listed.Add(int64(n)) }

var secondQuarter = shard.Selector{Field: shard.UID, Ranges: []shard.Range{{First: 1 << 62, Last: 1<<63 - 1}}}

// partOf is the part of the uid space in to and not in from (the zero Selector is all of
// it), as a selector; the zero Selector when there is none.
func partOf(to, from shard.Selector) shard.Selector {
	all := func(s shard.Selector) []shard.Range {
		if s.IsZero() {
			return []shard.Range{shard.Whole()}
		}
		return s.Ranges
	}
	return shard.Selector{Field: shard.UID, Ranges: shard.Without(all(to), all(from))}
}

// listQuery is the parameters of a list that matter here, the continue token as
// "<token>".
func listQuery(q url.Values) map[string]string {
	p := pick(q, "shardSelector", "resourceVersion", "resourceVersionMatch", "limit", "continue")
	if p["continue"] != "" {
		p["continue"] = "<token>"
	}
	return p
}

// A shard change while the reflector watches costs the difference, on the wire: a
// growth lists the part gained alone, in pages, fresh (no resourceVersion, no
// resourceVersionMatch: the newest state), then one watch with the new shard resumes
// from the store's resourceVersion R; a shrink lists nothing, and the watch with the new
// shard resumes from R; a move does both. The store is then the new shard, and stays it
// as pods come. Whether the server filters or not.
func TestSetShardCostsTheDifference(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to shard.Selector
	}{
		{"grow", lowerQuarter, lowerHalf},
		{"shrink", lowerHalf, lowerQuarter},
		{"move", lowerQuarter, secondQuarter},
		{"to no shard", lowerHalf, shard.Selector{}},
		{"from no shard", shard.Selector{}, lowerHalf},
	} {
		for _, ignore := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/server ignores the selector=%v", tc.name, ignore), func(t *testing.T) {
				testSetShardCostsTheDifference(t, tc.from, tc.to, ignore)
			})
		}
	}
}

func testSetShardCostsTheDifference(t *testing.T, from, to shard.Selector, ignore bool) {
	f := newFixture(t, 0)
	f.sim.Faults().IgnoreShardSelector(ignore)
	book := newPodBook()
	book.createAll(t, f, seq("p", 24)...)
	store := newGuardStore()
	m := &listedCounter{}
	r := f.run(t, store, reflector.Options{Name: "pods", Shard: from, PageSize: 2, Metrics: m})
	following(t, r, book.rv())
	at := book.rv() // nothing changes until the end: the store's resourceVersion
	mark, lists, listed := len(f.log.snapshot()), m.lists.Load(), m.listed.Load()

	done, err := r.SetShard(to)
	if err != nil {
		t.Fatal(err)
	}
	store.setGuard(to)
	awaitShard(t, done, r)
	if d := cmp.Diff(book.selected(to), store.names()); d != "" {
		t.Errorf("at the close, the store (-in the new shard +stored):\n%s", d)
	}
	testwait.Eventually(t, 10*time.Second, func() bool {
		_, watches := f.log.split()
		return len(f.log.snapshot()) > mark && f.log.snapshot()[len(f.log.snapshot())-1].watch() && len(watches) > 1
	}, "waiting for the watch after SetShard")

	var got []map[string]string
	var watch map[string]string
	for _, req := range f.log.snapshot()[mark:] {
		if req.watch() {
			watch = pick(req.query, "shardSelector", "resourceVersion")
			break
		}
		got = append(got, listQuery(req.query))
	}
	part := partOf(to, from)
	var want []map[string]string
	gained := 0
	if !part.IsZero() {
		gained = len(book.selected(part))
		want = append(want, map[string]string{"shardSelector": part.String(), "limit": "2"})
		pages := gained
		if ignore {
			pages = 24
		}
		for i := 2; i < pages; i += 2 {
			want = append(want, map[string]string{"shardSelector": part.String(), "limit": "2", "continue": "<token>"})
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the lists after SetShard (-want +got):\n%s", d)
	}
	wantWatch := map[string]string{"resourceVersion": at}
	if !to.IsZero() {
		wantWatch["shardSelector"] = to.String()
	}
	if d := cmp.Diff(wantWatch, watch); d != "" {
		t.Errorf("the watch after SetShard (-want +got):\n%s", d)
	}
	wantListed := int64(gained)
	if ignore && !part.IsZero() {
		wantListed = 24
	}
	if n := m.lists.Load() - lists; n != int64(len(want[:min(len(want), 1)])) {
		t.Errorf("%d lists counted, want %d", n, len(want[:min(len(want), 1)]))
	}
	if n := m.listed.Load() - listed; n != wantListed {
		t.Errorf("the lists delivered %d objects, want %d", n, wantListed)
	}
	if st := r.Status(); st.Relists != 0 || st.LastError != nil {
		t.Errorf("status %+v: want no relist, no error", st)
	}
	book.createIn(t, f, to, "later")
	following(t, r, book.rv())
	if d := cmp.Diff(book.selected(to), store.names()); d != "" {
		t.Errorf("after new pods, the store (-in the new shard +stored):\n%s", d)
	}
	if s := store.strays(); len(s) > 0 {
		t.Errorf("pods outside the new shard stored after SetShard returned: %v", s)
	}
}

// A growth whose resourceVersion R the server has compacted away since: the part gained
// is listed fresh all the same (no list depends on R now), and the channel closes with
// the store holding the new shard; the watch that resumes from R then meets a 410, and
// the whole state is relisted with the new shard, as after any 410, at least as new as
// the part's list.
func TestSetShardGrowthRelistsWhenTheWatchCannotResume(t *testing.T) {
	f := newFixtureWith(t, 0, apisim.Options{BookmarkInterval: time.Hour}) // no bookmark moves the store's resourceVersion
	book := newPodBook()
	book.createAll(t, f, seq("p", 12)...)
	store := newGuardStore()
	r := f.run(t, store, reflector.Options{Name: "pods", Shard: lowerQuarter})
	following(t, r, book.rv())
	// The watch has reached the server: one that came after the compaction below would
	// meet its 410 before the SetShard, and the store would be relisted past at.
	listed := r.LastSyncResourceVersion()
	testwait.Eventually(t, 10*time.Second, func() bool {
		_, watches := splitRequests(f.log.snapshot())
		return slices.ContainsFunc(watches, func(q url.Values) bool { return q.Get("resourceVersion") == listed })
	}, "waiting for the watch from %s", listed)
	// A pod in the half and not the quarter: the server sends no event of it, and the
	// store stays at the resourceVersion of the newest pod in the quarter (createIn's
	// misses may land there), which the compaction then takes away.
	book.createIn(t, f, partOf(lowerHalf, lowerQuarter), "gained")
	at := listed
	if quarter := book.selected(lowerQuarter); len(quarter) > 0 {
		if c, err := object.CompareResourceVersion(book.newest(quarter), at); err == nil && c > 0 {
			at = book.newest(quarter)
		}
	}
	following(t, r, at)
	f.sim.Compact()
	mark := len(f.log.snapshot())
	done, err := r.SetShard(lowerHalf)
	if err != nil {
		t.Fatal(err)
	}
	awaitShard(t, done, r)
	if d := cmp.Diff(book.selected(lowerHalf), store.names()); d != "" {
		t.Errorf("at the close, the store (-in the new shard +stored):\n%s", d)
	}
	testwait.Eventually(t, 10*time.Second, func() bool { st := r.Status(); return st.Relists == 1 && st.State == reflector.StateWatching },
		"waiting for the relist after the 410; status %+v", testwait.Lazy(func() any { return r.Status() }))
	if d := cmp.Diff(book.selected(lowerHalf), store.names()); d != "" {
		t.Errorf("after the relist, the store (-in the new shard +stored):\n%s", d)
	}
	lists, watches := splitRequests(f.log.snapshot()[mark:])
	var got []map[string]string
	for _, q := range lists {
		got = append(got, pick(q, "shardSelector", "resourceVersion", "resourceVersionMatch"))
	}
	want := []map[string]string{
		{"shardSelector": partOf(lowerHalf, lowerQuarter).String()},
		{"shardSelector": lowerHalf.String(), "resourceVersion": book.rv(), "resourceVersionMatch": "NotOlderThan"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the lists after SetShard (-want +got):\n%s", d)
	}
	if len(watches) == 0 || watches[0].Get("resourceVersion") != at {
		t.Errorf("the first watch after SetShard: %v; want one from the store's resourceVersion %s", watches, at)
	}
	if st := r.Status(); st.LastError != nil || st.ShardFiltering != reflector.ShardFilteringServer {
		t.Errorf("status %+v: want no error, the server filtering", st)
	}
}

// splitRequests returns the queries of the lists and of the watches among reqs.
func splitRequests(reqs []request) (lists, watches []url.Values) {
	for _, r := range reqs {
		if r.watch() {
			watches = append(watches, r.query)
		} else {
			lists = append(lists, r.query)
		}
	}
	return lists, watches
}

// Another failure of the list of the part gained (a 500) backs off and lists the part
// again, fresh.
func TestSetShardGrowthRetriesTheList(t *testing.T) {
	f := newFixture(t, 0)
	book := newPodBook()
	book.createAll(t, f, seq("p", 12)...)
	store := newGuardStore()
	clk := clock.NewFake(time.Unix(1000, 0))
	r := f.run(t, store, reflector.Options{Name: "pods", Shard: lowerQuarter, Clock: clk})
	following(t, r, book.rv())
	part := partOf(lowerHalf, lowerQuarter)
	ofPart := func(r *http.Request) bool { return r.URL.Query().Get("shardSelector") == part.String() }
	f.sim.Faults().FailRequests(1, http.StatusInternalServerError, 0, ofPart)
	mark := len(f.log.snapshot())
	done, err := r.SetShard(lowerHalf)
	if err != nil {
		t.Fatal(err)
	}
	var st reflector.Status
	testwait.Eventually(t, 10*time.Second, func() bool { var ok bool; st, ok = backingOff(r, clk); return ok },
		"waiting for the backoff after the failed list; status %+v", testwait.Lazy(func() any { return r.Status() }))
	if st.LastError == nil || isClosed(done) {
		t.Errorf("backing off with error %v, channel closed %v: want the 500, open", st.LastError, isClosed(done))
	}
	clk.Step(st.Backoff)
	awaitShard(t, done, r)
	if d := cmp.Diff(book.selected(lowerHalf), store.names()); d != "" {
		t.Errorf("the store (-in the new shard +stored):\n%s", d)
	}
	lists, _ := splitRequests(f.log.snapshot()[mark:])
	var got []map[string]string
	for _, q := range lists {
		got = append(got, pick(q, "shardSelector", "resourceVersion", "resourceVersionMatch"))
	}
	fresh := map[string]string{"shardSelector": part.String()}
	if d := cmp.Diff([]map[string]string{fresh, fresh}, got); d != "" {
		t.Errorf("the lists after SetShard (-want +got):\n%s", d)
	}
	if st := r.Status(); st.Relists != 0 || st.LastError != nil {
		t.Errorf("status %+v: want no relist, the error cleared", st)
	}
}

// SetShards in a row before the part gained is stored: each list is weighed against
// what the store holds and the shard then current; a list overtaken between its pages
// asks for no more, and nothing listed for a shard no longer current is stored. Every
// channel is closed once the last shard is in the store.
func TestSetShardAgainBeforeThePartIsStored(t *testing.T) {
	f := newFixture(t, 0)
	book := newPodBook()
	book.createAll(t, f, seq("p", 40)...)
	store := newGuardStore()
	r := f.run(t, store, reflector.Options{Name: "pods", Shard: lowerQuarter, PageSize: 2})
	following(t, r, book.rv())
	at := book.rv()
	threeQuarters := shard.Selector{Field: shard.UID, Ranges: []shard.Range{{First: 0, Last: 3<<62 - 1}}}
	upperHalf := shard.Selector{Field: shard.UID, Ranges: []shard.Range{{First: 1 << 63, Last: 1<<64 - 1}}}
	// Each shard in turn, the next set as the first page of the previous one's part is
	// asked for.
	shards := []shard.Selector{lowerHalf, threeQuarters, upperHalf}
	var mu sync.Mutex
	var chans []<-chan struct{}
	next := 1
	f.log.mu.Lock()
	f.log.onList = func(url.Values) {
		mu.Lock()
		defer mu.Unlock()
		if next < len(shards) {
			done, err := r.SetShard(shards[next])
			if err != nil {
				t.Error(err)
			}
			chans = append(chans, done)
			store.setGuard(shards[next])
			next++
		}
	}
	f.log.mu.Unlock()
	mark := len(f.log.snapshot())
	first, err := r.SetShard(shards[0])
	if err != nil {
		t.Fatal(err)
	}
	awaitShard(t, first, r)
	testwait.Eventually(t, 10*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return next == len(shards) }, "waiting for the changes")
	mu.Lock()
	for _, c := range chans {
		awaitShard(t, c, r)
	}
	mu.Unlock()
	if d := cmp.Diff(book.selected(upperHalf), store.names()); d != "" {
		t.Errorf("the store (-in the last shard +stored):\n%s", d)
	}
	if s := store.strays(); len(s) > 0 {
		t.Errorf("pods outside the shard then current stored: %v", s)
	}
	testwait.Eventually(t, 10*time.Second, func() bool { _, w := splitRequests(f.log.snapshot()[mark:]); return len(w) > 0 },
		"waiting for the watch after the changes")
	lists, watches := splitRequests(f.log.snapshot()[mark:])
	var got []map[string]string
	for _, q := range lists {
		got = append(got, pick(q, "shardSelector", "resourceVersion", "resourceVersionMatch", "continue"))
	}
	if w := pick(watches[0], "shardSelector", "resourceVersion"); !cmp.Equal(w, map[string]string{"shardSelector": upperHalf.String(), "resourceVersion": at}) {
		t.Errorf("the watch after the changes asked for %v: want the last shard, from the store's resourceVersion %s", w, at)
	}
	// The half's part is overtaken at its first page; the store still holds the quarter,
	// and three quarters' part is the rest of the three quarters; overtaken in turn, it
	// gives way to the upper half, of which the store holds nothing (the quarter was
	// dropped): all of it is listed, fresh each time.
	fresh := func(sel shard.Selector) map[string]string { return map[string]string{"shardSelector": sel.String()} }
	want := []map[string]string{fresh(partOf(lowerHalf, lowerQuarter)), fresh(partOf(threeQuarters, lowerQuarter)), fresh(upperHalf)}
	for range (len(book.selected(upperHalf)) - 1) / 2 {
		want = append(want, map[string]string{"shardSelector": upperHalf.String(), "continue": "<token>"})
	}
	for _, g := range got {
		if g["continue"] != "" {
			g["continue"] = "<token>"
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the lists after the first SetShard (-want +got):\n%s", d)
	}
	if st := r.Status(); st.Relists != 0 || st.LastError != nil {
		t.Errorf("status %+v: want no relist, no error", st)
	}
}
