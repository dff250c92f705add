package streamserver

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kinformer/kinformer/internal/testrig/testwait"
)

func start(t testing.TB, o Options) (*Server, string) {
	t.Helper()
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	u, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, u
}

func get(t testing.TB, c *http.Client, u string, accept string) []byte {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", u, resp.Status, b)
	}
	return b
}

type listPage struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	Metadata   struct {
		ResourceVersion    string `json:"resourceVersion"`
		Continue           string `json:"continue"`
		RemainingItemCount *int   `json:"remainingItemCount"`
	} `json:"metadata"`
	Items []json.RawMessage `json:"items"`
}

type objMeta struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	Metadata   struct {
		Name            string            `json:"name"`
		Namespace       string            `json:"namespace"`
		UID             string            `json:"uid"`
		ResourceVersion string            `json:"resourceVersion"`
		Annotations     map[string]string `json:"annotations"`
		ManagedFields   []json.RawMessage `json:"managedFields"`
	} `json:"metadata"`
	Spec json.RawMessage `json:"spec"`
}

// listAll pages through the list and checks every page's shape.
func listAll(t *testing.T, s *Server, u, resource string, limit int, accept string) []json.RawMessage {
	t.Helper()
	var items []json.RawMessage
	cont := ""
	for pages := 0; ; pages++ {
		q := url.Values{"limit": {strconv.Itoa(limit)}}
		if cont != "" {
			q.Set("continue", cont)
		}
		var p listPage
		if err := json.Unmarshal(get(t, nil, u+"/api/v1/namespaces/bench/"+resource+"?"+q.Encode(), accept), &p); err != nil {
			t.Fatal(err)
		}
		wantKind, wantAV := kinds[resource]+"List", "v1"
		if accept != "" {
			wantKind, wantAV = "PartialObjectMetadataList", "meta.k8s.io/v1"
		}
		if p.Kind != wantKind || p.APIVersion != wantAV {
			t.Fatalf("list kind %s %s, want %s %s", p.Kind, p.APIVersion, wantKind, wantAV)
		}
		if p.Metadata.ResourceVersion != strconv.FormatInt(s.ListResourceVersion(), 10) {
			t.Fatalf("list rv %s, want %d", p.Metadata.ResourceVersion, s.ListResourceVersion())
		}
		items = append(items, p.Items...)
		cont = p.Metadata.Continue
		if cont == "" {
			if p.Metadata.RemainingItemCount != nil {
				t.Fatal("last page has remainingItemCount")
			}
			break
		}
		if len(p.Items) != limit || p.Metadata.RemainingItemCount == nil || *p.Metadata.RemainingItemCount != s.Len()-len(items) {
			t.Fatalf("page %d: %d items, remaining %v after %d", pages, len(p.Items), p.Metadata.RemainingItemCount, len(items))
		}
	}
	if len(items) != s.Len() {
		t.Fatalf("listed %d items, want %d", len(items), s.Len())
	}
	return items
}

func checkItems(t *testing.T, items []json.RawMessage, kind string, managed bool, minSize, maxSize int) (mean int) {
	t.Helper()
	names, uids := map[string]bool{}, map[string]bool{}
	total := 0
	for _, raw := range items {
		var m objMeta
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("item is not valid JSON: %v", err)
		}
		if m.Kind != kind || m.Metadata.Namespace != "bench" {
			t.Fatalf("item kind %s in %q", m.Kind, m.Metadata.Namespace)
		}
		if names[m.Metadata.Name] || uids[m.Metadata.UID] {
			t.Fatalf("duplicate name %s or uid %s", m.Metadata.Name, m.Metadata.UID)
		}
		names[m.Metadata.Name], uids[m.Metadata.UID] = true, true
		if m.Metadata.Annotations[StampAnnotation] != "0000000000000000000" {
			t.Fatalf("list stamp %q", m.Metadata.Annotations[StampAnnotation])
		}
		if _, err := strconv.ParseInt(m.Metadata.ResourceVersion, 10, 64); err != nil {
			t.Fatalf("resourceVersion %q", m.Metadata.ResourceVersion)
		}
		if (len(m.Metadata.ManagedFields) > 0) != managed {
			t.Fatalf("managedFields: %d entries", len(m.Metadata.ManagedFields))
		}
		if kind == "PartialObjectMetadata" && m.Spec != nil {
			t.Fatal("metadata-only item has a spec")
		}
		if len(raw) < minSize || len(raw) > maxSize {
			t.Fatalf("%s %s is %d bytes, want %d-%d", kind, m.Metadata.Name, len(raw), minSize, maxSize)
		}
		total += len(raw)
	}
	return total / len(items)
}

func TestListPods(t *testing.T) {
	for _, managed := range []bool{true, false} {
		t.Run(fmt.Sprintf("managedFields=%v", managed), func(t *testing.T) {
			s, u := start(t, Options{Objects: 1000, NoManagedFields: !managed})
			items := listAll(t, s, u, "pods", 300, "")
			lo, hi := 3700, 4500
			if !managed {
				lo, hi = 2800, 3500
			}
			mean := checkItems(t, items, "Pod", managed, lo, hi)
			full, _ := s.ObjectBytes()
			if int(full) != mean {
				t.Errorf("ObjectBytes %v, listed mean %d", full, mean)
			}
			t.Logf("pod JSON: %d bytes on average", mean)
			// The unpaginated list and the all-namespaces path hold the same items.
			var p listPage
			if err := json.Unmarshal(get(t, nil, u+"/api/v1/pods", ""), &p); err != nil {
				t.Fatal(err)
			}
			if len(p.Items) != 1000 || !bytes.Equal(p.Items[999], items[999]) {
				t.Fatalf("all-namespaces list: %d items", len(p.Items))
			}
			// Metadata only.
			meta := listAll(t, s, u, "pods", 400, "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
			checkItems(t, meta, "PartialObjectMetadata", managed, 300, 2500)
		})
	}
}

func TestOtherProfiles(t *testing.T) {
	s, u := start(t, Options{Profile: "secrets", Objects: 5, SecretSize: 256 << 10})
	checkItems(t, listAll(t, s, u, "secrets", 2, ""), "Secret", true, 250<<10, 260<<10)
	s, u = start(t, Options{Profile: "configmaps", Objects: 500})
	t.Logf("configmap JSON: %d bytes on average", checkItems(t, listAll(t, s, u, "configmaps", 100, ""), "ConfigMap", true, 300, 1100))
	// Resources outside the profile are empty.
	var p listPage
	if err := json.Unmarshal(get(t, nil, u+"/api/v1/namespaces/bench/pods", ""), &p); err != nil || p.Kind != "PodList" || len(p.Items) != 0 {
		t.Fatalf("pods of a configmaps server: %v %+v", err, p)
	}
}

func TestDeterministic(t *testing.T) {
	a, b := generate(Options{Profile: "pods", Objects: 50, Namespace: "bench", Seed: 7}), generate(Options{Profile: "pods", Objects: 50, Namespace: "bench", Seed: 7})
	c := generate(Options{Profile: "pods", Objects: 50, Namespace: "bench", Seed: 8})
	for i := range a {
		if !bytes.Equal(a[i].full.buf, b[i].full.buf) {
			t.Fatal("same seed, different objects")
		}
		if bytes.Equal(a[i].full.buf, c[i].full.buf) {
			t.Fatal("different seeds, same object")
		}
	}
}

func TestDiscovery(t *testing.T) {
	_, u := start(t, Options{Objects: 1})
	var versions struct {
		Kind     string
		Versions []string
	}
	var groups struct {
		Kind   string
		Groups []any
	}
	var resources struct {
		Kind, GroupVersion string
		Resources          []struct {
			Name, Kind string
			Namespaced bool
			Verbs      []string
		}
	}
	var version struct{ Major, Minor, GitVersion string }
	for path, into := range map[string]any{"/api": &versions, "/apis": &groups, "/api/v1": &resources, "/version": &version} {
		if err := json.Unmarshal(get(t, nil, u+path, ""), into); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	if versions.Kind != "APIVersions" || len(versions.Versions) != 1 || groups.Kind != "APIGroupList" || groups.Groups == nil ||
		resources.Kind != "APIResourceList" || resources.GroupVersion != "v1" || len(resources.Resources) != 3 || version.Major != "1" {
		t.Fatalf("discovery: %+v %+v %+v %+v", versions, groups, resources, version)
	}
	for _, r := range resources.Resources {
		if !r.Namespaced || kinds[r.Name] != r.Kind || !strings.Contains(strings.Join(r.Verbs, ","), "list,watch") {
			t.Fatalf("resource %+v", r)
		}
	}
}

type event struct {
	Type   string  `json:"type"`
	Object objMeta `json:"object"`
}

// watch opens a watch and returns a function reading its events one by one.
func watch(t *testing.T, c *http.Client, u string, q url.Values) (next func() (event, []byte, error), closeFn func()) {
	t.Helper()
	if c == nil {
		c = http.DefaultClient
	}
	q.Set("watch", "1")
	resp, err := c.Get(u + "/api/v1/namespaces/bench/pods?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("watch: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	r := bufio.NewReaderSize(resp.Body, 1<<20)
	return func() (event, []byte, error) {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return event{}, line, err
		}
		var ev event
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("event is not JSON: %v: %.200s", err, line)
		}
		return ev, line, nil
	}, func() { resp.Body.Close() }
}

func TestWatch(t *testing.T) {
	const events = 1000
	s, u := start(t, Options{Objects: 300, WatchEvents: events})
	names := make([]string, s.Len())
	for i := range names {
		names[i] = s.items[i].name
	}
	r0 := s.ListResourceVersion()
	begin := time.Now().UnixNano()
	next, closeFn := watch(t, nil, u, url.Values{"resourceVersion": {strconv.FormatInt(r0, 10)}, "allowWatchBookmarks": {"true"}})
	defer closeFn()
	counts := map[string]int{}
	for k := range int64(events) {
		ev, line, err := next()
		if err != nil {
			t.Fatalf("event %d: %v", k, err)
		}
		typ, i := EventAt(k, s.Len())
		md := ev.Object.Metadata
		if ev.Type != typ || md.Name != names[i] || ev.Object.Kind != "Pod" || ev.Object.Spec == nil {
			t.Fatalf("event %d: %s %s, want %s %s", k, ev.Type, md.Name, typ, names[i])
		}
		if md.ResourceVersion != strconv.FormatInt(r0+1+k, 10) {
			t.Fatalf("event %d: rv %s, want %d", k, md.ResourceVersion, r0+1+k)
		}
		stamp := md.Annotations[StampAnnotation]
		ns, err := strconv.ParseInt(stamp, 10, 64)
		if len(stamp) != 19 || err != nil || ns < begin || ns > time.Now().UnixNano() {
			t.Fatalf("event %d: stamp %q", k, stamp)
		}
		if !bytes.HasSuffix(line, []byte("}}\n")) {
			t.Fatalf("event %d does not end the line", k)
		}
		counts[ev.Type]++
	}
	if counts["DELETED"] != events/10 || counts["ADDED"] != events/10-1 {
		t.Fatalf("event types: %v", counts)
	}
	// Then only bookmarks, a second apart, at the last event's resourceVersion.
	ev, _, err := next()
	if err != nil || ev.Type != "BOOKMARK" || ev.Object.Metadata.ResourceVersion != strconv.FormatInt(r0+events, 10) || ev.Object.Kind != "Pod" {
		t.Fatalf("after the events: %v %+v", err, ev)
	}
	// The server adds to its counters after the flush that sent the bookmark: wait for it.
	var st Stats
	testwait.Every(time.Millisecond).Eventually(t, 5*time.Second, func() bool { st = s.Stats(); return st.Events >= events+1 },
		"stats %+v, want %d events counted", testwait.Lazy(func() any { return st }), events+1)
	if st.Events != events+1 || st.Watches != 1 || st.Bytes < events*3000 {
		t.Fatalf("stats %+v", st)
	}
	// A watch resumed from the last resourceVersion continues the sequence.
	next2, close2 := watch(t, nil, u, url.Values{"resourceVersion": {strconv.FormatInt(r0+events, 10)}})
	defer close2()
	ev, _, err = next2()
	if typ, i := EventAt(events, s.Len()); err != nil || ev.Type != typ || ev.Object.Metadata.Name != names[i] ||
		ev.Object.Metadata.ResourceVersion != strconv.FormatInt(r0+events+1, 10) {
		t.Fatalf("resumed watch: %v %s %s %s", err, ev.Type, ev.Object.Metadata.Name, ev.Object.Metadata.ResourceVersion)
	}
}

func TestStreamingList(t *testing.T) {
	s, u := start(t, Options{Objects: 50, WatchEvents: 3})
	r0 := strconv.FormatInt(s.ListResourceVersion(), 10)
	next, closeFn := watch(t, nil, u, url.Values{"sendInitialEvents": {"true"}, "resourceVersionMatch": {"NotOlderThan"},
		"allowWatchBookmarks": {"true"}, "resourceVersion": {""}})
	defer closeFn()
	for i := range s.Len() {
		ev, _, err := next()
		if err != nil || ev.Type != "ADDED" || ev.Object.Metadata.Name != s.items[i].name ||
			ev.Object.Metadata.ResourceVersion != string(s.items[i].rvs) || ev.Object.Metadata.Annotations[StampAnnotation] == "0000000000000000000" {
			t.Fatalf("initial event %d: %v %+v", i, err, ev)
		}
	}
	ev, line, err := next()
	if err != nil || ev.Type != "BOOKMARK" || ev.Object.Metadata.ResourceVersion != r0 ||
		ev.Object.Metadata.Annotations["k8s.io/initial-events-end"] != "true" {
		t.Fatalf("after the initial events: %v %s", err, line)
	}
	for k := range 3 {
		ev, _, err := next()
		if err != nil || ev.Type != "MODIFIED" || ev.Object.Metadata.ResourceVersion != strconv.FormatInt(s.ListResourceVersion()+1+int64(k), 10) {
			t.Fatalf("event %d after the bookmark: %v %+v", k, err, ev)
		}
	}
	// A legacy watch without resourceVersion also starts with the state, without bookmark.
	next2, close2 := watch(t, nil, u, url.Values{})
	defer close2()
	for i := range s.Len() + 1 {
		ev, _, err := next2()
		want := "ADDED"
		if i == s.Len() {
			want = "MODIFIED"
		}
		if err != nil || ev.Type != want {
			t.Fatalf("legacy watch event %d: %v %s", i, err, ev.Type)
		}
	}
}

func TestWatchTimeoutAndRate(t *testing.T) {
	s, u := start(t, Options{Objects: 10, WatchEvents: 20, Rate: 200})
	begin := time.Now()
	next, closeFn := watch(t, nil, u, url.Values{"resourceVersion": {strconv.FormatInt(s.ListResourceVersion(), 10)}, "timeoutSeconds": {"1"}})
	defer closeFn()
	n := 0
	var err error
	for ; ; n++ {
		var ev event
		ev, _, err = next()
		if err != nil {
			break
		}
		if ev.Type == "BOOKMARK" {
			t.Fatal("bookmark without allowWatchBookmarks")
		}
		if n == 19 {
			if d := time.Since(begin); d < 90*time.Millisecond {
				t.Fatalf("20 events at 200/s took %v", d)
			}
		}
	}
	if err != io.EOF || n != 20 {
		t.Fatalf("watch ended with %v after %d events", err, n)
	}
	if d := time.Since(begin); d < 900*time.Millisecond || d > 3*time.Second {
		t.Fatalf("timeoutSeconds=1 ended after %v", d)
	}
}

func TestTLS(t *testing.T) {
	for _, h2 := range []bool{true, false} {
		t.Run(fmt.Sprintf("http2=%v", h2), func(t *testing.T) { testTLS(t, h2) })
	}
}

func testTLS(t *testing.T, h2 bool) {
	s, u := start(t, Options{Objects: 20, TLS: true, WatchEvents: 5, DisableHTTP2: !h2})
	if !strings.HasPrefix(u, "https://") {
		t.Fatal(u)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.CACertPEM()) {
		t.Fatal("bad CA PEM")
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	resp, err := c.Get(u + "/version")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := map[bool]int{true: 2, false: 1}[h2]; resp.ProtoMajor != want {
		t.Fatalf("protocol %s, want HTTP/%d", resp.Proto, want)
	}
	var p listPage
	if err := json.Unmarshal(get(t, c, u+"/api/v1/namespaces/bench/pods", ""), &p); err != nil || len(p.Items) != 20 {
		t.Fatalf("list over TLS: %v, %d items", err, len(p.Items))
	}
	next, closeFn := watch(t, c, u, url.Values{"resourceVersion": {"1"}})
	defer closeFn()
	for k := range 5 {
		if ev, _, err := next(); err != nil || ev.Object.Metadata.ResourceVersion != strconv.FormatInt(s.ListResourceVersion()+1+int64(k), 10) {
			t.Fatalf("watch over TLS, event %d: %v %+v", k, err, ev)
		}
	}
}

func TestEmitAllocatesNothing(t *testing.T) {
	s, err := New(Options{Objects: 100})
	if err != nil {
		t.Fatal(err)
	}
	w := &watcher{s: s, items: s.items, kind: "Pod", bw: bufio.NewWriterSize(io.Discard, 256<<10)}
	k := int64(0)
	if n := testing.AllocsPerRun(1000, func() { w.change(k); k++ }); n != 0 {
		t.Fatalf("%v allocations per event", n)
	}
}
