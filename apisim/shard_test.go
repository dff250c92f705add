package apisim_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
)

// lowerHalf selects the namespaces whose hash is below 2^63.
var lowerHalf = shard.Selector{Field: shard.Namespace, Ranges: []shard.Range{{First: 0, Last: 1<<63 - 1}}}

// shardFixture is a simulator with one pod in each of 20 namespaces, and a client.
func shardFixture(t *testing.T) (*apisim.Server, string, *listwatch.Resource[*object.Pod]) {
	t.Helper()
	sim, base := start(t, apisim.Options{BookmarkInterval: time.Hour})
	c, err := listwatch.New(&listwatch.Config{Host: base, QPS: -1, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	info, err := c.Discover(context.Background(), "pods")
	if err != nil {
		t.Fatal(err)
	}
	pods := listwatch.For[*object.Pod](c, info, "")
	for i := range 20 {
		createPod(t, pods, nsName(i), "p")
	}
	return sim, base, pods
}

func createPod(t *testing.T, pods *listwatch.Resource[*object.Pod], ns, name string) {
	t.Helper()
	if _, err := pods.Create(context.Background(), &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
		t.Fatal(err)
	}
}

// nsName is the i-th namespace. FNV-1a barely mixes a name's last bytes into the high
// bits that ranges cut (see package shard), so the number comes first: ns-0 … ns-19
// would all land in one half.
func nsName(i int) string { return fmt.Sprintf("%d-ns", i) }

// inRange is the keys of the pods named p, one per namespace, that sel selects.
func inRange(sel shard.Selector, namespaces int) []string {
	var keys []string
	for i := range namespaces {
		ns := nsName(i)
		if sel.Matches(ns) {
			keys = append(keys, ns+"/p")
		}
	}
	slices.Sort(keys)
	return keys
}

func listKeys(t *testing.T, pods *listwatch.Resource[*object.Pod], opts listwatch.ListOptions) (keys, echoes []string) {
	t.Helper()
	_, err := pods.ListAll(context.Background(), opts, func(l *object.List[*object.Pod]) error {
		for _, p := range l.Items {
			keys = append(keys, object.Key(p))
		}
		echo := "<none>"
		if l.ShardInfo != nil {
			echo = l.ShardInfo.Selector
		}
		echoes = append(echoes, echo)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	return keys, echoes
}

// A list with a shardSelector has the objects in range, on every page, and each page
// echoes the selector; a server that ignores it (no feature gate) sends all of them and
// no echo.
func TestShardSelectorOnLists(t *testing.T) {
	sim, _, pods := shardFixture(t)
	want := inRange(lowerHalf, 20)
	if len(want) == 0 || len(want) == 20 {
		t.Fatalf("the namespaces do not straddle the halves: %v", want)
	}
	keys, echoes := listKeys(t, pods, listwatch.ListOptions{Limit: 3, Shard: lowerHalf})
	if d := cmp.Diff(want, keys); d != "" {
		t.Errorf("sharded list (-want +got):\n%s", d)
	}
	for i, e := range echoes {
		if e != lowerHalf.String() {
			t.Errorf("page %d echoes %q, want %q", i, e, lowerHalf.String())
		}
	}

	sim.Faults().IgnoreShardSelector(true)
	keys, echoes = listKeys(t, pods, listwatch.ListOptions{Shard: lowerHalf})
	if len(keys) != 20 || !slices.Equal(echoes, []string{"<none>"}) {
		t.Errorf("without the gate: %d objects and echoes %q, want 20 and none", len(keys), echoes)
	}
}

// The echo is the selector as the server parsed it, in canonical form, not the text sent.
func TestShardInfoIsCanonical(t *testing.T) {
	_, base, _ := shardFixture(t)
	sent := ` ( shardRange(object.metadata.namespace,"0x0000000000000000", '''0x8000000000000000''') ) `
	code, list := call(t, "GET", base+"/api/v1/pods?shardSelector="+url.QueryEscape(sent), "", "")
	if code != 200 {
		t.Fatalf("list: %d %v", code, list)
	}
	info, _ := list["metadata"].(map[string]any)["shardInfo"].(map[string]any)
	if d := cmp.Diff(map[string]any{"selector": lowerHalf.String()}, info); d != "" {
		t.Errorf("shardInfo (-want +got):\n%s", d)
	}
}

// A malformed selector fails a list, a watch and a streaming list as kube-apiserver's
// does: 500, no reason, "invalid shard selector: …". Without the gate it is ignored.
func TestMalformedShardSelector(t *testing.T) {
	sim, base, _ := shardFixture(t)
	bad := url.QueryEscape("shardRange(object.metadata.namespace, '0x0', '0x8000000000000000')")
	for _, q := range []string{"", "&watch=1", "&watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion="} {
		code, status := call(t, "GET", base+"/api/v1/pods?shardSelector="+bad+q, "", "")
		msg, _ := status["message"].(string)
		if code != 500 || status["kind"] != "Status" || status["reason"] != nil || !strings.HasPrefix(msg, "invalid shard selector: ") {
			t.Errorf("%q: %d %v, want 500 without a reason and an invalid shard selector message", q, code, status)
		}
	}
	code, status := call(t, "GET", base+"/api/v1/pods?shardSelector=%20", "", "")
	if code != 500 || !strings.Contains(fmt.Sprint(status["message"]), "empty") {
		t.Errorf("a blank selector: %d %v, want 500 saying it is empty", code, status)
	}
	sim.Faults().IgnoreShardSelector(true)
	if code, status := call(t, "GET", base+"/api/v1/pods?shardSelector="+bad, "", ""); code != 200 {
		t.Errorf("without the gate a malformed selector is ignored: %d %v", code, status)
	}
}

// A sharded watch sends only the events of objects in range, and so does a streaming
// list, initial events included.
func TestShardSelectorOnWatches(t *testing.T) {
	_, _, pods := shardFixture(t)
	ctx := context.Background()
	for _, streaming := range []bool{false, true} {
		list, err := pods.List(ctx, listwatch.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		opts := listwatch.WatchOptions{ResourceVersion: list.ResourceVersion, AllowBookmarks: true, Shard: lowerHalf}
		if streaming {
			opts = listwatch.WatchOptions{SendInitialEvents: true, AllowBookmarks: true, ResourceVersionMatch: "NotOlderThan", Shard: lowerHalf}
		}
		w, err := pods.Watch(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("q%v", streaming)
		var want []string
		if streaming { // the initial events: every pod so far in range
			for _, p := range list.Items {
				if lowerHalf.Matches(p.Namespace) {
					want = append(want, object.Key(p))
				}
			}
		}
		for i := range 20 {
			ns := nsName(i)
			createPod(t, pods, ns, name)
			if lowerHalf.Matches(ns) {
				want = append(want, ns+"/"+name)
			}
		}
		// Events come in order: once an in-range marker written last has arrived, every
		// out-of-range event the watch was going to send would have come before it.
		markerNS, _, _ := strings.Cut(want[0], "/")
		marker := markerNS + "/end-" + name
		createPod(t, pods, markerNS, "end-"+name)
		var got []string
		for {
			ev, err := w.Next()
			if err != nil {
				t.Fatalf("streaming=%v: %v", streaming, err)
			}
			if ev.Type == listwatch.Bookmark {
				continue
			}
			if key := object.Key(ev.Object); key != marker {
				got = append(got, key)
				continue
			}
			break
		}
		w.Close()
		slices.Sort(got)
		slices.Sort(want)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("streaming=%v: events (-want +got):\n%s", streaming, d)
		}
	}
}
