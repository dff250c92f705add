package apisim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/kinformer/kinformer/object"
)

// Options configure a simulator. The zero value is usable.
type Options struct {
	// HistoryWindow is how many changes the store keeps for watches from a past
	// resourceVersion and for continue tokens (default 10000). Older ones answer 410.
	HistoryWindow int
	// BookmarkInterval is how often a watch that allows bookmarks gets one (default 1 s;
	// the real apiserver sends one about every minute).
	BookmarkInterval time.Duration
	// Token, when set, is the bearer token every request must carry (else 401).
	Token string
	// Now replaces the clock used for creationTimestamp.
	Now func() time.Time
}

// Server is an in-memory apiserver speaking the Kubernetes REST list/watch protocol over
// HTTP. It is for unit tests, the demo and benchmarks; compatibility claims need the real
// apiserver.
type Server struct {
	opts   Options
	store  *store
	faults *Faults
	gc     *collector

	mu    sync.RWMutex
	types map[string]ResourceType // by typeKey

	ctx    context.Context // cancelled by Close: ends every watch and the collector
	cancel context.CancelFunc
	closed bool           // guarded by mu; no watch starts once set
	wg     sync.WaitGroup // running watch handlers and the collector
	http   *http.Server
}

// New returns a simulator serving DefaultTypes, with its garbage collector running until
// Close.
func New(opts Options) *Server {
	if opts.HistoryWindow == 0 {
		opts.HistoryWindow = 10000
	}
	if opts.BookmarkInterval == 0 {
		opts.BookmarkInterval = time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	st := newStore(opts.HistoryWindow)
	s := &Server{opts: opts, store: st, faults: &Faults{}, gc: newCollector(st, opts.Now),
		types: map[string]ResourceType{}, ctx: ctx, cancel: cancel}
	st.observe = s.gc.observe
	for _, t := range DefaultTypes() {
		s.Register(t)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.gc.run(ctx)
	}()
	return s
}

// Register adds a resource type (like creating a CRD).
func (s *Server) Register(t ResourceType) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.types[typeKey(t.Group, t.Resource)] = t
}

// Faults returns the fault-injection controls.
func (s *Server) Faults() *Faults { return s.faults }

// Compact drops the whole change history: watches and continue tokens from any earlier
// revision now answer 410 Expired, as after an etcd compaction.
func (s *Server) Compact() {
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	s.store.compactLocked(s.store.rev)
}

// ResourceVersion returns the current revision.
func (s *Server) ResourceVersion() int64 {
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	return s.store.rev
}

// Start listens on addr ("127.0.0.1:0" for any free port) and serves until Close. It
// returns the server's base URL.
func (s *Server) Start(addr string) (string, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return s.ctx }}
	go func() { _ = s.http.Serve(l) }()
	return "http://" + l.Addr().String(), nil
}

// Close ends every watch, stops serving and the garbage collector, and waits for the
// watch handlers and the collector to return. Cascading deletions not yet done stay
// undone.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	var err error
	if s.http != nil {
		err = s.http.Close()
	}
	s.wg.Wait()
	return err
}

// enter registers a running watch handler, unless the server is closing.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	return true
}

func typeKey(group, resource string) string {
	if group == "" {
		return resource
	}
	return resource + "." + group
}

// ServeHTTP routes a request: discovery, health, then the resource paths.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/healthz", "/readyz", "/livez":
		_, _ = w.Write([]byte("ok"))
		return
	}
	if s.opts.Token != "" && r.Header.Get("Authorization") != "Bearer "+s.opts.Token {
		writeError(w, object.NewStatusError(http.StatusUnauthorized, object.ReasonUnauthorized, "Unauthorized"))
		return
	}
	if err := s.faults.before(r); err != nil {
		writeError(w, err)
		return
	}
	if s.serveDiscovery(w, r) {
		return
	}
	req, err := s.parsePath(r.URL.Path)
	if err != nil {
		writeError(w, err)
		return
	}
	if err := s.faults.forbidden(req.typ.Resource); err != nil {
		writeError(w, err)
		return
	}
	s.serveResource(w, r, req)
}

// apiRequest is a parsed resource path.
type apiRequest struct {
	typ       ResourceType
	namespace string
	name      string
	sub       string
}

func (s *Server) parsePath(path string) (apiRequest, error) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	notFound := object.NewStatusError(http.StatusNotFound, object.ReasonNotFound, "the server could not find the requested resource")
	var group, version string
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		version, parts = parts[1], parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		group, version, parts = parts[1], parts[2], parts[3:]
	default:
		return apiRequest{}, notFound
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	lookup := func(res string) (ResourceType, bool) {
		t, ok := s.types[typeKey(group, res)]
		return t, ok && t.Version == version
	}
	var req apiRequest
	if len(parts) >= 3 && parts[0] == "namespaces" {
		if t, ok := lookup(parts[2]); ok && t.Namespaced {
			req.namespace, parts = parts[1], parts[2:]
		}
	}
	t, ok := lookup(parts[0])
	if !ok || len(parts) > 3 {
		return apiRequest{}, notFound
	}
	req.typ = t
	if len(parts) > 1 {
		req.name = parts[1]
	}
	if len(parts) > 2 {
		req.sub = parts[2]
		if !(req.sub == "status" && t.Status) && !(req.sub == "scale" && t.Scale) && !(req.sub == "binding" && isPods(t)) {
			return apiRequest{}, notFound
		}
	}
	return req, nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":500}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

func writeRaw(w http.ResponseWriter, code int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

func writeError(w http.ResponseWriter, err error) {
	var se *object.StatusError
	if !errors.As(err, &se) {
		se = object.NewStatusError(http.StatusInternalServerError, object.ReasonInternalError, "%v", err)
	}
	// Like the apiserver, a retry hint in the Status is also sent as Retry-After.
	if d, ok := object.RetryAfter(se); ok {
		w.Header().Set("Retry-After", fmt.Sprint(int(d.Seconds())))
	}
	writeJSON(w, int(se.Status.Code), se.Status)
}

func badRequest(format string, args ...any) *object.StatusError {
	return object.NewStatusError(http.StatusBadRequest, object.ReasonBadRequest, format, args...)
}

func invalid(format string, args ...any) *object.StatusError {
	return object.NewStatusError(http.StatusUnprocessableEntity, object.ReasonInvalid, format, args...)
}

// tooLargeRV is the apiserver's answer to a resourceVersion newer than it has: 504 with
// a ResourceVersionTooLarge cause and a one-second retry hint. (The real apiserver first
// waits up to 3 s for its watch cache to catch up; the simulator has no lag to wait for.)
func tooLargeRV(asked, current int64) *object.StatusError {
	e := object.NewStatusError(http.StatusGatewayTimeout, object.ReasonTimeout, "Too large resource version: %d, current: %d", asked, current)
	e.Status.Details = &object.StatusDetails{Causes: []object.StatusCause{{Type: "ResourceVersionTooLarge", Message: "Too large resource version"}}, RetryAfterSeconds: 1}
	return e
}
