package consistency

import (
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type source struct {
	mu sync.Mutex
	rv string
}

func (s *source) LastStoreSyncResourceVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rv
}

func (s *source) set(rv string) {
	s.mu.Lock()
	s.rv = rv
	s.mu.Unlock()
}

type write struct {
	owner        Owner
	resource, rv string
}

var (
	web  = Owner{Key: "ns/web", UID: "u1"}
	web2 = Owner{Key: "ns/web", UID: "u2"} // web deleted and created again
	api  = Owner{Key: "ns/api", UID: "u3"}
)

func TestReady(t *testing.T) {
	tests := []struct {
		name        string
		pods, rss   string // the caches' versions
		writes      []write
		clear       *Owner
		ask         Owner
		want        *StaleError // nil: ready
		recordsLeft int
	}{
		{name: "no writes", pods: "10", rss: "10", ask: web},
		{name: "cache caught up: ready, record dropped", pods: "12", rss: "10",
			writes: []write{{web, "pods", "12"}}, ask: web},
		{name: "cache behind", pods: "11", rss: "10", writes: []write{{web, "pods", "12"}}, ask: web,
			want: &StaleError{Owner: "ns/web", Resource: "pods", Wrote: "12", Read: "11"}, recordsLeft: 1},
		{name: "longer version is newer (KEP-5504)", pods: "99", rss: "10", writes: []write{{web, "pods", "100"}}, ask: web,
			want: &StaleError{Owner: "ns/web", Resource: "pods", Wrote: "100", Read: "99"}, recordsLeft: 1},
		{name: "the newest write of a resource counts, whatever the order of the answers", pods: "13", rss: "10",
			writes: []write{{web, "pods", "14"}, {web, "pods", "12"}}, ask: web,
			want: &StaleError{Owner: "ns/web", Resource: "pods", Wrote: "14", Read: "13"}, recordsLeft: 1},
		{name: "each resource against its own cache", pods: "20", rss: "15",
			writes: []write{{web, "pods", "12"}, {web, "replicasets.apps", "16"}}, ask: web,
			want: &StaleError{Owner: "ns/web", Resource: "replicasets.apps", Wrote: "16", Read: "15"}, recordsLeft: 1},
		{name: "owners are apart", pods: "11", rss: "10", writes: []write{{api, "pods", "12"}}, ask: web, recordsLeft: 1},
		{name: "a write for a new UID replaces the old object's record", pods: "11", rss: "10",
			writes: []write{{web, "pods", "12"}, {web2, "replicasets.apps", "10"}}, ask: web2},
		{name: "asked for another UID: the record is of an earlier object", pods: "11", rss: "10",
			writes: []write{{web, "pods", "12"}}, ask: web2},
		{name: "an empty UID matches any record", pods: "11", rss: "10", writes: []write{{web, "pods", "12"}}, ask: Owner{Key: "ns/web"},
			want: &StaleError{Owner: "ns/web", Resource: "pods", Wrote: "12", Read: "11"}, recordsLeft: 1},
		{name: "a cleared owner is ready", pods: "11", rss: "10", writes: []write{{web, "pods", "12"}}, clear: &web, ask: web},
		{name: "clearing an old UID keeps the new object's writes", pods: "11", rss: "10",
			writes: []write{{web2, "pods", "12"}}, clear: &web, ask: web2,
			want: &StaleError{Owner: "ns/web", Resource: "pods", Wrote: "12", Read: "11"}, recordsLeft: 1},
		{name: "clearing with no UID clears any", pods: "11", rss: "10", writes: []write{{web2, "pods", "12"}}, clear: &Owner{Key: "ns/web"}, ask: web2},
		{name: "a cache that has not listed never blocks", pods: "", rss: "10", writes: []write{{web, "pods", "12"}}, ask: web},
		{name: "versions that cannot be ordered never block", pods: "abc", rss: "10", writes: []write{{web, "pods", "12"}}, ask: web},
		{name: "a resource without a source is not recorded", pods: "10", rss: "10", writes: []write{{web, "secrets", "99"}}, ask: web},
		{name: "an empty version is not recorded", pods: "10", rss: "10", writes: []write{{web, "pods", ""}}, ask: web},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(map[string]Source{"pods": &source{rv: tt.pods}, "replicasets.apps": &source{rv: tt.rss}})
			for _, w := range tt.writes {
				s.WroteAt(w.owner, w.resource, w.rv)
			}
			if tt.clear != nil {
				s.Clear(*tt.clear)
			}
			err := s.Ready(tt.ask)
			var got *StaleError
			if err != nil && !errors.As(err, &got) {
				t.Fatalf("Ready = %v, not a *StaleError", err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Ready (-want +got):\n%s", d)
			}
			if n := s.Len(); n != tt.recordsLeft {
				t.Errorf("%d records left, want %d", n, tt.recordsLeft)
			}
		})
	}
}

// A stale owner becomes ready once its cache catches up (an event or a bookmark), and its
// record goes then: the store holds only writes not yet seen.
func TestReadyOnceCaughtUp(t *testing.T) {
	pods := &source{rv: "5"}
	s := New(map[string]Source{"pods": pods})
	s.WroteAt(web, "pods", "7")
	if s.Ready(web) == nil {
		t.Fatal("ready before the cache saw the write")
	}
	pods.set("7")
	if err := s.Ready(web); err != nil {
		t.Fatalf("Ready after the cache caught up: %v", err)
	}
	if s.Len() != 0 {
		t.Errorf("%d records kept after the owner became ready", s.Len())
	}
}

// Parallel writes (a sync's creates) and the checks of other owners race safely; the
// newest write wins.
func TestConcurrentWrites(t *testing.T) {
	pods := &source{rv: "1"}
	s := New(map[string]Source{"pods": pods})
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(2)
		go func() { defer wg.Done(); s.WroteAt(web, "pods", strconv.Itoa(100+i)) }()
		go func() { defer wg.Done(); _ = s.Ready(api) }()
	}
	wg.Wait()
	var stale *StaleError
	if err := s.Ready(web); !errors.As(err, &stale) || stale.Wrote != "149" {
		t.Errorf("Ready = %v, want stale at the newest write 149", err)
	}
}

// A nil Store is the guard turned off.
func TestNilStore(t *testing.T) {
	var s *Store
	s.WroteAt(web, "pods", "1")
	s.Clear(web)
	if err := s.Ready(web); err != nil || s.Len() != 0 {
		t.Errorf("nil store: Ready %v, Len %d", err, s.Len())
	}
}

// ClearNamespaces forgets the writes of the owners in the namespaces it is given, and
// only those: a sharded controller manager handed them away.
func TestClearNamespaces(t *testing.T) {
	owners := []Owner{web, api, {Key: "other/web", UID: "u4"}, {Key: "node-1", UID: "u5"}}
	tests := []struct {
		name        string
		gone        func(string) bool
		wantCleared int
		wantWaiting []string
	}{
		{"one namespace", func(ns string) bool { return ns == "ns" }, 2, []string{"other/web", "node-1"}},
		{"none", func(string) bool { return false }, 0, []string{"ns/web", "ns/api", "other/web", "node-1"}},
		{"all", func(string) bool { return true }, 4, nil},
		{"a cluster-scoped owner is in the namespace \"\"", func(ns string) bool { return ns == "" }, 1,
			[]string{"ns/web", "ns/api", "other/web"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(map[string]Source{"pods": &source{rv: "10"}})
			for _, o := range owners {
				s.WroteAt(o, "pods", "12")
			}
			if got := s.ClearNamespaces(tt.gone); got != tt.wantCleared {
				t.Errorf("ClearNamespaces cleared %d owners, want %d", got, tt.wantCleared)
			}
			var waiting []string
			for _, o := range owners {
				if s.Ready(o) != nil {
					waiting = append(waiting, o.Key)
				}
			}
			if d := cmp.Diff(tt.wantWaiting, waiting); d != "" {
				t.Errorf("owners still waiting for their writes (-want +got):\n%s", d)
			}
		})
	}
	var s *Store
	if got := s.ClearNamespaces(func(string) bool { return true }); got != 0 {
		t.Errorf("a nil store cleared %d", got)
	}
}
