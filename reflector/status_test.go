package reflector_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
)

// fakeSource is an in-memory ListerWatcher: each List answers the pods given at that
// moment, each Watch hands the test a new listwatch.Fake.
type fakeSource struct {
	mu      sync.Mutex
	rv      string
	pods    []*object.Pod
	lists   int
	watches chan *listwatch.Fake[*object.Pod]
}

func newFakeSource(rv string, names ...string) *fakeSource {
	s := &fakeSource{rv: rv, watches: make(chan *listwatch.Fake[*object.Pod], 4)}
	for _, n := range names {
		s.pods = append(s.pods, &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: "ns", Name: n, ResourceVersion: rv}})
	}
	return s
}

func (s *fakeSource) List(ctx context.Context, opts listwatch.ListOptions) (*object.List[*object.Pod], error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lists++
	l := &object.List[*object.Pod]{Items: append([]*object.Pod(nil), s.pods...)}
	l.ResourceVersion = s.rv
	return l, nil
}

func (s *fakeSource) Watch(ctx context.Context, opts listwatch.WatchOptions) (listwatch.Stream[*object.Pod], error) {
	w := listwatch.NewFake[*object.Pod]()
	s.watches <- w
	return w, nil
}

// nextWatch returns the stream of the reflector's next watch.
func (s *fakeSource) nextWatch(t *testing.T) *listwatch.Fake[*object.Pod] {
	t.Helper()
	select {
	case w := <-s.watches:
		return w
	case <-time.After(10 * time.Second):
		t.Fatal("the reflector did not watch")
		return nil
	}
}

// TestRelistIsOneLogLineAndOneTransition: a 410 on the stream relists; an operator reads
// it in one log line with its reason, and an OnStatus subscriber sees it as a transition
// with Relists counted, without hearing of every event's resourceVersion.
func TestRelistIsOneLogLineAndOneTransition(t *testing.T) {
	leakcheck.Check(t)
	src := newFakeSource("10", "a", "b")
	var logs bytes.Buffer
	var logMu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, nil)) // Info and up
	store := &logStore{}
	r := reflector.New[*object.Pod](src, store, reflector.Options{Name: "pods", Logger: logger})
	var (
		mu          sync.Mutex
		transitions []reflector.Status
	)
	remove := r.OnStatus(func(s reflector.Status) {
		mu.Lock()
		transitions = append(transitions, s)
		mu.Unlock()
	})
	defer remove()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	w := src.nextWatch(t)
	for i := range 5 {
		rv := []string{"11", "12", "13", "14", "15"}[i]
		if err := w.Modify(&object.Pod{ObjectMeta: object.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: rv}}); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	before := len(transitions)
	mu.Unlock()
	w.Fail(object.NewExpired("too old resource version: 15 (20)"))
	src.nextWatch(t) // the watch after the relist

	if r.Status().Relists != 1 {
		t.Errorf("Relists = %d, want 1", r.Status().Relists)
	}
	logMu.Lock()
	text := logs.String()
	logMu.Unlock()
	if n := strings.Count(text, "relisting"); n != 1 || !strings.Contains(text, "too old resource version") {
		t.Errorf("want one relist line with its reason, got:\n%s", text)
	}
	if n := strings.Count(text, "\n"); n != 1 {
		t.Errorf("want nothing logged but the relist at info level, got:\n%s", text)
	}
	mu.Lock()
	defer mu.Unlock()
	// Listing, Listed, Watching, the first event clearing nothing...: a handful for
	// the first list, none for the five events, then the relist's few.
	if before > 6 {
		t.Errorf("%d transitions before the relist for 5 events: events are reported", before)
	}
	var sawRelist bool
	for _, s := range transitions[before:] {
		if s.State == reflector.StateListing && s.Relists == 1 && s.LastError != nil && strings.Contains(s.LastError.Error(), "too old") {
			sawRelist = true
		}
	}
	if !sawRelist {
		t.Errorf("no Listing transition carrying the relist and its reason: %+v", transitions[before:])
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
