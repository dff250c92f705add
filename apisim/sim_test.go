package apisim_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
)

func start(t *testing.T, opts apisim.Options) (*apisim.Server, string) {
	t.Helper()
	leakcheck.Check(t)
	sim := apisim.New(opts)
	url, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		http.DefaultClient.CloseIdleConnections()
		sim.Close()
	})
	return sim, url
}

func call(t *testing.T, method, url, contentType, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s %s: body is not JSON: %s", method, url, b)
	}
	return resp.StatusCode, out
}

func TestWireFormat(t *testing.T) {
	_, url := start(t, apisim.Options{})
	pods := url + "/api/v1/namespaces/ns1/pods"
	code, created := call(t, "POST", pods, "application/json", `{"metadata":{"generateName":"web-","labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}`)
	if code != 201 || created["kind"] != "Pod" || created["apiVersion"] != "v1" {
		t.Fatalf("create: %d %v", code, created)
	}
	name := created["metadata"].(map[string]any)["name"].(string)
	if !strings.HasPrefix(name, "web-") || len(name) != len("web-")+5 {
		t.Errorf("generated name %q", name)
	}
	_, list := call(t, "GET", url+"/api/v1/pods", "", "")
	if list["kind"] != "PodList" || list["metadata"].(map[string]any)["resourceVersion"] == "" {
		t.Errorf("list envelope: %v", list)
	}
	item := list["items"].([]any)[0].(map[string]any)
	if _, has := item["kind"]; has {
		t.Error("list items must not carry kind")
	}
	if d := cmp.Diff(created["spec"], item["spec"]); d != "" {
		t.Errorf("spec changed:\n%s", d)
	}
	code, status := call(t, "GET", pods+"/nope", "", "")
	if code != 404 || status["kind"] != "Status" || status["reason"] != "NotFound" {
		t.Errorf("missing object: %d %v", code, status)
	}
	code, status = call(t, "GET", url+"/apis/apps/v1/namespaces/x/gizmos", "", "")
	if code != 404 || status["kind"] != "Status" {
		t.Errorf("unknown resource: %d %v", code, status)
	}
	code, _ = call(t, "GET", pods+"?fieldSelector=spec.schedulerName%3Dx", "", "")
	if code != 400 {
		t.Errorf("unsupported field selector: %d", code)
	}
	_, sel := call(t, "GET", pods+"?fieldSelector=metadata.name%3D"+name, "", "")
	if n := len(sel["items"].([]any)); n != 1 {
		t.Errorf("field selector on name: %d items", n)
	}
	code, _ = call(t, "PATCH", pods+"/"+name, "application/json-patch+json", `[]`)
	if code != 415 {
		t.Errorf("json patch: %d, want 415", code)
	}
}

func TestFinalizersHoldDeletion(t *testing.T) {
	_, url := start(t, apisim.Options{})
	cms := url + "/api/v1/namespaces/ns1/configmaps"
	call(t, "POST", cms, "", `{"metadata":{"name":"held","finalizers":["example.com/hold"]}}`)
	code, obj := call(t, "DELETE", cms+"/held", "", "")
	if code != 202 || obj["metadata"].(map[string]any)["deletionTimestamp"] == nil {
		t.Fatalf("delete with a finalizer: %d %v", code, obj)
	}
	if code, _ := call(t, "GET", cms+"/held", "", ""); code != 200 {
		t.Fatalf("object gone while a finalizer holds it: %d", code)
	}
	call(t, "PATCH", cms+"/held", "application/merge-patch+json", `{"metadata":{"finalizers":null}}`)
	if code, _ := call(t, "GET", cms+"/held", "", ""); code != 404 {
		t.Errorf("removing the last finalizer must complete the delete: %d", code)
	}
}

func TestScaleSubresource(t *testing.T) {
	_, url := start(t, apisim.Options{})
	deps := url + "/apis/apps/v1/namespaces/ns1/deployments"
	call(t, "POST", deps, "", `{"metadata":{"name":"d"},"spec":{"replicas":1}}`)
	code, scale := call(t, "PATCH", deps+"/d/scale", "application/merge-patch+json", `{"spec":{"replicas":4}}`)
	if code != 200 || scale["kind"] != "Scale" {
		t.Fatalf("scale patch: %d %v", code, scale)
	}
	_, d := call(t, "GET", deps+"/d", "", "")
	if got := d["spec"].(map[string]any)["replicas"]; got != 4.0 {
		t.Errorf("replicas = %v", got)
	}
	if g := d["metadata"].(map[string]any)["generation"]; g != 2.0 {
		t.Errorf("generation = %v, want 2", g)
	}
}

// watchLines opens a raw chunked watch and returns a line reader.
func watchLines(t *testing.T, url string) (*bufio.Scanner, func()) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("watch: %d %s", resp.StatusCode, b)
	}
	return bufio.NewScanner(resp.Body), func() { resp.Body.Close() }
}

func TestStreamingListFaults(t *testing.T) {
	sim, url := start(t, apisim.Options{BookmarkInterval: time.Hour})
	call(t, "POST", url+"/api/v1/namespaces/a/pods", "", `{"metadata":{"name":"p"}}`)
	q := "/api/v1/pods?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion="
	lines, stop := watchLines(t, url+q)
	var types []string
	for range 2 {
		lines.Scan()
		var ev struct {
			Type   string
			Object struct {
				Metadata struct{ Annotations map[string]string }
			}
		}
		json.Unmarshal(lines.Bytes(), &ev)
		types = append(types, ev.Type+ev.Object.Metadata.Annotations["k8s.io/initial-events-end"])
	}
	stop()
	if d := cmp.Diff([]string{"ADDED", "BOOKMARKtrue"}, types); d != "" {
		t.Errorf("streaming list (-want +got):\n%s", d)
	}
	// Without the end bookmark, the next frame is a live event.
	sim.Faults().DropInitialEventsEnd(true)
	lines, stop = watchLines(t, url+q)
	defer stop()
	lines.Scan()
	call(t, "POST", url+"/api/v1/namespaces/a/pods", "", `{"metadata":{"name":"q"}}`)
	lines.Scan()
	if !strings.HasPrefix(lines.Text(), `{"type":"ADDED"`) || !strings.Contains(lines.Text(), `"name":"q"`) {
		t.Errorf("after the dropped bookmark: %s", lines.Text())
	}
	code, _ := call(t, "GET", url+"/api/v1/pods?watch=1&sendInitialEvents=true", "", "")
	if code != 422 {
		t.Errorf("sendInitialEvents without bookmarks: %d, want 422", code)
	}
}

func TestExpiredWatchIsAnErrorEvent(t *testing.T) {
	sim, url := start(t, apisim.Options{})
	call(t, "POST", url+"/api/v1/namespaces/a/pods", "", `{"metadata":{"name":"p"}}`)
	sim.Compact()
	call(t, "POST", url+"/api/v1/namespaces/a/pods", "", `{"metadata":{"name":"q"}}`)
	lines, stop := watchLines(t, url+"/api/v1/pods?watch=1&resourceVersion=1")
	defer stop()
	lines.Scan()
	var ev struct {
		Type   string
		Object struct {
			Kind   string
			Code   int
			Reason string
		}
	}
	json.Unmarshal(lines.Bytes(), &ev)
	if ev.Type != "ERROR" || ev.Object.Kind != "Status" || ev.Object.Code != 410 || ev.Object.Reason != "Expired" {
		t.Errorf("got %s", lines.Text())
	}
}

func TestHistoryWindowBoundsWatches(t *testing.T) {
	_, url := start(t, apisim.Options{HistoryWindow: 3})
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		call(t, "POST", url+"/api/v1/namespaces/a/pods", "", `{"metadata":{"name":"`+n+`"}}`)
	}
	lines, stop := watchLines(t, url+"/api/v1/pods?watch=1&resourceVersion=2")
	defer stop()
	lines.Scan()
	if !strings.Contains(lines.Text(), `"code":410`) {
		t.Errorf("watch from before the window: %s", lines.Text())
	}
	lines2, stop2 := watchLines(t, url+"/api/v1/pods?watch=1&resourceVersion=4")
	defer stop2()
	lines2.Scan()
	if !strings.Contains(lines2.Text(), `"name":"d"`) {
		t.Errorf("watch inside the window: %s", lines2.Text())
	}
}

func TestCloseEndsWatches(t *testing.T) {
	sim, url := start(t, apisim.Options{})
	resp, err := http.Get(url + "/api/v1/pods?watch=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, resp.Body)
		close(done)
	}()
	sim.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the open watch")
	}
}

// TestFutureResourceVersion mirrors e2e's TestFutureResourceVersion against the real
// apiserver: a NotOlderThan list at a revision not reached yet answers 504 with a
// ResourceVersionTooLarge cause and Retry-After; a watch from it is accepted and silent
// (no bookmarks either) until the store gets there, then sends what comes after.
func TestFutureResourceVersion(t *testing.T) {
	_, url := start(t, apisim.Options{BookmarkInterval: 50 * time.Millisecond})
	call(t, "POST", url+"/api/v1/namespaces/a/pods", "", `{"metadata":{"name":"p"}}`)
	_, list := call(t, "GET", url+"/api/v1/pods", "", "")
	rv, _ := strconv.Atoi(list["metadata"].(map[string]any)["resourceVersion"].(string))
	future := strconv.Itoa(rv + 2)
	resp, err := http.Get(url + "/api/v1/pods?resourceVersionMatch=NotOlderThan&resourceVersion=" + future)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Code    int
		Details struct{ Causes []struct{ Reason string } } // a cause's type is sent as "reason"
	}
	json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if resp.StatusCode != 504 || resp.Header.Get("Retry-After") == "" || len(st.Details.Causes) != 1 ||
		st.Details.Causes[0].Reason != "ResourceVersionTooLarge" {
		t.Errorf("list at a future RV: %d, Retry-After %q, %+v", resp.StatusCode, resp.Header.Get("Retry-After"), st)
	}

	lines, stop := watchLines(t, url+"/api/v1/pods?watch=1&allowWatchBookmarks=true&resourceVersion="+future)
	defer stop()
	got := make(chan string, 1)
	go func() {
		if lines.Scan() {
			got <- lines.Text()
		}
		close(got)
	}()
	select {
	case l := <-got:
		t.Fatalf("a watch from a future RV said %s before the store got there", l)
	case <-time.After(300 * time.Millisecond): // six bookmark intervals of silence
	}
	for _, n := range []string{"q", "r", "s"} { // rv+1, rv+2 (not after the watch's RV), rv+3
		call(t, "POST", url+"/api/v1/namespaces/a/pods", "", `{"metadata":{"name":"`+n+`"}}`)
	}
	if l := <-got; !strings.Contains(l, `"name":"s"`) {
		t.Errorf("first event after the future RV: %s", l)
	}
}
