package listwatch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/object"
)

// The test binary doubles as the exec credential plugin of these tests: started with
// fakePluginDirEnv set, it plays the plugin instead of running tests.
const fakePluginDirEnv = "KINFORMER_TEST_EXEC_PLUGIN_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(fakePluginDirEnv); dir != "" {
		os.Exit(fakePlugin(dir))
	}
	os.Exit(m.Run())
}

// fakePlugin is an exec credential plugin that counts its runs in dir and prints a new
// token each time (pluginToken of its run), expiring at the time written in dir/expires
// if there is one, in the apiVersion KUBERNETES_EXEC_INFO asks for.
func fakePlugin(dir string) int {
	var info struct {
		APIVersion string `json:"apiVersion"`
	}
	if err := json.Unmarshal([]byte(os.Getenv("KUBERNETES_EXEC_INFO")), &info); err != nil {
		fmt.Fprintln(os.Stderr, "fake plugin: KUBERNETES_EXEC_INFO:", err)
		return 1
	}
	if _, err := os.Stat(filepath.Join(dir, "hang")); err == nil {
		time.Sleep(time.Hour) // a plugin waiting for something that never comes
	}
	n := pluginRuns(dir) + 1
	// Written aside and renamed: the test server reads the count concurrently.
	tmp := filepath.Join(dir, "runs.tmp")
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(n)), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "fake plugin:", err)
		return 1
	}
	if err := os.Rename(tmp, filepath.Join(dir, "runs")); err != nil {
		fmt.Fprintln(os.Stderr, "fake plugin:", err)
		return 1
	}
	status := map[string]string{"token": pluginToken(n)}
	if exp, err := os.ReadFile(filepath.Join(dir, "expires")); err == nil {
		status["expirationTimestamp"] = string(exp)
	}
	_ = json.NewEncoder(os.Stdout).Encode(map[string]any{"apiVersion": info.APIVersion, "kind": "ExecCredential", "status": status})
	return 0
}

func pluginRuns(dir string) int {
	b, _ := os.ReadFile(filepath.Join(dir, "runs"))
	n, _ := strconv.Atoi(string(b))
	return n
}

func pluginToken(run int) string { return fmt.Sprintf("exec-token-%d", run) }

// tokenServer is an apiserver that accepts only the newest token the fake plugin in dir
// has issued, and none of the runs up to revoked. It serves an empty pod list, and a
// watch (chunked or websocket) of one event.
type tokenServer struct {
	dir     string
	revoked atomic.Int64
	// onReject, when set, runs before each 401 is written.
	onReject func()
}

const (
	emptyPodList = `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`
	podAdded     = `{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"default","resourceVersion":"2"}}}`
)

func (s *tokenServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := pluginRuns(s.dir)
	if r.Header.Get("Authorization") != "Bearer "+pluginToken(n) || int64(n) <= s.revoked.Load() {
		if s.onReject != nil {
			s.onReject()
		}
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`)
		return
	}
	switch {
	case r.URL.Query().Get("watch") == "":
		fmt.Fprint(w, emptyPodList)
	case websocket.IsWebSocketUpgrade(r):
		up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		_ = conn.WriteMessage(websocket.TextMessage, []byte(podAdded))
		_ = conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	default:
		fmt.Fprintln(w, podAdded)
	}
}

// execClient returns a client whose credential comes from the fake plugin, speaking
// apiVersion, and the server that checks it. now, when set, is the plugin cache's clock.
func execClient(t *testing.T, apiVersion string, now func() time.Time) (*Client, *tokenServer) {
	t.Helper()
	leakcheck.Check(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ts := &tokenServer{dir: t.TempDir()}
	srv := httptest.NewServer(ts)
	t.Cleanup(srv.Close)
	c, err := New(&Config{Host: srv.URL, QPS: -1, Exec: &ExecConfig{APIVersion: apiVersion, Command: self,
		Env: []ExecEnvVar{{Name: fakePluginDirEnv, Value: ts.dir}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	if now != nil {
		c.auth.exec.now = now
	}
	return c, ts
}

func testPods(c *Client) *Resource[*object.Pod] {
	return For[*object.Pod](c, ResourceInfo{GroupVersionResource: GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: "Pod", Namespaced: true}, "default")
}

// TestExecCredentialIsCachedUntilExpiry: the plugin runs once for many requests, and
// again once its expirationTimestamp has passed, for both versions of the protocol.
func TestExecCredentialIsCachedUntilExpiry(t *testing.T) {
	for _, version := range []string{execAPIVersion, execAPIVersionV1beta1} {
		t.Run(version, func(t *testing.T) {
			start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			var elapsed atomic.Int64
			c, ts := execClient(t, version, func() time.Time { return start.Add(time.Duration(elapsed.Load())) })
			expires := start.Add(time.Hour).Format(time.RFC3339)
			if err := os.WriteFile(filepath.Join(ts.dir, "expires"), []byte(expires), 0o600); err != nil {
				t.Fatal(err)
			}
			pods := testPods(c)
			list := func(when string, wantRuns int) {
				t.Helper()
				if _, err := pods.List(testwait.Context(t, 30*time.Second), ListOptions{}); err != nil {
					t.Fatalf("%s: %v", when, err)
				}
				if n := pluginRuns(ts.dir); n != wantRuns {
					t.Errorf("%s: the plugin ran %d times, want %d", when, n, wantRuns)
				}
			}
			for range 3 {
				list("three requests", 1)
			}
			elapsed.Store(int64(59 * time.Minute))
			list("a minute before expirationTimestamp", 1)
			elapsed.Store(int64(time.Hour + time.Second))
			// The server takes only the newest token: success means it was sent.
			list("after expirationTimestamp", 2)
		})
	}
}

// TestExec401RunsPluginAgainAndRetriesOnce: a token the server no longer takes is
// replaced by running the plugin again and the request is retried with the new one,
// on lists and on both kinds of watch; a server that rejects every token gets exactly
// one retry, not a loop.
func TestExec401RunsPluginAgainAndRetriesOnce(t *testing.T) {
	ways := []struct {
		name string
		do   func(context.Context, *Resource[*object.Pod]) error
	}{
		{"list", func(ctx context.Context, r *Resource[*object.Pod]) error {
			_, err := r.List(ctx, ListOptions{})
			return err
		}},
		{"chunked watch", func(ctx context.Context, r *Resource[*object.Pod]) error { return watchOne(ctx, r, false) }},
		{"websocket watch", func(ctx context.Context, r *Resource[*object.Pod]) error { return watchOne(ctx, r, true) }},
	}
	for _, way := range ways {
		request := way.do
		t.Run(way.name, func(t *testing.T) {
			c, ts := execClient(t, execAPIVersion, nil)
			pods := testPods(c)
			if err := request(testwait.Context(t, 30*time.Second), pods); err != nil {
				t.Fatal(err)
			}
			ts.revoked.Store(int64(pluginRuns(ts.dir)))
			if err := request(testwait.Context(t, 30*time.Second), pods); err != nil {
				t.Fatalf("after the token was revoked: %v", err)
			}
			if n := pluginRuns(ts.dir); n != 2 {
				t.Errorf("the plugin ran %d times, want 2 (once more after the 401)", n)
			}
			ts.revoked.Store(1 << 40) // every token, including those to come
			err := request(testwait.Context(t, 30*time.Second), pods)
			if !object.IsUnauthorized(err) {
				t.Errorf("a server that takes no token: error %v, want 401", err)
			}
			if n := pluginRuns(ts.dir); n != 3 {
				t.Errorf("a server that takes no token: the plugin ran %d times in all, want 3 (one retry)", n)
			}
		})
	}
}

// watchOne opens a watch and reads its one event.
func watchOne(ctx context.Context, r *Resource[*object.Pod], ws bool) error {
	w, err := r.Watch(ctx, WatchOptions{WebSocket: ws})
	if err != nil {
		return err
	}
	defer w.Close()
	ev, err := w.Next()
	if err != nil {
		return err
	}
	if ev.Type != Added || ev.Object.Name != "a" {
		return fmt.Errorf("event %s %s, want ADDED a", ev.Type, ev.Object.Name)
	}
	return nil
}

// TestExecConcurrent401sRunPluginOnce: when a token is revoked under many requests in
// flight, all of them get a 401 for the same token; the plugin must run once for all,
// not once per request.
func TestExecConcurrent401sRunPluginOnce(t *testing.T) {
	const inFlight = 8
	c, ts := execClient(t, execAPIVersion, nil)
	pods := testPods(c)
	if _, err := pods.List(testwait.Context(t, 30*time.Second), ListOptions{}); err != nil {
		t.Fatal(err)
	}
	ts.revoked.Store(1)
	// The 401s are held until every request has been rejected, so that all of them
	// carry the revoked token.
	var rejected atomic.Int32
	allRejected := make(chan struct{})
	ts.onReject = func() {
		if rejected.Add(1) == inFlight {
			close(allRejected)
		}
		select {
		case <-allRejected:
		case <-time.After(5 * time.Second):
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, inFlight)
	for range inFlight {
		wg.Go(func() {
			_, err := pods.List(testwait.Context(t, 30*time.Second), ListOptions{})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := pluginRuns(ts.dir); n != 2 {
		t.Errorf("the plugin ran %d times, want 2: once at first, once for all the 401s", n)
	}
}

// TestExecPluginStderrIsScrubbed: what a failing plugin printed reaches the error, minus
// anything shaped like a credential.
func TestExecPluginStderrIsScrubbed(t *testing.T) {
	jwt := "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.c2lnbmF0dXJlMTIzNDU2"
	tests := []struct {
		stderr, known string
		want          string
	}{
		{"error: token " + jwt + " expired", "", "error: token [redacted] expired"},
		{"refresh failed, cached: ghp_4f3Xk29Lm0QpZr7TtYw81uVbNc5dEe", "", "refresh failed, cached: [redacted]"},
		{"key: MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7", "", "key: [redacted]"},
		{"old token short1 was rejected", "short1", "old token [redacted] was rejected"},
		// What a user must read survives.
		{"not logged in: run `aws sso login --profile dev` first", "", "not logged in: run `aws sso login --profile dev` first"},
		{"exec: /usr/local/bin/aws-iam-authenticator: permission denied", "", "exec: /usr/local/bin/aws-iam-authenticator: permission denied"},
		{"  request 2030-01-01T00:00:00Z failed  \n", "", "request 2030-01-01T00:00:00Z failed"},
	}
	for _, tt := range tests {
		if got := scrubCredentials(tt.stderr, tt.known); got != tt.want {
			t.Errorf("scrubCredentials(%q)\n got %q\nwant %q", tt.stderr, got, tt.want)
		}
	}
	long := scrubCredentials(strings.Repeat("why ", 1000))
	if len(long) > maxPluginMessage+len("...") {
		t.Errorf("a long stderr is cut to %d bytes, got %d", maxPluginMessage, len(long))
	}
}

// A plugin that hangs fails the request within the timeout, naming the plugin and the
// timeout, instead of holding every request behind it forever.
func TestExecPluginThatHangsTimesOut(t *testing.T) {
	c, ts := execClient(t, execAPIVersion, nil)
	c.auth.exec.timeout = 300 * time.Millisecond
	if err := os.WriteFile(filepath.Join(ts.dir, "hang"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := testPods(c).List(context.Background(), ListOptions{})
	self, _ := os.Executable()
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("exec credential plugin %q did not answer within 300ms", self)) {
		t.Errorf("List = %v, want the plugin's timeout", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the request took %v: the timeout was not enforced", took)
	}
}
