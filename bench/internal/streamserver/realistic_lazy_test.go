package streamserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/kinformer/kinformer/shard"
)

func TestRealisticLazyOptions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     Options
		wantLazy bool
	}{
		{"small is eager", Options{Profile: RealisticPods, Objects: 1000}, false},
		{"asked", Options{Profile: RealisticPods, Objects: 1000, Lazy: true}, true},
		{"above LazyAbove", Options{Profile: RealisticPods, Objects: LazyAbove + 1}, true},
		{"the most", Options{Profile: RealisticPods, Objects: MaxLazyPods}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if s.Lazy() != tc.wantLazy || s.Len() != tc.opts.Objects || s.Kind() != "Pod" {
				t.Fatalf("lazy %v with %d %ss, want %v with %d", s.Lazy(), s.Len(), s.Kind(), tc.wantLazy, tc.opts.Objects)
			}
		})
	}
}

// eagerByName is an eager server's items by name.
func eagerByName(s *Server) map[string]*item {
	m := map[string]*item{}
	for i := range s.items {
		m[s.items[i].name] = &s.items[i]
	}
	return m
}

// The lazy mode serves the eager mode's pods: the same bytes for each, listed whole and
// as PartialObjectMetadata (with and without managedFields), and in each of its kubelet
// variants, the watch events' states.
func TestRealisticLazyMatchesEager(t *testing.T) {
	const n = 500 // pods of every Deployment
	for _, managed := range []bool{true, false} {
		t.Run(fmt.Sprintf("managedFields=%v", managed), func(t *testing.T) {
			o := Options{Profile: RealisticPods, Objects: n, NoManagedFields: !managed, WatchEvents: -1}
			eager, _ := start(t, o)
			o.Lazy = true
			lazy, u := start(t, o)
			if !lazy.Lazy() || eager.Lazy() || lazy.ListResourceVersion() != eager.ListResourceVersion() {
				t.Fatalf("lazy %v, %v; list resourceVersions %d, %d", lazy.Lazy(), eager.Lazy(), lazy.ListResourceVersion(), eager.ListResourceVersion())
			}
			byName := eagerByName(eager)
			for _, accept := range []string{"", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"} {
				var page listPage
				if err := json.Unmarshal(get(t, nil, u+"/api/v1/pods", accept), &page); err != nil || len(page.Items) != n {
					t.Fatalf("list: %v, %d items", err, len(page.Items))
				}
				for i, raw := range page.Items {
					var m objMeta
					if err := json.Unmarshal(raw, &m); err != nil {
						t.Fatal(err)
					}
					it := byName[m.Metadata.Name]
					if it == nil {
						t.Fatalf("lazy pod %d, %s, is not an eager pod", i, m.Metadata.Name)
					}
					want := it.full.appendTo(nil, it.rvs, zeroStamp)
					if accept != "" {
						want = it.meta.appendTo(nil, it.rvs, zeroStamp)
					}
					if !bytes.Equal(raw, want) {
						t.Fatalf("pod %d (Accept %q):\n%s\neager:\n%s", i, accept, raw, want)
					}
					delete(byName, m.Metadata.Name)
				}
				byName = eagerByName(eager)
			}

			// Kubelet variants: the k-th change carries variant kubeletVariant(k, n).
			rl, f := lazy.rlazy, newRFill()
			stamp := []byte("1234567890123456789")
			for i := range n {
				for v := range kubeletVariants {
					k := int64(v*n + 1)
					if kubeletVariant(k, n) != v {
						t.Fatalf("change %d carries variant %d", k, kubeletVariant(k, n))
					}
					rv := []byte(strconv.FormatInt(lazy.ListResourceVersion()+1+k, 10))
					pos := rl.fill(f, i, k, rv, stamp)
					it := byName[f.p.name]
					kv := it.kubelet
					for _, meta := range []bool{false, true} {
						got := rl.template(pos, meta).appendTo(nil, &f.v)
						want := it.full.appendPatched(nil, rv, stamp, kv.full.spans[v], kv.full.data[v])
						if meta {
							want = it.meta.appendPatched(nil, rv, stamp, kv.meta.spans[v], kv.meta.data[v])
						}
						if !bytes.Equal(got, want) {
							t.Fatalf("pod %d variant %d (metadata only %v):\n%s\neager:\n%s", i, v, meta, got, want)
						}
						if size := rl.template(pos, meta).size(&f.v); size != len(got) {
							t.Fatalf("pod %d variant %d: size %d, written %d", i, v, size, len(got))
						}
					}
				}
			}
		})
	}
}

// A realistic lazy pod's size, known without drawing it, is the length it is written
// with, whole and as metadata, over a million pods (all Deployments, node ranges beyond
// a /22).
func TestRealisticLazySizes(t *testing.T) {
	s, err := New(Options{Profile: RealisticPods, Objects: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	rl, f := s.rlazy, newRFill()
	if rl.l.block <= 1024 {
		t.Errorf("%d addresses a node for a million pods", rl.l.block)
	}
	restarting := 0
	for k := range 20_000 {
		i := k * 49_999 % s.Len()
		pos := rl.fill(f, i, -1, nil, nil)
		for _, meta := range []bool{false, true} {
			if got, want := rl.size(i, meta), len(rl.template(pos, meta).appendTo(nil, &f.v)); got != want {
				t.Fatalf("pod %d (metadata only %v): size %d, written %d", i, meta, got, want)
			}
		}
		if _, _, ok := rl.l.restarting(i, f.p.d); ok {
			restarting++
		}
	}
	if restarting == 0 {
		t.Error("no pod has a restarting container")
	}
}

// A lazy list pages to its end with continue tokens, every pod once, by namespace (in
// name order), and two servers of one seed list the same bytes; a namespace's list is
// its part of the whole, and get finds each pod by name, in its namespace only.
func TestRealisticLazyList(t *testing.T) {
	const n = 1201
	o := Options{Profile: RealisticPods, Objects: n, Lazy: true, WatchEvents: -1}
	s, u := start(t, o)
	s2, u2 := start(t, o)
	items, again := listPods(t, s, u, "/api/v1/pods", 97), listPods(t, s2, u2, "/api/v1/pods", 500)
	if len(items) != n || len(again) != n {
		t.Fatalf("listed %d and %d pods, want %d", len(items), len(again), n)
	}
	names, uids := map[string]bool{}, map[string]bool{}
	var nss []string
	perNS := map[string]int{}
	for j, raw := range items {
		if !bytes.Equal(raw, again[j]) {
			t.Fatalf("pod %d differs between two servers of one seed (or pages of 97 and 500)", j)
		}
		p := readRealistic(t, raw)
		md := p.Metadata
		if names[md.Namespace+"/"+md.Name] || uids[md.UID] {
			t.Fatalf("pod %d: %s/%s (uid %s) repeats", j, md.Namespace, md.Name, md.UID)
		}
		names[md.Namespace+"/"+md.Name], uids[md.UID] = true, true
		if perNS[md.Namespace] == 0 {
			nss = append(nss, md.Namespace)
		}
		perNS[md.Namespace]++
	}
	if !sort.StringsAreSorted(nss) || len(nss) < 50 {
		t.Fatalf("%d namespaces, sorted %v", len(nss), sort.StringsAreSorted(nss))
	}
	from := 0
	for _, ns := range nss[:3] {
		one := listPods(t, s, u, "/api/v1/namespaces/"+ns+"/pods", 7)
		if len(one) != perNS[ns] {
			t.Fatalf("namespace %s lists %d pods, the whole list %d", ns, len(one), perNS[ns])
		}
		for j := range one {
			if !bytes.Equal(one[j], items[from+j]) {
				t.Fatalf("namespace %s, pod %d differs from the whole list's", ns, j)
			}
		}
		from += len(one)
	}
	for _, j := range []int{0, 1, n / 2, n - 1} {
		p := readRealistic(t, items[j])
		path := "/api/v1/namespaces/" + p.Metadata.Namespace + "/pods/" + p.Metadata.Name
		if got := get(t, nil, u+path, ""); !bytes.Equal(got, items[j]) {
			t.Fatalf("GET %s:\n%s\nwant\n%s", path, got, items[j])
		}
		meta := get(t, nil, u+path, "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
		if m := readRealistic(t, meta); m.Metadata.UID != p.Metadata.UID || len(m.Spec.Containers) > 0 {
			t.Fatalf("GET %s as metadata: %s", path, meta)
		}
		other := nss[(slices.Index(nss, p.Metadata.Namespace)+1)%len(nss)]
		if code := getStatus(t, u+"/api/v1/namespaces/"+other+"/pods/"+p.Metadata.Name); code != http.StatusNotFound {
			t.Fatalf("GET %s in namespace %s: %d", p.Metadata.Name, other, code)
		}
		if code := getStatus(t, u+"/api/v1/namespaces/"+p.Metadata.Namespace+"/pods/"+p.Metadata.Name[:len(p.Metadata.Name)-5]+"zzzzz"); code != http.StatusNotFound {
			t.Fatalf("GET of a pod that is not there: %d", code)
		}
	}
	var page listPage
	if err := json.Unmarshal(get(t, nil, u+"/api/v1/configmaps", ""), &page); err != nil || len(page.Items) != 0 {
		t.Errorf("configmaps: %v, %d items", err, len(page.Items))
	}
}

// Shard selectors filter the realistic lazy pods as the eager ones: every pod in exactly
// one shard, each inside its selector.
func TestRealisticLazyShardSelector(t *testing.T) {
	const n = 1500
	_, u := start(t, Options{Profile: RealisticPods, Objects: n, Lazy: true, WatchEvents: -1})
	for _, field := range []shard.Field{shard.Namespace, shard.UID} {
		seen := map[string]int{}
		for member := range 3 {
			sel := shardOf(t, 3, member, field)
			for _, p := range listPages(t, u, "/api/v1/pods", url.Values{"shardSelector": {sel.String()}}, 200) {
				for _, it := range p.Items {
					v := it.Metadata.Namespace
					if field == shard.UID {
						v = it.Metadata.UID
					}
					if !sel.Matches(v) {
						t.Fatalf("%s, member %d: %s/%s is outside the shard", field, member, it.Metadata.Namespace, it.Metadata.Name)
					}
					seen[it.Metadata.UID]++
				}
			}
		}
		if len(seen) != n {
			t.Fatalf("%s: the shards hold %d pods, want %d", field, len(seen), n)
		}
		for uid, k := range seen {
			if k != 1 {
				t.Fatalf("%s: %s listed %d times", field, uid, k)
			}
		}
	}
}

// A lazy watch sends EventAt's sequence, the k-th change being of the pod at that
// position of the list, in the kubelet state it carries (what TestRealisticLazyMatchesEager
// checks against the eager pods): the listed pod but for the kubelet's fields, stamped;
// the streaming list's initial events are the list.
func TestRealisticLazyWatch(t *testing.T) {
	const n, events = 400, 1000
	s, u := start(t, Options{Profile: RealisticPods, Objects: n, Lazy: true, WatchEvents: events})
	items := listPods(t, s, u, "/api/v1/pods", 100)
	listed := make([]*realisticPod, n)
	for j, raw := range items {
		listed[j] = readRealistic(t, raw)
	}
	r0 := s.ListResourceVersion()
	next, closeFn := watchAllPods(t, u, url.Values{"resourceVersion": {strconv.FormatInt(r0, 10)}}, "")
	defer closeFn()
	for k := range int64(events) {
		ev, line := next()
		typ, i := EventAt(k, n)
		p := readRealistic(t, json.RawMessage(line[bytes.Index(line, []byte(`"object":`))+9:len(line)-2]))
		l := listed[i]
		var m objMeta
		if err := json.Unmarshal(p.raw, &m); err != nil {
			t.Fatal(err)
		}
		if ev.Type != typ || p.Metadata.Name != l.Metadata.Name || m.Metadata.ResourceVersion != strconv.FormatInt(r0+1+k, 10) ||
			m.Metadata.Annotations[StampAnnotation] == string(zeroStamp) {
			t.Fatalf("event %d: %s %s rv %s, want %s %s rv %d", k, ev.Type, p.Metadata.Name, m.Metadata.ResourceVersion, typ, l.Metadata.Name, r0+1+k)
		}
		if p.Status.Conditions[2].LastTransitionTime <= l.Status.Conditions[2].LastTransitionTime ||
			p.Spec.NodeName != l.Spec.NodeName || p.Metadata.UID != l.Metadata.UID {
			t.Fatalf("event %d: Ready since %s, listed %s", k, p.Status.Conditions[2].LastTransitionTime, l.Status.Conditions[2].LastTransitionTime)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, u+"/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReaderSize(resp.Body, 1<<20)
	stamp := regexp.MustCompile(`"` + StampAnnotation + `":"[0-9]{19}"`)
	unstamped := func(b []byte) string { return stamp.ReplaceAllString(string(b), "") }
	for j := range n {
		line, err := r.ReadBytes('\n')
		if err != nil || !bytes.HasPrefix(line, []byte(`{"type":"ADDED","object":`)) ||
			unstamped(line[len(`{"type":"ADDED","object":`):len(line)-2]) != unstamped(items[j]) {
			t.Fatalf("initial event %d: %v: %.300s", j, err, line)
		}
	}
	if line, err := r.ReadBytes('\n'); err != nil || !strings.Contains(string(line), `"BOOKMARK"`) {
		t.Fatalf("after the initial events: %v %s", err, line)
	}
}

// A million lazy realistic pods cost the server a few MB of heap, and serving them
// little more: the heap after GC stays within tens of MB while 50,000 pods (650 MB of
// JSON) are listed.
func TestRealisticLazyMemory(t *testing.T) {
	const pods, limit = 50_000, 500
	var before, now runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, u := start(t, Options{Profile: RealisticPods, Objects: 1_000_000, WatchEvents: -1})
	runtime.GC()
	runtime.ReadMemStats(&now)
	grew := int64(now.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("New with %d realistic pods: %.1f MB of heap", s.Len(), float64(grew)/1e6)
	if !s.Lazy() || grew > 32<<20 {
		t.Fatalf("lazy %v, the heap grew by %d bytes", s.Lazy(), grew)
	}
	cont, listed, bytesRead, most := "", 0, int64(0), grew
	for listed < pods {
		q := url.Values{"limit": {strconv.Itoa(limit)}}
		if cont != "" {
			q.Set("continue", cont)
		}
		resp, err := http.Get(u + "/api/v1/pods?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		// Read the page's metadata (it comes first) and discard the items.
		br := bufio.NewReaderSize(resp.Body, 64<<10)
		head, err := br.ReadString('[')
		if err != nil {
			t.Fatal(err)
		}
		var page listPage
		if err := json.Unmarshal([]byte(strings.TrimSuffix(head, `,"items":[`)+"}"), &page); err != nil {
			t.Fatalf("page head %q: %v", head, err)
		}
		rest, err := io.Copy(io.Discard, br)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		bytesRead += rest
		listed += limit
		cont = page.Metadata.Continue
		if listed%10_000 == 0 {
			runtime.GC()
			runtime.ReadMemStats(&now)
			most = max(most, int64(now.HeapAlloc)-int64(before.HeapAlloc))
		}
	}
	t.Logf("listed %d pods (%.0f MB of JSON): the heap after GC grew by at most %.1f MB", listed, float64(bytesRead)/1e6, float64(most)/1e6)
	if most > 48<<20 || bytesRead < pods*10_000 {
		t.Fatalf("the heap grew by up to %d bytes; %d bytes read", most, bytesRead)
	}
	runtime.KeepAlive(s)
}
