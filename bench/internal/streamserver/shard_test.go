package streamserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kinformer/kinformer/shard"
)

// shardPage is a list page with what a sharded list adds.
type shardPage struct {
	Kind     string `json:"kind"`
	Metadata struct {
		ResourceVersion    string `json:"resourceVersion"`
		Continue           string `json:"continue"`
		RemainingItemCount *int   `json:"remainingItemCount"`
		ShardInfo          *struct {
			Selector string `json:"selector"`
		} `json:"shardInfo"`
	} `json:"metadata"`
	Items []objMeta `json:"items"`
}

// listPages lists path (with query q) in pages of limit and returns every page.
func listPages(t *testing.T, u, path string, q url.Values, limit int) []shardPage {
	t.Helper()
	var pages []shardPage
	cont := ""
	for {
		q := cloneValues(q)
		q.Set("limit", strconv.Itoa(limit))
		if cont != "" {
			q.Set("continue", cont)
		}
		var p shardPage
		if err := json.Unmarshal(get(t, nil, u+path+"?"+q.Encode(), ""), &p); err != nil {
			t.Fatal(err)
		}
		pages = append(pages, p)
		if cont = p.Metadata.Continue; cont == "" {
			return pages
		}
		if len(pages) > 10000 {
			t.Fatal("the list does not end")
		}
	}
}

func cloneValues(q url.Values) url.Values {
	c := url.Values{}
	for k, v := range q {
		c[k] = slices.Clone(v)
	}
	return c
}

// shardOf is member's part of the hash space when n members share it, as the runner asks.
func shardOf(t *testing.T, n, member int, field shard.Field) shard.Selector {
	t.Helper()
	members := make([]string, n)
	for i := range members {
		members[i] = strconv.Itoa(i)
	}
	sel, ok := shard.Assign(members, shard.DefaultBuckets).Selector(strconv.Itoa(member), field)
	if !ok {
		t.Fatalf("member %d of %d owns nothing", member, n)
	}
	return sel
}

// The namespaces' names spread over the hash space, where plain numbered names cluster.
func TestNamespacesSpread(t *testing.T) {
	o := Options{Namespaces: 1000}
	spread := map[uint64]bool{}
	numbered := map[uint64]bool{}
	names := map[string]bool{}
	for i := range 1000 {
		ns := o.NamespaceOf(i)
		if names[ns] || !strings.HasPrefix(ns, "bench-") || !strings.HasSuffix(ns, "-"+strconv.Itoa(i)) || len(ns) > 63 {
			t.Fatalf("namespace %d: %q", i, ns)
		}
		names[ns] = true
		spread[shard.Hash(ns)>>56] = true
		numbered[shard.Hash("bench-"+strconv.Itoa(i))>>56] = true
	}
	if o.NamespaceOf(1000) != o.NamespaceOf(0) {
		t.Error("object 1000 of 1000 namespaces is not in the first")
	}
	t.Logf("1000 namespaces in %d of 256 equal parts of the hash space (numbered names: %d)", len(spread), len(numbered))
	if len(spread) < 240 {
		t.Errorf("1000 namespaces fall in only %d of 256 equal parts of the hash space", len(spread))
	}
	if got := (Options{Namespace: "x"}).NamespaceOf(7); got != "x" {
		t.Errorf("one namespace: object 7 in %q", got)
	}
}

// Objects spread over namespaces are listed in namespace then name order, each namespace
// holds its share, and a namespaced list, watch or get sees only its namespace.
func TestNamespaces(t *testing.T) {
	const objects, namespaces = 300, 7
	s, u := start(t, Options{Objects: objects, Namespaces: namespaces, WatchEvents: 50})
	var all shardPage
	if err := json.Unmarshal(get(t, nil, u+"/api/v1/pods", ""), &all); err != nil {
		t.Fatal(err)
	}
	if len(all.Items) != objects {
		t.Fatalf("listed %d pods", len(all.Items))
	}
	count := map[string]int{}
	for i, it := range all.Items {
		count[it.Metadata.Namespace]++
		if i > 0 {
			prev := all.Items[i-1].Metadata
			if prev.Namespace > it.Metadata.Namespace || prev.Namespace == it.Metadata.Namespace && prev.Name >= it.Metadata.Name {
				t.Fatalf("item %d out of order: %s/%s after %s/%s", i, it.Metadata.Namespace, it.Metadata.Name, prev.Namespace, prev.Name)
			}
		}
	}
	o := Options{Namespaces: namespaces}
	for j := range namespaces {
		ns := o.NamespaceOf(j)
		want := objects / namespaces
		if j < objects%namespaces {
			want++
		}
		if count[ns] != want {
			t.Errorf("namespace %s holds %d pods, want %d", ns, count[ns], want)
		}
	}
	ns := o.NamespaceOf(3)
	pages := listPages(t, u, "/api/v1/namespaces/"+ns+"/pods", nil, 10)
	n := 0
	for _, p := range pages {
		for _, it := range p.Items {
			if it.Metadata.Namespace != ns {
				t.Fatalf("list of %s has a pod of %s", ns, it.Metadata.Namespace)
			}
			n++
		}
	}
	if n != count[ns] {
		t.Fatalf("list of %s: %d pods, want %d", ns, n, count[ns])
	}
	if got := getStatus(t, u+"/api/v1/namespaces/"+ns+"/pods/"+all.Items[0].Metadata.Name); all.Items[0].Metadata.Namespace != ns && got != http.StatusNotFound {
		t.Errorf("get of another namespace's pod: %d", got)
	}
	if got := getStatus(t, u+"/api/v1/namespaces/bench/pods"); got != http.StatusOK {
		t.Errorf("list of an empty namespace: %d", got)
	}

	// A namespaced watch sends its namespace's changes out of the one sequence.
	next, closeFn := watchPath(t, u, "/api/v1/namespaces/"+ns+"/pods", url.Values{"resourceVersion": {strconv.FormatInt(s.ListResourceVersion(), 10)}})
	defer closeFn()
	for k := range int64(50) {
		if _, i := EventAt(k, s.Len()); s.items[i].ns != ns {
			continue
		}
		ev, err := next()
		if err != nil || ev.Object.Metadata.Namespace != ns || ev.Object.Metadata.ResourceVersion != strconv.FormatInt(s.ListResourceVersion()+1+k, 10) {
			t.Fatalf("change %d: %v %+v", k, err, ev.Object.Metadata)
		}
	}
}

func getStatus(t *testing.T, u string) int {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// watchPath is watch on any path.
func watchPath(t *testing.T, u, path string, q url.Values) (next func() (event, error), closeFn func()) {
	t.Helper()
	q.Set("watch", "1")
	resp, err := http.Get(u + path + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("watch: %s", resp.Status)
	}
	dec := json.NewDecoder(resp.Body)
	return func() (event, error) {
		var ev event
		err := dec.Decode(&ev)
		return ev, err
	}, func() { resp.Body.Close() }
}

// A sharded list has exactly the selected objects, on pages that never come empty and
// carry the selector, as the server writes it, and no remainingItemCount; the shards of
// all members together are the whole list, each object once.
func TestShardSelectorOnLists(t *testing.T) {
	const objects = 2000
	s, u := start(t, Options{Objects: objects, Namespaces: 100, WatchEvents: -1})
	for _, field := range []shard.Field{shard.Namespace, shard.UID} {
		seen := map[string]int{}
		for member := range 4 {
			sel := shardOf(t, 4, member, field)
			pages := listPages(t, u, "/api/v1/pods", url.Values{"shardSelector": {sel.String()}}, 100)
			n := 0
			for i, p := range pages {
				if p.Metadata.ShardInfo == nil || p.Metadata.ShardInfo.Selector != sel.String() {
					t.Fatalf("%s, member %d, page %d: shardInfo %+v", field, member, i, p.Metadata.ShardInfo)
				}
				if p.Metadata.RemainingItemCount != nil {
					t.Fatalf("%s, member %d, page %d has remainingItemCount", field, member, i)
				}
				if len(p.Items) == 0 || len(p.Items) < 100 && p.Metadata.Continue != "" {
					t.Fatalf("%s, member %d, page %d: %d items, continue %q", field, member, i, len(p.Items), p.Metadata.Continue)
				}
				for _, it := range p.Items {
					v := it.Metadata.Namespace
					if field == shard.UID {
						v = it.Metadata.UID
					}
					if !sel.Matches(v) {
						t.Fatalf("%s, member %d: %s/%s is outside the shard", field, member, it.Metadata.Namespace, it.Metadata.Name)
					}
					seen[it.Metadata.Name]++
					n++
				}
			}
			if field == shard.Namespace {
				want := 0
				o := Options{Namespaces: 100}
				for i := range objects {
					if sel.Matches(o.NamespaceOf(i)) {
						want++
					}
				}
				if n != want {
					t.Errorf("member %d of 4 listed %d pods, NamespaceOf says %d", member, n, want)
				}
			}
			t.Logf("%s: member %d of 4 has %d of %d pods", field, member, n, objects)
		}
		if len(seen) != s.Len() {
			t.Fatalf("%s: the 4 shards hold %d pods, want %d", field, len(seen), s.Len())
		}
		for name, n := range seen {
			if n != 1 {
				t.Fatalf("%s: %s listed %d times", field, name, n)
			}
		}
	}
}

// The echo is the selector re-written as shard.Selector.String writes it, not the text
// sent; a selector that does not parse fails lists and watches with the apiserver's 500;
// and a server without the gate ignores the parameter, malformed or not.
func TestShardSelectorEchoAndErrors(t *testing.T) {
	_, u := start(t, Options{Objects: 200, Namespaces: 20, WatchEvents: -1})
	sent := ` ( shardRange( object.metadata.namespace , "0x0000000000000000", '0x8000000000000000') )  ||
		shardRange(object.metadata.namespace, r'0xc000000000000000', '0x10000000000000000') // the top quarter`
	sel, err := shard.Parse(sent)
	if err != nil {
		t.Fatal(err)
	}
	pages := listPages(t, u, "/api/v1/pods", url.Values{"shardSelector": {sent}}, 1000)
	if len(pages) != 1 || pages[0].Metadata.ShardInfo == nil || pages[0].Metadata.ShardInfo.Selector != sel.String() ||
		!strings.HasPrefix(sel.String(), "shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000') || ") {
		t.Fatalf("echo of %q: %+v", sent, pages[0].Metadata.ShardInfo)
	}
	for _, it := range pages[0].Items {
		if !sel.Matches(it.Metadata.Namespace) {
			t.Fatalf("%s is outside the shard", it.Metadata.Namespace)
		}
	}
	if n := len(pages[0].Items); n == 0 || n == 200 {
		t.Fatalf("three quarters of the space hold %d of 200 pods", n)
	}

	for _, bad := range []string{"shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')",
		"shardRange(object.metadata.uid, '0x8000000000000000', '0x0000000000000000')", " ", "nonsense"} {
		for _, q := range []string{"", "&watch=1"} {
			resp, err := http.Get(u + "/api/v1/pods?shardSelector=" + url.QueryEscape(bad) + q)
			if err != nil {
				t.Fatal(err)
			}
			var status struct {
				Kind, Status, Message string
				Code                  int
			}
			err = json.NewDecoder(resp.Body).Decode(&status)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusInternalServerError || status.Kind != "Status" || status.Code != 500 ||
				!strings.HasPrefix(status.Message, "invalid shard selector: ") {
				t.Errorf("shardSelector %q%s: %d %+v (%v)", bad, q, resp.StatusCode, status, err)
			}
		}
	}

	_, u = start(t, Options{Objects: 200, Namespaces: 20, WatchEvents: -1, IgnoreShardSelector: true})
	pages = listPages(t, u, "/api/v1/pods", url.Values{"shardSelector": {sent}}, 1000)
	if len(pages[0].Items) != 200 || pages[0].Metadata.ShardInfo != nil {
		t.Fatalf("ignoring the selector: %d pods, shardInfo %+v", len(pages[0].Items), pages[0].Metadata.ShardInfo)
	}
	if got := getStatus(t, u+"/api/v1/pods?shardSelector=nonsense"); got != http.StatusOK {
		t.Fatalf("ignoring a malformed selector: %d", got)
	}
}

// A sharded watch sends the initial events of the shard's objects only, then the changes
// of the one sequence whose objects are in the shard, with their own resourceVersions.
func TestShardSelectorOnWatches(t *testing.T) {
	const events = 400
	s, u := start(t, Options{Objects: 100, Namespaces: 10, WatchEvents: events})
	sel := shardOf(t, 2, 0, shard.Namespace)
	inShard := 0
	for i := range s.items {
		if sel.Matches(s.items[i].ns) {
			inShard++
		}
	}
	if inShard == 0 || inShard == s.Len() {
		t.Fatalf("half the space holds %d of %d pods", inShard, s.Len())
	}
	next, closeFn := watchPath(t, u, "/api/v1/pods", url.Values{"sendInitialEvents": {"true"}, "resourceVersionMatch": {"NotOlderThan"},
		"allowWatchBookmarks": {"true"}, "shardSelector": {sel.String()}})
	defer closeFn()
	for n := 0; ; n++ {
		ev, err := next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == "BOOKMARK" {
			if n != inShard {
				t.Fatalf("%d initial events, want %d", n, inShard)
			}
			break
		}
		if ev.Type != "ADDED" || !sel.Matches(ev.Object.Metadata.Namespace) {
			t.Fatalf("initial event %d: %s of %s", n, ev.Type, ev.Object.Metadata.Namespace)
		}
	}
	sent := 0
	for k := range int64(events) {
		typ, i := EventAt(k, s.Len())
		if !sel.Matches(s.items[i].ns) {
			continue
		}
		ev, err := next()
		md := ev.Object.Metadata
		if err != nil || ev.Type != typ || md.Name != s.items[i].name || md.ResourceVersion != strconv.FormatInt(s.ListResourceVersion()+1+k, 10) {
			t.Fatalf("change %d: %v %s %s %s, want %s %s", k, err, ev.Type, md.Name, md.ResourceVersion, typ, s.items[i].name)
		}
		sent++
	}
	ev, err := next()
	if err != nil || ev.Type != "BOOKMARK" || ev.Object.Metadata.ResourceVersion != strconv.FormatInt(s.ListResourceVersion()+events, 10) {
		t.Fatalf("after %d of %d changes: %v %+v", sent, events, err, ev)
	}
}
