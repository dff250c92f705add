package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/internal/testrig/cluster"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/logbuf"
	"github.com/kinformer/kinformer/internal/testrig/simtest"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
	"github.com/kinformer/kinformer/shard"
)

// Sharded list and watch (KEP-5866): the same cases run against the simulator and a
// kube-apiserver started with the ShardedListAndWatch gate, and what each answers is
// compared; the shared cluster, which has no gate, is where the informer falls back to
// filtering on the client.

var (
	lowerHalf = func(f shard.Field) shard.Selector {
		return shard.Selector{Field: f, Ranges: []shard.Range{{First: 0, Last: 1<<63 - 1}}}
	}
	// Two ranges, neither at an end of the space: a quarter in the middle of each half.
	quarters = shard.Selector{Field: shard.Namespace, Ranges: []shard.Range{
		{First: 0x2000000000000000, Last: 0x3fffffffffffffff}, {First: 0xa000000000000000, Last: 0xbfffffffffffffff}}}
)

// shardTarget is an apiserver the cases run against, reached by the engine's client and
// by plain HTTP, to send what the client would not (malformed selectors, other spellings).
type shardTarget struct {
	name   string
	client *listwatch.Client
	base   string
	http   *http.Client
	token  string
}

// get sends a GET of path?query and decodes the JSON answer.
func (tg shardTarget) get(t *testing.T, path string, query url.Values) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, tg.base+path+"?"+query.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if tg.token != "" {
		req.Header.Set("Authorization", "Bearer "+tg.token)
	}
	resp, err := tg.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// A watch that was not refused streams on: its first line is enough.
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode == http.StatusOK && query.Get("watch") != "" {
		return resp.StatusCode, nil
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: GET %s?%s: %d, not JSON: %.200s", tg.name, path, query.Encode(), resp.StatusCode, b)
	}
	return resp.StatusCode, out
}

func simTarget(t *testing.T) shardTarget {
	t.Helper()
	leakcheck.Check(t)
	sim := apisim.New(apisim.Options{BookmarkInterval: 200 * time.Millisecond})
	base, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	c, err := listwatch.New(&listwatch.Config{Host: base, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	raw := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
	t.Cleanup(func() { c.CloseIdleConnections(); raw.CloseIdleConnections() })
	return shardTarget{name: "apisim", client: c, base: base, http: raw}
}

// gatedTarget starts a second control plane, its apiserver with the ShardedListAndWatch
// gate, for this test alone: the shared cluster stays without it, as by default.
func gatedTarget(t *testing.T) shardTarget {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := cluster.Start(ctx, cluster.Options{ExtraArgs: []string{"--feature-gates=ShardedListAndWatch=true"}})
	if err != nil {
		t.Fatalf("starting a gated control plane: %v", err)
	}
	t.Cleanup(c.Stop)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.CAData)
	raw := &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	t.Cleanup(raw.CloseIdleConnections)
	return shardTarget{name: "kube-apiserver", client: simtest.KubeconfigClient(t, c.Kubeconfig), base: c.URL, http: raw, token: c.Token}
}

// shardPods creates, on a target, n namespaces prefix0 … (the number first: FNV-1a mixes
// a name's last bytes badly into the high bits that ranges cut) and records the pods
// created in them.
type shardPods struct {
	namespaces []string
	pods       map[string]*object.Raw // by key
	lastRV     string
}

func newShardPods(t *testing.T, c *listwatch.Client, suffix string, n int) *shardPods {
	t.Helper()
	ctx := testwait.Context(t, time.Minute)
	nsRes := resource[*object.Raw](t, c, "namespaces", "")
	sp := &shardPods{pods: map[string]*object.Raw{}}
	for i := range n {
		ns := fmt.Sprintf("%d-%s", i, suffix)
		if _, err := nsRes.Create(ctx, &object.Raw{ObjectMeta: object.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
		sp.namespaces = append(sp.namespaces, ns)
	}
	t.Cleanup(func() {
		for _, ns := range sp.namespaces { // left terminating: no controller manager runs
			_ = nsRes.Delete(context.Background(), ns, listwatch.DeleteOptions{})
		}
	})
	return sp
}

// createEverywhere creates a pod named name in every namespace, and returns the keys.
func (sp *shardPods) createEverywhere(t *testing.T, pods *listwatch.Resource[*object.Raw], name string) []string {
	t.Helper()
	var keys []string
	for _, ns := range sp.namespaces {
		keys = append(keys, sp.create(t, pods, ns, name))
	}
	return keys
}

func (sp *shardPods) create(t *testing.T, pods *listwatch.Resource[*object.Raw], ns, name string) string {
	t.Helper()
	return sp.createLabelled(t, pods, ns, name, nil)
}

func (sp *shardPods) createLabelled(t *testing.T, pods *listwatch.Resource[*object.Raw], ns, name string, labels map[string]string) string {
	t.Helper()
	p := &object.Raw{ObjectMeta: object.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
	p.Unknown.Set("spec", json.RawMessage(`{"containers":[{"name":"c","image":"registry.example/none"}]}`))
	got, err := pods.Create(testwait.Context(t, 30*time.Second), p)
	if err != nil {
		t.Fatal(err)
	}
	key := object.Key(got)
	sp.pods[key] = got
	sp.lastRV = got.ResourceVersion
	return key
}

// selected is the keys of the recorded pods that sel selects, sorted.
func (sp *shardPods) selected(sel shard.Selector) []string {
	var out []string
	for k, p := range sp.pods {
		v := p.Namespace
		if sel.Field == shard.UID {
			v = p.UID
		}
		if sel.Matches(v) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// ours keeps the keys of the recorded pods, sorted.
func (sp *shardPods) ours(keys []string) []string {
	out := slices.DeleteFunc(slices.Clone(keys), func(k string) bool { return sp.pods[k] == nil })
	slices.Sort(out)
	return out
}

// shardAnswers is what a target answered that must be the same on both: the echo of
// each selector sent, and the status code and reason of each malformed request.
type shardAnswers struct {
	Echoes    map[string]string
	Malformed map[string]string // "list|watch|stream <case>" → "code reason"
}

var malformedSelectors = map[string]string{
	"a short bound":      "shardRange(object.metadata.namespace, '0x0', '0x8000000000000000')",
	"an unhashed field":  "shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')",
	"an inverted range":  "shardRange(object.metadata.uid, '0x8000000000000000', '0x0000000000000000')",
	"two fields":         "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')",
	"not an expression":  "shardRange(",
	"blanks":             "   ",
	"another function":   "size(object.metadata.uid) > 3",
	"upper-case digits":  "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000ABC')",
	"beyond the space":   "shardRange(object.metadata.uid, '0x0000000000000000', '0x20000000000000000')",
	"a bound not quoted": "shardRange(object.metadata.uid, 0, '0x8000000000000000')",
}

// echoed are selectors in spellings other than the canonical one, which the server
// echoes canonically.
var echoed = map[string]string{
	"canonical":    quarters.String(),
	"parentheses":  "(shardRange(object.metadata.namespace, '0x2000000000000000', '0x4000000000000000')) || (shardRange(object.metadata.namespace, '0xa000000000000000', '0xc000000000000000'))",
	"double quote": `shardRange(object.metadata.namespace,"0x2000000000000000","0x4000000000000000")||shardRange(object.metadata.namespace,"0xa000000000000000","0xc000000000000000")`,
	"blanks":       "  shardRange( object.metadata.namespace , '0x2000000000000000' , '0x4000000000000000' )\n|| shardRange(object.metadata.namespace, '0xa000000000000000', '0xc000000000000000')  ",
}

// runShardCases runs every case against tg, checks what it can alone, and returns what
// must be equal on both targets.
func runShardCases(t *testing.T, tg shardTarget) shardAnswers {
	ctx := testwait.Context(t, 2*time.Minute)
	sp := newShardPods(t, tg.client, "shard", 20)
	pods := resource[*object.Raw](t, tg.client, "pods", "")
	sp.createEverywhere(t, pods, "p")
	answers := shardAnswers{Echoes: map[string]string{}, Malformed: map[string]string{}}

	// Lists: exactly the selected objects, on every page, and each page echoes.
	for _, sel := range []shard.Selector{lowerHalf(shard.Namespace), lowerHalf(shard.UID), quarters} {
		var keys []string
		pages := 0
		_, err := pods.ListAll(ctx, listwatch.ListOptions{Limit: 4, Shard: sel}, func(l *object.List[*object.Raw]) error {
			pages++
			if l.ShardInfo == nil || l.ShardInfo.Selector != sel.String() {
				t.Errorf("%s: page %d of a list by %s: shardInfo %+v, want the selector echoed", tg.name, pages, sel, l.ShardInfo)
			}
			for _, p := range l.Items {
				v := p.Namespace
				if sel.Field == shard.UID {
					v = p.UID
				}
				if !sel.Matches(v) {
					t.Errorf("%s: a list by %s holds %s, outside it", tg.name, sel, object.Key(p))
				}
				keys = append(keys, object.Key(p))
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: list by %s: %v", tg.name, sel, err)
		}
		want := sp.selected(sel)
		if len(want) == 0 || len(want) == len(sp.pods) {
			t.Fatalf("%s: %d of %d pods in %s: the namespaces do not straddle it", tg.name, len(want), len(sp.pods), sel)
		}
		if d := cmp.Diff(want, sp.ours(keys)); d != "" {
			t.Errorf("%s: list by %s (-want +got):\n%s", tg.name, sel, d)
		}
		if pages < 2 && sel.Field == shard.UID {
			t.Errorf("%s: a list by uid of about 10 pods in pages of 4 came in %d page(s)", tg.name, pages)
		}
	}

	// The echo is canonical whatever the spelling.
	for name, text := range echoed {
		code, list := tg.get(t, "/api/v1/pods", url.Values{"shardSelector": {text}})
		echo := fmt.Sprintf("<%d, no shardInfo>", code)
		if md, ok := list["metadata"].(map[string]any); ok {
			if info, ok := md["shardInfo"].(map[string]any); ok {
				echo, _ = info["selector"].(string)
			}
		}
		answers.Echoes[name] = echo
	}

	// Watches, and streaming lists, send only what is in the shard.
	sel := lowerHalf(shard.Namespace)
	list, err := pods.List(ctx, listwatch.ListOptions{Shard: sel})
	if err != nil {
		t.Fatal(err)
	}
	initial := sp.selected(sel)
	for _, streaming := range []bool{false, true} {
		opts := listwatch.WatchOptions{ResourceVersion: list.ResourceVersion, AllowBookmarks: true, Shard: sel}
		if streaming {
			opts = listwatch.WatchOptions{SendInitialEvents: true, AllowBookmarks: true, ResourceVersionMatch: "NotOlderThan", Shard: sel}
		}
		w, err := pods.Watch(ctx, opts)
		if err != nil {
			t.Fatalf("%s: watch (streaming %v): %v", tg.name, streaming, err)
		}
		name := fmt.Sprintf("w%v", streaming)
		sp.createEverywhere(t, pods, name)
		// Events come in order: once a marker written last has come, every event outside
		// the shard the server was going to send would have come before it.
		in := sp.selected(sel)
		markerNS, _, _ := strings.Cut(in[0], "/")
		marker := sp.create(t, pods, markerNS, "end-"+name)
		var got []string
		for {
			ev, err := w.Next()
			if err != nil {
				t.Fatalf("%s: watch (streaming %v): %v", tg.name, streaming, err)
			}
			if ev.Type == listwatch.Bookmark {
				continue
			}
			if k := object.Key(ev.Object); k != marker {
				got = append(got, k)
				continue
			}
			break
		}
		w.Close()
		var want []string
		for _, k := range in {
			if strings.HasSuffix(k, "/"+name) || streaming && slices.Contains(initial, k) {
				want = append(want, k)
			}
		}
		slices.Sort(want)
		if d := cmp.Diff(want, sp.ours(got)); d != "" {
			t.Errorf("%s: events of a watch (streaming %v) by %s (-want +got):\n%s", tg.name, streaming, sel, d)
		}
		if len(sp.ours(got)) != len(got) {
			t.Errorf("%s: events of pods the test did not create: %v", tg.name, got)
		}
		initial = sp.selected(sel)
	}

	// Malformed selectors: the same refusal for a list, a watch and a streaming list.
	for _, req := range []struct {
		kind  string
		query url.Values
	}{
		{"list", url.Values{}},
		{"watch", url.Values{"watch": {"1"}}},
		{"stream", url.Values{"watch": {"1"}, "sendInitialEvents": {"true"}, "allowWatchBookmarks": {"true"},
			"resourceVersionMatch": {"NotOlderThan"}, "resourceVersion": {""}}},
	} {
		for name, text := range malformedSelectors {
			q := url.Values{"shardSelector": {text}}
			for k, v := range req.query {
				q[k] = v
			}
			code, status := tg.get(t, "/api/v1/pods", q)
			reason, _ := status["reason"].(string)
			msg, _ := status["message"].(string)
			answers.Malformed[req.kind+" "+name] = fmt.Sprintf("%d %q", code, reason)
			if code != http.StatusOK && !strings.HasPrefix(msg, "invalid shard selector: ") {
				t.Errorf("%s: %s with %s: message %q, want it to start with \"invalid shard selector: \"", tg.name, req.kind, name, msg)
			}
			if req.kind == "list" {
				t.Logf("%s: %s: %d %q %s", tg.name, name, code, reason, msg)
			}
		}
	}

	// An informer with a shard: the server filters, and the cache is the shard.
	inf, err := informer.New[*object.Raw](pods, informer.Options[*object.Raw]{Name: "pods", Shard: sel})
	if err != nil {
		t.Fatal(err)
	}
	runSynced(t, inf)
	var cached []string
	for _, o := range inf.Cache().List() {
		cached = append(cached, object.Key(o))
	}
	if d := cmp.Diff(sp.selected(sel), sp.ours(cached)); d != "" || len(sp.ours(cached)) != len(cached) {
		t.Errorf("%s: the informer's cache (-in the shard +cached):\n%s\nall cached: %v", tg.name, d, cached)
	}
	if st := inf.Status(); st.ShardFiltering != reflector.ShardFilteringServer || st.ShardDropped != 0 {
		t.Errorf("%s: ShardFiltering %q, %d dropped: want the server filtering", tg.name, st.ShardFiltering, st.ShardDropped)
	}
	return answers
}

// TestShardSelectorSimulatorAndRealAPIServer runs the same cases against the simulator
// and a gated kube-apiserver: lists by namespace, by uid and by two ranges return
// exactly the selected pods of 20 namespaces, on every page, with the selector echoed;
// a watch and a streaming list send only the events in the shard; an informer caches
// the shard. The echo of each spelling, and the code and reason of each malformed
// selector, must be the same from both.
func TestShardSelectorSimulatorAndRealAPIServer(t *testing.T) {
	answers := map[string]shardAnswers{}
	t.Run("apisim", func(t *testing.T) { answers["apisim"] = runShardCases(t, simTarget(t)) })
	t.Run("kube-apiserver", func(t *testing.T) { answers["kube-apiserver"] = runShardCases(t, gatedTarget(t)) })
	sim, apiserver := answers["apisim"], answers["kube-apiserver"]
	if d := cmp.Diff(apiserver, sim); d != "" {
		t.Errorf("the simulator answers otherwise than kube-apiserver (-kube-apiserver +apisim):\n%s", d)
	}
	for name, echo := range apiserver.Echoes {
		if echo != quarters.String() {
			t.Errorf("kube-apiserver echoes the %s spelling as %q, not as shard.Selector.String writes it", name, echo)
		}
	}
	if got := apiserver.Malformed["list a short bound"]; got != `500 ""` {
		t.Errorf("kube-apiserver refuses a malformed selector with %s; the simulator was built for 500 without a reason", got)
	}
}

// TestShardFallbackOnUngatedAPIServer: the shared cluster has no ShardedListAndWatch
// gate, so it ignores the selector. The informer filters by itself and its cache holds
// exactly the pods in its shard, and it says so: its status, one warning, and the metric.
func TestShardFallbackOnUngatedAPIServer(t *testing.T) {
	c := client(t)
	sp := newShardPods(t, c, fmt.Sprintf("fallback-%d", time.Now().UnixNano()%100000), 20)
	pods := resource[*object.Raw](t, c, "pods", "")
	sp.createEverywhere(t, pods, "p")
	sel := lowerHalf(shard.Namespace)

	list, err := pods.List(testwait.Context(t, 30*time.Second), listwatch.ListOptions{Shard: sel})
	if err != nil {
		t.Fatal(err)
	}
	if list.ShardInfo != nil || len(sp.ours(keysOf(list.Items))) != len(sp.pods) {
		t.Fatalf("the shared cluster filtered (shardInfo %+v, %d of our %d pods): it has the gate?", list.ShardInfo, len(sp.ours(keysOf(list.Items))), len(sp.pods))
	}

	reg := prometheus.NewRegistry()
	m, err := informer.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	var logs logbuf.Buffer
	inf, err := informer.New[*object.Raw](pods, informer.Options[*object.Raw]{Name: "pods", Shard: sel, Metrics: m, Logger: logs.Logger(slog.LevelInfo)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	if err := informer.WaitForSync(testwait.Context(t, 30*time.Second), inf); err != nil {
		t.Fatal(err)
	}
	sp.createEverywhere(t, pods, "q")
	// The cache is the server's pods in the shard, those of other tests' namespaces too.
	var want, cached []string
	clusterPoll.Eventually(t, 30*time.Second, func() bool {
		want = nil
		for _, k := range keysOf(serverPods(t, pods)) {
			ns, _, _ := strings.Cut(k, "/")
			if sel.Matches(ns) {
				want = append(want, k)
			}
		}
		cached = keysOf(inf.Cache().List())
		return cmp.Equal(want, cached)
	}, "the cache is not the shard (-want +cached):\n%s", testwait.Lazy(func() any { return cmp.Diff(want, cached) }))
	if d := cmp.Diff(sp.selected(sel), sp.ours(cached)); d != "" {
		t.Errorf("the test's pods in the cache (-in the shard +cached):\n%s", d)
	}
	st := inf.Status()
	if st.ShardFiltering != reflector.ShardFilteringClient || st.ShardDropped == 0 {
		t.Errorf("ShardFiltering %q, %d dropped: want the informer filtering alone", st.ShardFiltering, st.ShardDropped)
	}
	if v := metricValue(t, reg, "kinformer_informer_shard_filtered_on_client"); v != 1 {
		t.Errorf("kinformer_informer_shard_filtered_on_client = %v, want 1", v)
	}
	if v := metricValue(t, reg, "kinformer_informer_shard_dropped_total"); v != float64(st.ShardDropped) {
		t.Errorf("kinformer_informer_shard_dropped_total = %v, want the status's %d", v, st.ShardDropped)
	}
	if n := strings.Count(logs.String(), "level=WARN msg=\"the server does not filter by shard"); n != 1 {
		t.Errorf("%d warnings that the server does not filter, want 1:\n%s", n, logs.String())
	}
	t.Logf("the warning: %s", strings.SplitAfterN(logs.String(), "\n", 2)[0])
}

func keysOf[T object.Object](objs []T) []string {
	keys := make([]string, 0, len(objs))
	for _, o := range objs {
		keys = append(keys, object.Key(o))
	}
	slices.Sort(keys)
	return keys
}

func serverPods(t *testing.T, pods *listwatch.Resource[*object.Raw]) []*object.Raw {
	t.Helper()
	var all []*object.Raw
	_, err := pods.ListAll(context.Background(), listwatch.ListOptions{Limit: 500}, func(l *object.List[*object.Raw]) error {
		all = append(all, l.Items...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// metricValue reads the one series of a counter or gauge, or -1 without one.
func metricValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			if c := f.GetMetric()[0].GetCounter(); c != nil {
				return c.GetValue()
			}
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return -1
}

// TestShardChangeCostsTheDifference grows and shrinks the shard of a running informer
// against a kube-apiserver with the ShardedListAndWatch gate (a control plane of its own)
// and against one without it (the shared cluster). The growth lists the part gained
// alone, fresh, and the cache is then what a fresh list of the new shard says; the
// shrink lists nothing. With the gate the list of the part delivers exactly the pods in
// it; without, every pod (the server ignores the selector) and the informer keeps the
// part. Pods created in the part to be gained after the informer's last event (with the
// gate, the server sends it nothing of them, so its resourceVersion stays older, as a
// quiet member's does while another member writes in the part it will hand over) are in
// the cache when the growth's channel closes, not only once the watch brings them. It
// first checks by hand what the design rests on: a consistent list with a shardSelector,
// in pages (limit and continue), answers one snapshot of the shard; and a list at
// resourceVersionMatch=Exact, an old resourceVersion, answers the shard as it was then.
func TestShardChangeCostsTheDifference(t *testing.T) {
	t.Run("kube-apiserver with the gate", func(t *testing.T) { testShardChange(t, gatedTarget(t).client, true) })
	t.Run("kube-apiserver without the gate", func(t *testing.T) { testShardChange(t, client(t), false) })
}

func testShardChange(t *testing.T, c *listwatch.Client, gated bool) {
	nonce := fmt.Sprint(time.Now().UnixNano() % 1000000)
	sp := newShardPods(t, c, "diff"+nonce, 20)
	pods := resource[*object.Raw](t, c, "pods", "")
	// A label of this test's own: on the shared cluster, what the server sends for it is
	// the test's pods, whoever else creates pods.
	labels := map[string]string{"kinformer-shard-diff": nonce}
	byLabel := "kinformer-shard-diff=" + nonce
	for _, ns := range sp.namespaces {
		sp.createLabelled(t, pods, ns, "a", labels)
	}
	first := sp.lastRV
	for _, ns := range sp.namespaces {
		sp.createLabelled(t, pods, ns, "b", labels)
	}
	ctx := testwait.Context(t, 2*time.Minute)
	quarter := shard.Selector{Field: shard.Namespace, Ranges: []shard.Range{{First: 0, Last: 1<<62 - 1}}}
	half := lowerHalf(shard.Namespace)

	// By hand: the half as it was at the first 20 creates, in pages of 3.
	var keys []string
	pages := 0
	_, err := pods.ListAll(ctx, listwatch.ListOptions{LabelSelector: byLabel, Shard: half, ResourceVersion: first,
		ResourceVersionMatch: "Exact", Limit: 3}, func(l *object.List[*object.Raw]) error {
		pages++
		if echoed := l.ShardInfo != nil && l.ShardInfo.Selector == half.String(); echoed != gated {
			t.Errorf("page %d of an exact sharded list: shardInfo %+v (gate %v)", pages, l.ShardInfo, gated)
		}
		if l.ResourceVersion != first {
			t.Errorf("page %d of a list at exactly %s says resourceVersion %s", pages, first, l.ResourceVersion)
		}
		keys = append(keys, keysOf(l.Items)...)
		return nil
	})
	if err != nil {
		t.Fatalf("a list with a shardSelector at exactly resourceVersion %s, limit 3: %v", first, err)
	}
	slices.Sort(keys)
	var want []string
	for _, k := range sp.selected(shard.Selector{}) {
		ns, name, _ := strings.Cut(k, "/")
		if name == "a" && (!gated || half.Matches(ns)) {
			want = append(want, k)
		}
	}
	if d := cmp.Diff(want, keys); d != "" {
		t.Errorf("the exact sharded list in pages (-the half at %s +listed):\n%s", first, d)
	}
	t.Logf("a list with shardSelector, resourceVersion=%s&resourceVersionMatch=Exact, limit=3: %d pages, %d pods (gate %v)", first, pages, len(keys), gated)

	// By hand: the half now, consistent, in pages of 3: one snapshot.
	keys, pages = nil, 0
	snapshot := ""
	_, err = pods.ListAll(ctx, listwatch.ListOptions{LabelSelector: byLabel, Shard: half, Limit: 3}, func(l *object.List[*object.Raw]) error {
		pages++
		if snapshot == "" {
			snapshot = l.ResourceVersion
		} else if l.ResourceVersion != snapshot {
			t.Errorf("page %d of a consistent list says resourceVersion %s, the first %s", pages, l.ResourceVersion, snapshot)
		}
		keys = append(keys, keysOf(l.Items)...)
		return nil
	})
	if err != nil {
		t.Fatalf("a consistent list with a shardSelector, limit 3: %v", err)
	}
	slices.Sort(keys)
	want = nil
	for _, k := range sp.selected(shard.Selector{}) {
		if ns, _, _ := strings.Cut(k, "/"); !gated || half.Matches(ns) {
			want = append(want, k)
		}
	}
	if d := cmp.Diff(want, keys); d != "" {
		t.Errorf("the consistent sharded list in pages (-the half +listed):\n%s", d)
	}
	if c, err := object.CompareResourceVersion(snapshot, sp.lastRV); err != nil || c < 0 {
		t.Errorf("a consistent list answered resourceVersion %s, older than the last write's %s (%v)", snapshot, sp.lastRV, err)
	}

	reg := prometheus.NewRegistry()
	m, err := informer.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	inf, err := informer.New[*object.Raw](pods, informer.Options[*object.Raw]{Name: "pods", Shard: quarter, Metrics: m,
		Reflector: reflector.Options{LabelSelector: byLabel, PageSize: 5}})
	if err != nil {
		t.Fatal(err)
	}
	runSynced(t, inf)
	// The cache is the shard as a fresh list of the server says, filtered here.
	fresh := func(sel shard.Selector) []string {
		var out []string
		_, err := pods.ListAll(ctx, listwatch.ListOptions{LabelSelector: byLabel, Limit: 100}, func(l *object.List[*object.Raw]) error {
			for _, p := range l.Items {
				if sel.Matches(p.Namespace) {
					out = append(out, object.Key(p))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(out)
		return out
	}
	cacheIs := func(sel shard.Selector, when string) {
		t.Helper()
		var want, cached []string
		clusterPoll.Eventually(t, 30*time.Second, func() bool {
			want, cached = fresh(sel), keysOf(inf.Cache().List())
			return cmp.Equal(want, cached)
		}, "%s, the cache is not the shard (-a fresh list +cached):\n%s", when, testwait.Lazy(func() any { return cmp.Diff(want, cached) }))
	}
	cacheIs(quarter, "before the change")
	counters := func() (lists, listed float64) {
		return metricValue(t, reg, "kinformer_reflector_lists_total"), metricValue(t, reg, "kinformer_informer_listed_objects_total")
	}
	lists0, listed0 := counters()
	if want := float64(len(sp.pods)); gated && listed0 != float64(len(fresh(quarter))) || !gated && listed0 != want {
		t.Errorf("the first list delivered %v objects: want the quarter's %d with the gate, all %v without", listed0, len(fresh(quarter)), want)
	}

	// Growth: the part gained (the second quarter) is listed alone, once, fresh. Before
	// it, pods are created there, after the informer's last event, as the member that
	// had the part writes there before handing it over.
	gainedPart := shard.Selector{Field: shard.Namespace, Ranges: shard.Without(half.Ranges, quarter.Ranges)}
	var late []string
	for _, ns := range sp.namespaces {
		if gainedPart.Matches(ns) {
			late = append(late, sp.createLabelled(t, pods, ns, "late", labels))
		}
	}
	if len(late) == 0 {
		t.Fatal("no namespace in the part gained")
	}
	cacheRV := inf.LastStoreSyncResourceVersion()
	if c, err := object.CompareResourceVersion(cacheRV, sp.lastRV); err == nil && c < 0 {
		t.Logf("the cache is at resourceVersion %s, older than the pods created in the part to be gained (the last at %s)", cacheRV, sp.lastRV)
	} else {
		// Without the gate the informer hears of them, and drops them as outside its
		// shard; with it, a bookmark may have come (about one a minute).
		t.Logf("the cache is at resourceVersion %s, not older than the pods created in the part to be gained (the last at %s; gate %v)", cacheRV, sp.lastRV, gated)
	}
	inGained := len(fresh(gainedPart))
	grown, err := inf.SetShard(half)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-grown:
	case <-time.After(30 * time.Second):
		t.Fatalf("the growth was never applied; status %+v", inf.Status())
	}
	atClose := keysOf(inf.Cache().List())
	var missing []string
	for _, k := range late {
		if !slices.Contains(atClose, k) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		t.Errorf("the growth's channel closed without the pods created in the part gained after the cache's resourceVersion %s: %v", cacheRV, missing)
	}
	if d := cmp.Diff(fresh(half), atClose); d != "" {
		t.Errorf("at the growth's close, the cache is not the new shard (-a fresh list +cached):\n%s", d)
	}
	cacheIs(half, "after the growth")
	lists1, listed1 := counters()
	wantListed := float64(inGained)
	if !gated {
		wantListed = float64(len(sp.pods)) // the server sends everything; the informer keeps the part
	}
	if lists1-lists0 != 1 || listed1-listed0 != wantListed {
		t.Errorf("the growth made %v lists of %v objects: want 1 of %v (%d pods in the part gained, gate %v)",
			lists1-lists0, listed1-listed0, wantListed, inGained, gated)
	}
	t.Logf("growth to the half: %v list, %v objects listed, %d pods in the part gained, %d in the new shard (gate %v)",
		lists1-lists0, listed1-listed0, inGained, len(fresh(half)), gated)
	wantFiltering := reflector.ShardFilteringClient
	if gated {
		wantFiltering = reflector.ShardFilteringServer
	}
	if st := inf.Status(); st.ShardFiltering != wantFiltering || st.Relists != 0 || st.LastError != nil {
		t.Errorf("after the growth: status %+v; want ShardFiltering %s, no relist, no error", st, wantFiltering)
	}

	// Shrink: nothing listed.
	shrunk, err := inf.SetShard(quarter)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-shrunk:
	case <-time.After(30 * time.Second):
		t.Fatalf("the shrink was never applied; status %+v", inf.Status())
	}
	cacheIs(quarter, "after the shrink")
	lists2, listed2 := counters()
	if lists2 != lists1 || listed2 != listed1 {
		t.Errorf("the shrink made %v lists of %v objects: want none", lists2-lists1, listed2-listed1)
	}
	if st := inf.Status(); st.ShardFiltering != wantFiltering || st.Relists != 0 {
		t.Errorf("after the shrink: status %+v; want ShardFiltering %s (as before), no relist", st, wantFiltering)
	}
	// The watch that resumed follows the server: new pods of the quarter arrive.
	for _, ns := range sp.namespaces {
		sp.createLabelled(t, pods, ns, "c", labels)
	}
	cacheIs(quarter, "after pods were created")
}

// runSynced runs inf until the test ends, and waits for its cache to sync.
func runSynced[T object.Object](t *testing.T, inf *informer.Informer[T]) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	if err := informer.WaitForSync(testwait.Context(t, 30*time.Second), inf); err != nil {
		t.Fatal(err)
	}
}
