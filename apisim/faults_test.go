package apisim_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/apisim"
)

// wireEvent is the part of a watch event the fault tests read.
type wireEvent struct {
	Type   string
	Object struct {
		Metadata struct{ Name, ResourceVersion string }
	}
}

// wireEvents streams a watch's events into a channel until the test ends.
func wireEvents(t *testing.T, url string) <-chan wireEvent {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("watch: %d", resp.StatusCode)
	}
	ch := make(chan wireEvent, 100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(ch)
		lines := bufio.NewScanner(resp.Body)
		for lines.Scan() {
			var ev wireEvent
			if err := json.Unmarshal(lines.Bytes(), &ev); err != nil {
				t.Errorf("watch event %s: %v", lines.Bytes(), err)
				return
			}
			ch <- ev
		}
	}()
	t.Cleanup(func() { resp.Body.Close(); <-done })
	return ch
}

// nextChange returns the next event that is not a bookmark, failing after timeout.
func nextChange(t *testing.T, ch <-chan wireEvent, timeout time.Duration) wireEvent {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case ev := <-ch:
			if ev.Type != "BOOKMARK" {
				return ev
			}
		case <-deadline:
			t.Fatalf("no event within %s", timeout)
		}
	}
}

func rvOf(t *testing.T, rv string) int {
	t.Helper()
	n, err := strconv.Atoi(rv)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", rv, err)
	}
	return n
}

// Held-back events of one resource reach its watches only when released, in order;
// meanwhile its bookmarks never claim a revision whose event is held, and the watches of
// other resources are not held. A finite delay sends each event no sooner than that.
func TestDelayWatchEvents(t *testing.T) {
	sim, url := start(t, apisim.Options{BookmarkInterval: 20 * time.Millisecond})
	rv := strconv.FormatInt(sim.ResourceVersion(), 10)
	pods := wireEvents(t, url+"/api/v1/pods?watch=1&allowWatchBookmarks=true&resourceVersion="+rv)
	cms := wireEvents(t, url+"/api/v1/configmaps?watch=1&resourceVersion="+rv)

	sim.Faults().DelayWatchEvents("pods", time.Hour)
	_, a := call(t, "POST", url+"/api/v1/namespaces/ns/pods", "", `{"metadata":{"name":"a"}}`)
	heldRV := rvOf(t, a["metadata"].(map[string]any)["resourceVersion"].(string))
	call(t, "POST", url+"/api/v1/namespaces/ns/pods", "", `{"metadata":{"name":"b"}}`)
	call(t, "POST", url+"/api/v1/namespaces/ns/configmaps", "", `{"metadata":{"name":"c"}}`)
	if ev := nextChange(t, cms, 5*time.Second); ev.Type != "ADDED" || ev.Object.Metadata.Name != "c" {
		t.Errorf("configmap watch: %+v, want ADDED c: only pods are held back", ev)
	}
	bookmarks := 0
	quiet := time.After(300 * time.Millisecond)
held:
	for {
		select {
		case ev := <-pods:
			if ev.Type != "BOOKMARK" {
				t.Fatalf("held-back pod watch sent %+v", ev)
			}
			if got := rvOf(t, ev.Object.Metadata.ResourceVersion); got >= heldRV {
				t.Fatalf("bookmark at %d while the event at %d is held back", got, heldRV)
			}
			bookmarks++
		case <-quiet:
			break held
		}
	}
	if bookmarks == 0 {
		t.Error("no bookmark while held: a held stream still says how far it got")
	}

	sim.Faults().DelayWatchEvents("pods", 0)
	var got []string
	for range 2 {
		ev := nextChange(t, pods, 5*time.Second)
		got = append(got, ev.Type+" "+ev.Object.Metadata.Name)
	}
	if d := cmp.Diff([]string{"ADDED a", "ADDED b"}, got); d != "" {
		t.Errorf("released events (-want +got):\n%s", d)
	}

	const delay = 200 * time.Millisecond
	sim.Faults().DelayWatchEvents("pods", delay)
	start := time.Now()
	call(t, "POST", url+"/api/v1/namespaces/ns/pods", "", `{"metadata":{"name":"d"}}`)
	ev := nextChange(t, pods, 5*time.Second)
	if ev.Object.Metadata.Name != "d" {
		t.Errorf("got %+v, want pod d", ev)
	}
	if waited := time.Since(start); waited < delay {
		t.Errorf("the event came after %s, before the %s delay", waited, delay)
	}
}
