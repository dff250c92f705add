package streamserver

import (
	"encoding/json"
	"fmt"
	"net/url"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
)

func TestLazyOptions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     Options
		wantLazy bool
		wantErr  string
	}{
		{"small pods are eager", Options{Objects: 1000}, false, ""},
		{"asked", Options{Objects: 1000, Lazy: true}, true, ""},
		{"above LazyAbove", Options{Objects: LazyAbove + 1, Namespaces: 10}, true, ""},
		{"the most", Options{Objects: MaxLazyPods, Lazy: true}, true, ""},
		{"too many", Options{Objects: MaxLazyPods + 1, Lazy: true}, false, "serves at most"},
		{"secrets", Options{Profile: "secrets", Objects: 10, Lazy: true}, false, "pods only"},
		{"protobuf", Options{Objects: 1000, Lazy: true, ProtobufObjects: "pods.pb"}, false, "cannot be served in protobuf"},
		{"protobuf above LazyAbove", Options{Objects: LazyAbove + 1, ProtobufObjects: "pods.pb"}, false, "cannot be served in protobuf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Lazy() != tc.wantLazy || s.Len() != tc.opts.Objects {
				t.Fatalf("lazy %v with %d pods, want %v with %d", s.Lazy(), s.Len(), tc.wantLazy, tc.opts.Objects)
			}
		})
	}
}

// listPods pages through path and returns the items, checking the pages' metadata.
func listPods(t *testing.T, s *Server, u, path string, limit int) []json.RawMessage {
	t.Helper()
	var all []json.RawMessage
	cont := ""
	total := -1
	for pages := 0; ; pages++ {
		q := url.Values{"limit": {strconv.Itoa(limit)}}
		if cont != "" {
			q.Set("continue", cont)
		}
		var p listPage
		if err := json.Unmarshal(get(t, nil, u+path+"?"+q.Encode(), ""), &p); err != nil {
			t.Fatal(err)
		}
		if p.Kind != "PodList" || p.Metadata.ResourceVersion != strconv.FormatInt(s.ListResourceVersion(), 10) {
			t.Fatalf("page %d: kind %s, rv %s", pages, p.Kind, p.Metadata.ResourceVersion)
		}
		all = append(all, p.Items...)
		if cont = p.Metadata.Continue; cont == "" {
			if p.Metadata.RemainingItemCount != nil {
				t.Fatalf("the last page has remainingItemCount %d", *p.Metadata.RemainingItemCount)
			}
			return all
		}
		if p.Metadata.RemainingItemCount == nil {
			t.Fatalf("page %d has no remainingItemCount", pages)
		}
		if total < 0 {
			total = len(all) + *p.Metadata.RemainingItemCount
		}
		if got := len(all) + *p.Metadata.RemainingItemCount; got != total || len(p.Items) != limit {
			t.Fatalf("page %d: %d items, %d listed and %d remaining, want %d in all", pages, len(p.Items), len(all), *p.Metadata.RemainingItemCount, total)
		}
	}
}

// A lazy list pages through every pod once, by namespace, each a valid pod with its own
// name, uid, IP, container ID and resourceVersion; get finds each by name.
func TestLazyList(t *testing.T) {
	const objects, namespaces = 20_011, 100
	s, u := start(t, Options{Objects: objects, Namespaces: namespaces, Lazy: true, WatchEvents: -1})
	items := listPods(t, s, u, "/api/v1/pods", 997)
	if len(items) != objects {
		t.Fatalf("listed %d pods, want %d", len(items), objects)
	}
	seen := map[string]map[string]bool{} // field → values
	for _, f := range []string{"name", "uid", "podIP", "containerID", "rv"} {
		seen[f] = map[string]bool{}
	}
	perNS := map[string]int{}
	var nss []string
	for j, raw := range items {
		var p object.Pod
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatalf("pod %d: %v\n%s", j, err, raw)
		}
		var st struct {
			Status struct {
				PodIP             string `json:"podIP"`
				ContainerStatuses []struct {
					ContainerID string `json:"containerID"`
				} `json:"containerStatuses"`
			} `json:"status"`
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(p.Name, p.GenerateName) || len(p.Name) != len(p.GenerateName)+5 || len(p.UID) != 36 ||
			p.Spec.NodeName == "" || p.Status.Phase != object.PodRunning || len(p.OwnerReferences) != 1 ||
			len(st.Status.PodIP) != 14 || len(st.Status.ContainerStatuses) != 1 ||
			len(st.Status.ContainerStatuses[0].ContainerID) != len("containerd://")+64 {
			t.Fatalf("pod %d: %s", j, raw)
		}
		rv, err := strconv.ParseInt(p.ResourceVersion, 10, 64)
		if err != nil || rv <= rvBase || rv > s.ListResourceVersion() {
			t.Fatalf("pod %d: resourceVersion %q", j, p.ResourceVersion)
		}
		for f, v := range map[string]string{"name": p.Namespace + "/" + p.Name, "uid": p.UID, "podIP": st.Status.PodIP,
			"containerID": st.Status.ContainerStatuses[0].ContainerID, "rv": p.ResourceVersion} {
			if seen[f][v] {
				t.Fatalf("pod %d: %s %s repeats", j, f, v)
			}
			seen[f][v] = true
		}
		if perNS[p.Namespace] == 0 {
			nss = append(nss, p.Namespace)
		}
		perNS[p.Namespace]++
	}
	if len(nss) != namespaces || !sort.StringsAreSorted(nss) {
		t.Fatalf("%d namespaces, sorted %v", len(nss), sort.StringsAreSorted(nss))
	}
	// One namespace's list, and get by name, give the same bytes as the whole list.
	var first object.Pod
	if err := json.Unmarshal(items[0], &first); err != nil {
		t.Fatal(err)
	}
	one := listPods(t, s, u, "/api/v1/namespaces/"+first.Namespace+"/pods", 7)
	if len(one) != perNS[first.Namespace] || len(one) < objects/namespaces || len(one) > objects/namespaces+1 {
		t.Fatalf("namespace %s lists %d pods, the whole list %d", first.Namespace, len(one), perNS[first.Namespace])
	}
	for j := range one {
		if string(one[j]) != string(items[j]) {
			t.Fatalf("namespace list, pod %d differs", j)
		}
	}
	for _, j := range []int{0, 1, objects / 2, objects - 1} {
		var p object.Pod
		if err := json.Unmarshal(items[j], &p); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/api/v1/namespaces/" + p.Namespace + "/pods/" + p.Name} {
			if got := get(t, nil, u+path, ""); string(got) != string(items[j]) {
				t.Fatalf("GET %s:\n%s\nwant\n%s", path, got, items[j])
			}
		}
		if code := getStatus(t, u+"/api/v1/namespaces/"+nss[(slices.Index(nss, p.Namespace)+1)%len(nss)]+"/pods/"+p.Name); code != 404 {
			t.Fatalf("GET %s in another namespace: %d", p.Name, code)
		}
	}
	if code := getStatus(t, u+"/api/v1/namespaces/"+first.Namespace+"/pods/"+first.GenerateName+"zzzzz"); code != 404 {
		t.Fatalf("GET of a pod that is not there: %d", code)
	}
}

// shape is the paths of a JSON document's leaves with their types: what two pods of one
// profile share whatever their values (managedFields' keys of list items, which hold
// values, are all "k:…").
func shape(t *testing.T, raw []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var paths []string
	var walk func(string, any)
	walk = func(at string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if strings.HasPrefix(k, "k:") { // a managedFields key names a list item by its value
					k = "k:…"
				}
				walk(at+"."+k, x)
			}
			if len(v) == 0 {
				paths = append(paths, at+" {}")
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s[%d]", at, i), x)
			}
		default:
			paths = append(paths, fmt.Sprintf("%s %T", at, v))
		}
	}
	walk("", v)
	slices.Sort(paths)
	return paths
}

// A lazy pod is an eager one with other values: same fields, about the same size, and
// object.Pod reads it the same way.
func TestLazyPodsLikeEager(t *testing.T) {
	for _, managed := range []bool{true, false} {
		t.Run(fmt.Sprintf("managedFields=%v", managed), func(t *testing.T) {
			o := Options{Objects: 500, Namespaces: 10, NoManagedFields: !managed}
			eager, ue := start(t, o)
			o.Lazy = true
			lazy, ul := start(t, o)
			e, l := listPods(t, eager, ue, "/api/v1/pods", 1000), listPods(t, lazy, ul, "/api/v1/pods", 1000)
			if diff := cmp.Diff(shape(t, e[0]), shape(t, l[0])); diff != "" {
				t.Fatalf("the lazy pod's fields differ from the eager one's (-eager +lazy):\n%s", diff)
			}
			ef, em := eager.ObjectBytes()
			lf, lm := lazy.ObjectBytes()
			if lf < ef*0.95 || lf > ef*1.05 || lm < em*0.95 || lm > em*1.05 {
				t.Fatalf("lazy pods weigh %.0f B (%.0f as metadata), eager ones %.0f (%.0f)", lf, lm, ef, em)
			}
			for _, raw := range [][]byte{e[0], l[0]} {
				var p object.Pod
				if err := json.Unmarshal(raw, &p); err != nil {
					t.Fatal(err)
				}
				back, err := json.Marshal(p)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(shape(t, raw), shape(t, back)); diff != "" {
					t.Fatalf("object.Pod does not keep the pod (-sent +re-encoded):\n%s", diff)
				}
			}
		})
	}
}

// Shard selectors filter lazy lists as eager ones: every pod in exactly one shard, each
// inside its selector.
func TestLazyShardSelector(t *testing.T) {
	const objects = 3000
	_, u := start(t, Options{Objects: objects, Namespaces: 100, Lazy: true, WatchEvents: -1})
	for _, field := range []shard.Field{shard.Namespace, shard.UID} {
		seen := map[string]int{}
		for member := range 4 {
			sel := shardOf(t, 4, member, field)
			for _, p := range listPages(t, u, "/api/v1/pods", url.Values{"shardSelector": {sel.String()}}, 100) {
				if p.Metadata.ShardInfo == nil || p.Metadata.RemainingItemCount != nil {
					t.Fatalf("%s, member %d: shardInfo %v, remainingItemCount %v", field, member, p.Metadata.ShardInfo, p.Metadata.RemainingItemCount)
				}
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
		if len(seen) != objects {
			t.Fatalf("%s: the 4 shards hold %d pods, want %d", field, len(seen), objects)
		}
		for uid, n := range seen {
			if n != 1 {
				t.Fatalf("%s: %s listed %d times", field, uid, n)
			}
		}
	}
}

// A lazy watch sends EventAt's sequence, the k-th change being of the pod at that
// position of the list; and the streaming list's initial events are the list.
func TestLazyWatch(t *testing.T) {
	const objects, events = 500, 50
	s, u := start(t, Options{Objects: objects, Lazy: true, WatchEvents: events}) // watch() watches namespace bench
	items := listPods(t, s, u, "/api/v1/pods", 100)
	names := make([]string, len(items))
	for j, raw := range items {
		var m objMeta
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		names[j] = m.Metadata.Namespace + "/" + m.Metadata.Name
	}
	r0 := s.ListResourceVersion()
	next, closeFn := watch(t, nil, u, url.Values{"resourceVersion": {strconv.FormatInt(r0, 10)}})
	defer closeFn()
	for k := range int64(events) {
		ev, _, err := next()
		if err != nil {
			t.Fatalf("event %d: %v", k, err)
		}
		typ, i := EventAt(k, objects)
		md := ev.Object.Metadata
		if ev.Type != typ || md.Namespace+"/"+md.Name != names[i] || md.ResourceVersion != strconv.FormatInt(r0+1+k, 10) ||
			len(md.Annotations[StampAnnotation]) != stampWidth || md.Annotations[StampAnnotation] == string(zeroStamp) {
			t.Fatalf("event %d: %s %s/%s rv %s, want %s %s rv %d", k, ev.Type, md.Namespace, md.Name, md.ResourceVersion, typ, names[i], r0+1+k)
		}
	}
	next, closeFn = watch(t, nil, u, url.Values{"sendInitialEvents": {"true"}, "resourceVersionMatch": {"NotOlderThan"}, "allowWatchBookmarks": {"true"}})
	defer closeFn()
	for j := range objects {
		ev, _, err := next()
		if err != nil || ev.Type != "ADDED" || ev.Object.Metadata.Namespace+"/"+ev.Object.Metadata.Name != names[j] {
			t.Fatalf("initial event %d: %v %s %s/%s, want ADDED %s", j, err, ev.Type, ev.Object.Metadata.Namespace, ev.Object.Metadata.Name, names[j])
		}
	}
	if ev, _, err := next(); err != nil || ev.Type != "BOOKMARK" {
		t.Fatalf("after the initial events: %v %s", err, ev.Type)
	}
}

// A million lazy pods cost the server a few MB of heap, not gigabytes.
func TestLazyMemory(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, err := New(Options{Objects: 1_000_000, Namespaces: 1000})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("New with %d pods: %.1f MB of heap", s.Len(), float64(grew)/1e6)
	if !s.Lazy() || grew > 16<<20 {
		t.Fatalf("lazy %v, the heap grew by %d bytes", s.Lazy(), grew)
	}
	runtime.KeepAlive(s)
}
