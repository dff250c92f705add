package listwatch_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// recordingGuard admits writes outside namespace "theirs", and records what it was
// asked and how many of its admissions are still open.
type recordingGuard struct {
	mu     sync.Mutex
	asked  []listwatch.Write
	open   int
	within time.Duration // the leave it gives
}

var errNotOurs = errors.New("not ours")

func (g *recordingGuard) Admit(w listwatch.Write) (func(), time.Duration, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	w.Path = ""
	g.asked = append(g.asked, w)
	if w.Namespace == "theirs" {
		return nil, 0, errNotOurs
	}
	g.open++
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.open--
	}, g.within, nil
}

// A guarded client asks its Guard about every mutating request, each attempt of it (a
// 429 is retried: asked again), reads (lists, gets, watches) never; a refused request
// is not sent and says why; an admitted one is over once answered. The unguarded client
// it was made from is unchanged.
func TestGuardVetsEveryWriteAsItIsSent(t *testing.T) {
	var mu sync.Mutex
	var sent []string
	throttled := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sent = append(sent, r.Method+" "+r.URL.Path)
		retry := r.Method == http.MethodPatch && !throttled
		throttled = throttled || retry
		mu.Unlock()
		_, _ = io.Copy(io.Discard, r.Body)
		if retry {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"kind":"Status","status":"Failure","reason":"TooManyRequests","code":429}`)
			return
		}
		_, _ = io.WriteString(w, `{"metadata":{"name":"p","namespace":"ours"}}`)
	}))
	defer srv.Close()
	base, err := listwatch.New(&listwatch.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer base.CloseIdleConnections()
	g := &recordingGuard{}
	c := base.WithGuard(g)
	ctx := context.Background()
	info := listwatch.ResourceInfo{GroupVersionResource: listwatch.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: "Pod", Namespaced: true}
	ours := listwatch.For[*object.Pod](c, info, "ours")

	if _, err := ours.Get(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if _, err := ours.Patch(ctx, "p", listwatch.MergePatch, []byte(`{}`), "status"); err != nil {
		t.Fatal(err)
	}
	if err := listwatch.For[*object.Pod](c, info, "theirs").Delete(ctx, "q", listwatch.DeleteOptions{}); !errors.Is(err, errNotOurs) {
		t.Errorf("a refused delete: %v, want the Guard's error", err)
	}
	if _, err := listwatch.For[*object.Pod](base, info, "theirs").Get(ctx, "q"); err != nil {
		t.Fatal(err)
	}
	want := []listwatch.Write{
		{Method: http.MethodPatch, Namespace: "ours", Resource: "pods", Name: "p", Subresource: "status"},
		{Method: http.MethodPatch, Namespace: "ours", Resource: "pods", Name: "p", Subresource: "status"}, // the retry
		{Method: http.MethodDelete, Namespace: "theirs", Resource: "pods", Name: "q"},
	}
	if d := cmp.Diff(want, g.asked); d != "" {
		t.Errorf("the Guard was asked (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"GET /api/v1/namespaces/ours/pods/p", "PATCH /api/v1/namespaces/ours/pods/p/status",
		"PATCH /api/v1/namespaces/ours/pods/p/status", "GET /api/v1/namespaces/theirs/pods/q"}, sent); d != "" {
		t.Errorf("the server saw (-want +got):\n%s", d)
	}
	if g.open != 0 {
		t.Errorf("%d admitted writes never reported over", g.open)
	}
}
