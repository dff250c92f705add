package reflector_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
)

// expiringPager serves a list in pages whose continue token has always expired by the
// second page (410), as a slow relist meets etcd's compaction, and the whole list when
// asked without a limit. Every list hands out fresh objects, as a decoder does.
type expiringPager struct {
	n       int
	mu      sync.Mutex
	lists   []listwatch.ListOptions
	watches []*listwatch.Fake[*object.Pod]
}

func (p *expiringPager) List(_ context.Context, opts listwatch.ListOptions) (*object.List[*object.Pod], error) {
	p.mu.Lock()
	p.lists = append(p.lists, opts)
	p.mu.Unlock()
	if opts.Continue != "" {
		return nil, object.NewExpired("The provided continue parameter is too old")
	}
	list := &object.List[*object.Pod]{ListMeta: object.ListMeta{ResourceVersion: "10"}}
	for i := range p.n {
		list.Items = append(list.Items, &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: "ns", Name: fmt.Sprint("p", i), ResourceVersion: "5"}})
	}
	if opts.Limit > 0 && int(opts.Limit) < p.n {
		list.Items, list.Continue = list.Items[:opts.Limit], "token"
	}
	return list, nil
}

func (p *expiringPager) Watch(context.Context, listwatch.WatchOptions) (listwatch.Stream[*object.Pod], error) {
	w := listwatch.NewFake[*object.Pod]()
	p.mu.Lock()
	p.watches = append(p.watches, w)
	p.mu.Unlock()
	return w, nil
}

// reusingStore holds one state of every object and, as the informer's store does, offers
// it for each listed object in that state.
type reusingStore struct {
	logStore
	cached   map[string]*object.Pod
	mu       sync.Mutex
	replaced []*object.Pod
}

func (s *reusingStore) Reuse(p *object.Pod) *object.Pod {
	if c, ok := s.cached[object.Key(p)]; ok && c.ResourceVersion == p.ResourceVersion {
		return c
	}
	return p
}

func (s *reusingStore) Replace(ps []*object.Pod, rv string) {
	s.mu.Lock()
	s.replaced = ps
	s.mu.Unlock()
	s.logStore.Replace(ps, rv)
}

// The list that starts over after an expired continue token keeps the objects the store
// already holds, as the paged list does: a relist of unchanged objects never holds two
// copies of them (and this is the large-list path, where it matters most).
func TestExpiredContinueFallbackReusesCachedObjects(t *testing.T) {
	leakcheck.Check(t)
	const n = 5
	store := &reusingStore{cached: map[string]*object.Pod{}}
	for i := range n {
		p := &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: "ns", Name: fmt.Sprint("p", i), ResourceVersion: "5"}}
		store.cached[object.Key(p)] = p
	}
	lw := &expiringPager{n: n}
	r := reflector.New[*object.Pod](lw, store, reflector.Options{Name: "pods", PageSize: 2})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	testwait.Eventually(t, 10*time.Second, func() bool { return store.has(fmt.Sprint("replace ", n)) }, "waiting for the list")

	lw.mu.Lock()
	lists := lw.lists
	lw.mu.Unlock()
	if len(lists) != 3 || lists[1].Continue == "" || lists[2].Limit != 0 || lists[2].Continue != "" {
		t.Fatalf("lists %+v: want a first page, its expired continuation, then one unpaginated list", lists)
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	for _, p := range store.replaced {
		if p != store.cached[object.Key(p)] {
			t.Errorf("%s was handed over as a fresh copy, not the cached object in the same state", object.Key(p))
		}
	}
}
