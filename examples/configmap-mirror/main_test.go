package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// env is a simulated apiserver, a client for the test's own writes, and a client for the
// controller that goes through a proxy recording its requests.
type env struct {
	sim  *apisim.Server
	test *listwatch.Client // the test's writes and reads, straight to the simulator
	ctrl *listwatch.Client // the controller's, through the recorder

	mu       sync.Mutex
	requests []string // "METHOD namespace/name" of the controller's requests
}

func newEnv(t *testing.T) *env {
	t.Helper()
	leakcheck.Check(t)
	e := &env{sim: apisim.New(apisim.Options{})}
	t.Cleanup(func() { e.sim.Close() })
	url, err := e.sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(http.HandlerFunc(e.record))
	t.Cleanup(proxy.Close)
	if e.test, err = listwatch.New(&listwatch.Config{Host: url, QPS: -1}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.test.CloseIdleConnections)
	if e.ctrl, err = listwatch.New(&listwatch.Config{Host: proxy.URL, QPS: -1}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.ctrl.CloseIdleConnections)
	return e
}

// record notes the request, with the name it writes (from the URL, or a create's body),
// and hands it to the simulator.
func (e *env) record(w http.ResponseWriter, r *http.Request) {
	_, rest, ok := strings.Cut(r.URL.Path, "/namespaces/")
	if ok && strings.Contains(rest, "/configmaps") {
		ns, name, _ := strings.Cut(rest, "/configmaps")
		name = strings.TrimPrefix(name, "/")
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var obj object.Raw
			_ = json.Unmarshal(body, &obj)
			name = obj.Name
		}
		e.mu.Lock()
		e.requests = append(e.requests, r.Method+" "+ns+"/"+name)
		e.mu.Unlock()
	}
	e.sim.ServeHTTP(w, r)
}

// writes returns the controller's distinct writes, sorted.
func (e *env) writes() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, r := range e.requests {
		if !strings.HasPrefix(r, "GET ") && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

// start runs the controller on namespace until the test ends, and checks that it then
// stops cleanly.
func (e *env) start(t *testing.T, namespace string) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	logger := slog.New(slog.NewTextHandler(t.Output(), nil))
	go func() { done <- run(ctx, e.ctrl, namespace, 2, logger) }()
	stop = sync.OnceFunc(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run returned %v after cancellation, want nil", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("run did not return after cancellation")
		}
	})
	t.Cleanup(stop)
	return stop
}

func (e *env) configMaps(t *testing.T, ns string) *listwatch.Resource[*object.Raw] {
	t.Helper()
	info, err := e.test.Discover(context.Background(), "configmaps")
	if err != nil {
		t.Fatal(err)
	}
	return listwatch.For[*object.Raw](e.test, info, ns)
}

func create(t *testing.T, cms *listwatch.Resource[*object.Raw], name string, labels map[string]string, data string) {
	t.Helper()
	cm := &object.Raw{
		TypeMeta:   object.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: object.ObjectMeta{Name: name, Labels: labels},
	}
	cm.Unknown.Set("data", json.RawMessage(data))
	if _, err := cms.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
}

func patch(t *testing.T, cms *listwatch.Resource[*object.Raw], name, p string) {
	t.Helper()
	if _, err := cms.Patch(context.Background(), name, listwatch.MergePatch, []byte(p), ""); err != nil {
		t.Fatal(err)
	}
}

// waitForMirror waits until the named ConfigMap is a mirror of source with data want,
// or, when want is nil, until it does not exist.
func waitForMirror(t *testing.T, cms *listwatch.Resource[*object.Raw], name, source string, want map[string]string) {
	t.Helper()
	testwait.Until(t, 10*time.Second, func() string {
		cm, err := cms.Get(context.Background(), name)
		switch {
		case want == nil && object.IsNotFound(err):
			return ""
		case want == nil:
			return "it exists"
		case err != nil:
			return err.Error()
		}
		data, _ := stringMap(cm.Unknown.Get("data"))
		if maps.Equal(data, want) && cm.Labels[mirrorOf] == source {
			return ""
		}
		return "it is " + string(cm.Unknown.Get("data")) + " labelled " + cm.Labels[mirrorOf]
	}, "%s/%s: want data %v from %s", cms.Namespace(), name, want, source)
}

func TestMirrorsConfigMaps(t *testing.T) {
	e := newEnv(t)
	demo, elsewhere := e.configMaps(t, "demo"), e.configMaps(t, "elsewhere")

	// Before the controller starts: a source, a ConfigMap without the label, a source in
	// another namespace, and a mirror whose source was deleted while it was down.
	create(t, demo, "settings", map[string]string{"mirror": "yes"}, `{"mode":"fast","level":"3"}`)
	create(t, demo, "plain", nil, `{"a":"b"}`)
	create(t, elsewhere, "settings", map[string]string{"mirror": "yes"}, `{"mode":"slow"}`)
	create(t, demo, "gone-mirror", map[string]string{mirrorOf: "gone"}, `{"x":"y"}`)
	stop := e.start(t, "demo")

	waitForMirror(t, demo, "settings-mirror", "settings", map[string]string{"mode": "fast", "level": "3"})
	waitForMirror(t, demo, "gone-mirror", "", nil)

	// The source changes: a key changed, one removed, one added.
	patch(t, demo, "settings", `{"data":{"mode":"safe","level":null,"new":"1"}}`)
	waitForMirror(t, demo, "settings-mirror", "settings", map[string]string{"mode": "safe", "new": "1"})

	// Someone edits the mirror: it is repaired.
	patch(t, demo, "settings-mirror", `{"data":{"mode":"hacked"}}`)
	waitForMirror(t, demo, "settings-mirror", "settings", map[string]string{"mode": "safe", "new": "1"})

	// A source created while it runs; then deleted.
	create(t, demo, "flags", map[string]string{"mirror": "yes"}, `{"beta":"on"}`)
	waitForMirror(t, demo, "flags-mirror", "flags", map[string]string{"beta": "on"})
	if err := demo.Delete(context.Background(), "flags", listwatch.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForMirror(t, demo, "flags-mirror", "", nil)

	// A source that loses its label is no longer mirrored.
	patch(t, demo, "settings", `{"metadata":{"labels":{"mirror":null}}}`)
	waitForMirror(t, demo, "settings-mirror", "", nil)

	stop()
	// Never mirrored: the unlabelled ConfigMap, and the source of another namespace.
	waitForMirror(t, demo, "plain-mirror", "", nil)
	waitForMirror(t, elsewhere, "settings-mirror", "", nil)
	// The controller wrote only mirrors, all of them in its namespace.
	want := []string{
		"DELETE demo/flags-mirror", "DELETE demo/gone-mirror", "DELETE demo/settings-mirror",
		"PATCH demo/settings-mirror",
		"POST demo/flags-mirror", "POST demo/settings-mirror",
	}
	if got := e.writes(); !slices.Equal(got, want) {
		t.Errorf("the controller wrote\n%q\nwant\n%q", got, want)
	}
}

// A controller whose caches cannot sync (here every request on configmaps is forbidden)
// still stops cleanly when its context ends.
func TestStopsBeforeSync(t *testing.T) {
	e := newEnv(t)
	e.sim.Faults().Forbid("configmaps", true)
	stop := e.start(t, "demo")
	testwait.Eventually(t, 10*time.Second, func() bool {
		return slices.ContainsFunc(e.snapshot(), func(r string) bool { return strings.HasPrefix(r, "GET demo/") })
	}, "the controller never tried to list configmaps")
	stop()
	if w := e.writes(); len(w) != 0 {
		t.Errorf("wrote %q before its caches synced", w)
	}
}

func (e *env) snapshot() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.requests)
}

func TestMirrorPatch(t *testing.T) {
	cm := func(rv, data string) *object.Raw {
		r := &object.Raw{ObjectMeta: object.ObjectMeta{Namespace: "demo", Name: "x", ResourceVersion: rv}}
		if data != "" {
			r.Unknown.Set("data", json.RawMessage(data))
		}
		return r
	}
	for _, tc := range []struct{ src, mirror, want string }{
		{`{"a":"1"}`, `{"a":"1"}`, ""}, // up to date: no write
		{"", "", ""},
		{"", "null", ""},
		{`{"a":"1","b":"2"}`, `{"a":"0","c":"3"}`, `{"data":{"a":"1","b":"2","c":null},"metadata":{"resourceVersion":"7"}}`},
		{"", `{"a":"1"}`, `{"data":{"a":null},"metadata":{"resourceVersion":"7"}}`},
	} {
		got, err := mirrorPatch(cm("1", tc.src), cm("7", tc.mirror))
		if err != nil || string(got) != tc.want {
			t.Errorf("mirrorPatch(%s, %s) = %s, %v; want %s", tc.src, tc.mirror, got, err, tc.want)
		}
	}
	if _, err := mirrorPatch(cm("1", `{"a":1}`), cm("7", "")); err == nil {
		t.Error("mirrorPatch accepted data that is not a map of strings")
	}
}
