package manager

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/selfsigned"
)

// fakeAPI answers TokenReviews and SubjectAccessReviews as an apiserver would, from its
// table of tokens and one rule (alice may get /metrics), and counts the reviews.
type fakeAPI struct {
	users map[string]user // by token

	mu                         sync.Mutex
	tokenReviews, accessReview int
	lastAccess                 subjectAccessReviewSpec
	failWith                   int // answer every review with this code, echoing the request
}

func newFakeAPI(t *testing.T) (*fakeAPI, *listwatch.Client) {
	f := &fakeAPI{users: map[string]user{
		"alice-token": {Username: "alice", UID: "alice-uid", Groups: []string{"scrapers", "system:authenticated"},
			Extra: map[string][]string{"scopes": {"metrics"}}},
		"bob-token":  {Username: "bob", Groups: []string{"system:authenticated"}},
		"root-token": {Username: "root", Groups: []string{"system:masters", "system:authenticated"}},
	}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := listwatch.New(&listwatch.Config{Host: srv.URL, BearerToken: "manager-token"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return f, c
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failWith != 0 {
		w.WriteHeader(f.failWith)
		fmt.Fprintf(w, `{"kind":"Status","status":"Failure","code":%d,"message":"cannot review %s"}`, f.failWith, body)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case tokenReviewPath:
		f.tokenReviews++
		var tr struct {
			Spec struct{ Token string }
		}
		_ = json.Unmarshal(body, &tr)
		u, ok := f.users[tr.Spec.Token]
		_ = json.NewEncoder(w).Encode(map[string]any{"kind": "TokenReview", "status": map[string]any{"authenticated": ok, "user": u}})
	case subjectAccessReviewPath:
		f.accessReview++
		var sar struct{ Spec subjectAccessReviewSpec }
		_ = json.Unmarshal(body, &sar)
		f.lastAccess = sar.Spec
		a := sar.Spec.NonResourceAttributes
		allowed := sar.Spec.User == "alice" && a.Verb == "get" && a.Path == "/metrics"
		_ = json.NewEncoder(w).Encode(map[string]any{"kind": "SubjectAccessReview", "status": map[string]any{"allowed": allowed, "reason": "the fake's rule"}})
	default:
		http.NotFound(w, r)
	}
}

// reviews returns the number of TokenReviews and SubjectAccessReviews answered.
func (f *fakeAPI) reviews() [2]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return [2]int{f.tokenReviews, f.accessReview}
}

func (f *fakeAPI) fail(code int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failWith = code
}

func httpsClient(t *testing.T, caPEM []byte) *http.Client {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("no certificate to trust")
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func call(t *testing.T, c *http.Client, method, url, auth string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// The secure port, as kube-controller-manager's: over TLS with the self-signed
// certificate, /healthz and /readyz open, everything else only for a token the apiserver
// authenticates, for a user it allows the verb on the path.
func TestSecureEndpoints(t *testing.T) {
	f := newFixture(t) // first: its leak check then runs after every close below
	api, reviews := newFakeAPI(t)
	r := start(t, Options{Client: f.c, Workers: 1, SecureServing: SecureServing{Addr: "127.0.0.1:0", Reviewer: reviews}})
	c := httpsClient(t, r.m.selfSignedPEM)
	base := "https://" + r.m.SecureAddr()
	testwait.Eventually(t, 5*time.Second, func() bool { code, _, _ := call(t, c, "GET", base+"/readyz", ""); return code == 200 },
		"/readyz is not 200 without a token")

	for _, tc := range []struct {
		name, method, path, auth string
		code                     int
		body                     string // in the answer
		reviews                  [2]int // TokenReviews and SubjectAccessReviews it costs
	}{
		{"healthz without a token", "GET", "/healthz", "", 200, "ok", [2]int{}},
		{"healthz with a rejected token", "GET", "/healthz", "Bearer made-up", 200, "ok", [2]int{}},
		{"no token", "GET", "/metrics", "", 401, "Unauthorized", [2]int{}},
		{"not a bearer token", "GET", "/metrics", "Basic YWxpY2U6c2VjcmV0", 401, "Unauthorized", [2]int{}},
		{"empty bearer token", "GET", "/metrics", "Bearer ", 401, "Unauthorized", [2]int{}},
		{"rejected token", "GET", "/metrics", "Bearer made-up", 401, "Unauthorized", [2]int{1, 0}},
		{"denied", "GET", "/metrics", "Bearer bob-token", 403, `forbidden: User "bob" cannot get path "/metrics": the fake's rule`, [2]int{1, 1}},
		{"allowed", "GET", "/metrics", "Bearer alice-token", 200, `workqueue_depth{name="replicaset"}`, [2]int{1, 1}},
		{"allowed, scheme in lower case", "GET", "/metrics", "bearer alice-token", 200, "workqueue_depth", [2]int{}}, // cached
		{"another verb", "POST", "/metrics", "Bearer alice-token", 403, `User "alice" cannot post path "/metrics"`, [2]int{0, 1}},
		{"another path", "GET", "/debug", "Bearer alice-token", 403, `cannot get path "/debug"`, [2]int{0, 1}},
		{"system:masters, no SubjectAccessReview", "GET", "/metrics", "Bearer root-token", 200, "workqueue_depth", [2]int{1, 0}},
	} {
		before := api.reviews()
		code, header, body := call(t, c, tc.method, base+tc.path, tc.auth)
		after := api.reviews()
		if code != tc.code || !strings.Contains(body, tc.body) {
			t.Errorf("%s: %d %q, want %d with %q", tc.name, code, body, tc.code, tc.body)
		}
		if code == 401 && header.Get("WWW-Authenticate") != "Bearer" {
			t.Errorf("%s: WWW-Authenticate %q", tc.name, header.Get("WWW-Authenticate"))
		}
		if cost := [2]int{after[0] - before[0], after[1] - before[1]}; cost != tc.reviews {
			t.Errorf("%s: cost %v reviews, want %v", tc.name, cost, tc.reviews)
		}
	}

	// What the last SubjectAccessReview (alice's GET /debug) asked: the user as the
	// TokenReview gave it, and the non-resource URL with the verb.
	want := subjectAccessReviewSpec{NonResourceAttributes: nonResourceAttributes{Path: "/debug", Verb: "get"},
		User: "alice", UID: "alice-uid", Groups: []string{"scrapers", "system:authenticated"}, Extra: map[string][]string{"scopes": {"metrics"}}}
	api.mu.Lock()
	got := api.lastAccess
	api.mu.Unlock()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the last SubjectAccessReview's spec (-want +got):\n%s", d)
	}

	// The plain port is not served unless asked for.
	if r.m.Addr() != "" {
		t.Errorf("a plain endpoint at %s without MetricsAddr", r.m.Addr())
	}
}

// Answers are kept 10 s, refusals too: a scraper costs two reviews every 10 s, and a
// client retrying a bad token costs one. A review that failed is not kept.
func TestReviewsAreCached(t *testing.T) {
	leakcheck.Check(t)
	api, c := newFakeAPI(t)
	clk := clock.NewFake(time.Unix(1000, 0))
	var logs bytes.Buffer
	guard := newReviewer(c, clk).guard(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "metrics")
	}), slog.New(slog.NewTextHandler(&logs, nil)))
	get := func(token string) int {
		req := httptest.NewRequest("GET", "/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		guard.ServeHTTP(rec, req)
		return rec.Code
	}
	for _, step := range []struct {
		name    string
		advance time.Duration // before the request
		token   string
		code    int
		reviews [2]int // in total so far
	}{
		{"first scrape", 0, "alice-token", 200, [2]int{1, 1}},
		{"second scrape", 0, "alice-token", 200, [2]int{1, 1}},
		{"9 s later", 9 * time.Second, "alice-token", 200, [2]int{1, 1}},
		{"past 10 s", 2 * time.Second, "alice-token", 200, [2]int{2, 2}},
		{"denied", 0, "bob-token", 403, [2]int{3, 3}},
		{"denied again", time.Second, "bob-token", 403, [2]int{3, 3}},
		{"rejected", 0, "made-up", 401, [2]int{4, 3}},
		{"rejected again", time.Second, "made-up", 401, [2]int{4, 3}},
		{"rejected past 10 s", 10 * time.Second, "made-up", 401, [2]int{5, 3}},
	} {
		clk.Step(step.advance)
		if code := get(step.token); code != step.code {
			t.Errorf("%s: %d, want %d", step.name, code, step.code)
		}
		if got := api.reviews(); got != step.reviews {
			t.Errorf("%s: %v reviews so far, want %v", step.name, got, step.reviews)
		}
	}

	// A failing apiserver: 401, the failure logged without the caller's token, and
	// nothing kept, so the next request asks again.
	clk.Step(time.Minute)
	api.fail(http.StatusInternalServerError)
	if code := get("alice-token"); code != 401 {
		t.Errorf("TokenReview failing: %d, want 401", code)
	}
	if !strings.Contains(logs.String(), "TokenReview") {
		t.Errorf("the failure is not logged:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "alice-token") {
		t.Errorf("the log shows the caller's token:\n%s", logs.String())
	}
	api.fail(0)
	if code := get("alice-token"); code != 200 {
		t.Errorf("after the apiserver recovered: %d, want 200", code)
	}
	if got := api.reviews(); got != [2]int{6, 4} {
		t.Errorf("%v reviews, want a fresh TokenReview and SubjectAccessReview (6, 4)", got)
	}
}

// A manager whose user may not create reviews answers 500 for the authorization it
// cannot check, and the log says which ClusterRole it lacks.
func TestForbiddenReviewsNameTheClusterRole(t *testing.T) {
	leakcheck.Check(t)
	api, c := newFakeAPI(t)
	var logs bytes.Buffer
	r := newReviewer(c, clock.Real{})
	guard := r.guard(http.NotFoundHandler(), slog.New(slog.NewTextHandler(&logs, nil)))
	if _, err := r.authenticate(context.Background(), "alice-token"); err != nil {
		t.Fatal(err)
	}
	api.fail(http.StatusForbidden)
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Authorization", "Bearer alice-token")
	rec := httptest.NewRecorder()
	guard.ServeHTTP(rec, req)
	if rec.Code != 500 {
		t.Errorf("SubjectAccessReview forbidden: %d, want 500", rec.Code)
	}
	if !strings.Contains(logs.String(), "system:auth-delegator") {
		t.Errorf("the log does not name system:auth-delegator:\n%s", logs.String())
	}
}

// A certificate given is the one served; none given, a self-signed one is made.
func TestGivenCertificateIsServed(t *testing.T) {
	f := newFixture(t)
	_, reviews := newFakeAPI(t)
	cert, caPEM, err := selfsigned.New("given")
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, Options{Client: f.c, Workers: 1, SecureServing: SecureServing{Addr: "127.0.0.1:0", Certificate: &cert, Reviewer: reviews}})
	if r.m.selfSignedPEM != nil {
		t.Error("a certificate was made though one was given")
	}
	resp, err := httpsClient(t, caPEM).Get("https://" + r.m.SecureAddr() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if cn := resp.TLS.PeerCertificates[0].Subject.CommonName; cn != "given" {
		t.Errorf("served the certificate %q, want the one given", cn)
	}
}
