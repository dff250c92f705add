package apisim

import (
	"slices"
	"sort"
	"strconv"
	"sync"
)

// record is one stored object version: its decoded form (read-only once stored) and its
// encoding, shared by every list and watch that serves it.
type record struct {
	obj  map[string]any
	data []byte
	item []byte // data without kind and apiVersion, as items of a list are sent
}

// change is one entry of the history: what a write did to one key at one revision.
// prev is nil for a create, next is nil for a delete.
type change struct {
	rev      int64
	resource string // ResourceType.Resource qualified by group, see typeKey
	key      string
	prev     *record
	next     *record
	// tomb is what a DELETED event carries: the last state at the deletion revision.
	tomb *record
}

// store is a tiny MVCC store in the manner of etcd: one revision counter for all
// resources, the current objects, and a bounded history of changes. The history serves
// watches from a past revision and reconstructs past snapshots for paginated and Exact
// lists; compaction drops its oldest part, after which those revisions answer 410.
type store struct {
	mu        sync.Mutex
	rev       int64
	compacted int64 // revisions <= compacted are no longer in the history
	objects   map[string]map[string]*record
	history   []change
	window    int           // history entries kept by automatic compaction
	notify    chan struct{} // closed and replaced on every write: wakes watchers
	// observe, when set, sees every change as it is committed, in revision order and
	// under mu: the garbage collector keeps its ownership graph by it.
	observe func(change)
}

func newStore(window int) *store {
	return &store{rev: 1, objects: map[string]map[string]*record{}, window: window, notify: make(chan struct{})}
}

// commit records a write at a new revision (caller holds mu) and wakes watchers.
func (s *store) commit(resource, key string, prev, next *record) int64 {
	return s.apply(change{resource: resource, key: key, prev: prev, next: next})
}

// put stores obj as the new state of key (caller holds mu) and returns its record. An
// object marked for deletion that waits for nothing more (no finalizer left, no grace
// period running) is removed instead, as kube-apiserver turns such an update into the
// delete: watchers see DELETED carrying obj, not a MODIFIED first.
func (s *store) put(resource, key string, cur *record, obj map[string]any) *record {
	meta(obj)["resourceVersion"] = strconv.FormatInt(s.rev+1, 10)
	rec := encode(obj)
	if cur != nil && deletionDue(meta(obj)) && len(finalizers(obj)) == 0 {
		s.apply(change{resource: resource, key: key, prev: cur, tomb: rec})
	} else {
		s.apply(change{resource: resource, key: key, prev: cur, next: rec})
	}
	return rec
}

// remove deletes key (caller holds mu); last is the object's final state, which the
// DELETED event carries at the deletion's revision.
func (s *store) remove(resource, key string, cur *record, last map[string]any) *record {
	meta(last)["resourceVersion"] = strconv.FormatInt(s.rev+1, 10)
	rec := encode(last)
	s.apply(change{resource: resource, key: key, prev: cur, tomb: rec})
	return rec
}

// apply commits c at the next revision: the current objects, the history, the observer,
// then the watchers.
func (s *store) apply(c change) int64 {
	s.rev++
	c.rev = s.rev
	objs := s.objects[c.resource]
	if objs == nil {
		objs = map[string]*record{}
		s.objects[c.resource] = objs
	}
	if c.next == nil {
		delete(objs, c.key)
	} else {
		objs[c.key] = c.next
	}
	s.history = append(s.history, c)
	if s.window > 0 && len(s.history) > s.window {
		s.compactLocked(s.history[len(s.history)-s.window-1].rev)
	}
	if s.observe != nil {
		s.observe(c)
	}
	close(s.notify)
	s.notify = make(chan struct{})
	return s.rev
}

// compactLocked drops history up to and including rev.
func (s *store) compactLocked(rev int64) {
	if rev <= s.compacted {
		return
	}
	i := sort.Search(len(s.history), func(i int) bool { return s.history[i].rev > rev })
	s.history = slices.Clone(s.history[i:])
	s.compacted = rev
}

// snapshot returns the objects of resource as they were at rev, sorted by key. It undoes
// the history newer than rev; rev must not be older than the compacted revision.
func (s *store) snapshot(resource string, rev int64) []keyed {
	state := make(map[string]*record, len(s.objects[resource]))
	for k, r := range s.objects[resource] {
		state[k] = r
	}
	for i := len(s.history) - 1; i >= 0 && s.history[i].rev > rev; i-- {
		c := s.history[i]
		if c.resource != resource {
			continue
		}
		if c.prev == nil {
			delete(state, c.key)
		} else {
			state[c.key] = c.prev
		}
	}
	out := make([]keyed, 0, len(state))
	for k, r := range state {
		out = append(out, keyed{k, r})
	}
	slices.SortFunc(out, func(a, b keyed) int {
		if a.key < b.key {
			return -1
		}
		if a.key > b.key {
			return 1
		}
		return 0
	})
	return out
}

type keyed struct {
	key string
	rec *record
}

// since returns the history entries newer than rev (caller holds mu).
func (s *store) since(rev int64) []change {
	i := sort.Search(len(s.history), func(i int) bool { return s.history[i].rev > rev })
	return s.history[i:]
}
