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

// commitOp says what a commit does to its key.
type commitOp int

const (
	// commitPut stores the object as the key's new state, unless the object is marked
	// for deletion and waits for nothing more (no finalizer left, no grace period
	// running): then the key is deleted, as kube-apiserver turns such an update into the
	// delete, so watchers see DELETED carrying the object and no MODIFIED first.
	commitPut commitOp = iota
	// commitRemove deletes the key; the object is its final state, which the DELETED
	// event carries.
	commitRemove
)

// commit is the store's only write (caller holds mu). It gives obj the next revision as
// its metadata.resourceVersion, so that an object's version is always the revision of the
// change that stored it, then records the change (prev is the state it replaces, nil for
// a create), tells the observer and wakes the watchers. It returns the committed record,
// which keeps obj: lists and watches share it, so no one may change obj afterwards.
func (s *store) commit(resource, key string, prev *record, obj map[string]any, op commitOp) *record {
	s.rev++
	meta(obj)["resourceVersion"] = strconv.FormatInt(s.rev, 10)
	rec := encode(obj)
	c := change{rev: s.rev, resource: resource, key: key, prev: prev}
	if op == commitRemove || prev != nil && deletionDue(meta(obj)) && len(finalizers(obj)) == 0 {
		c.tomb = rec
	} else {
		c.next = rec
	}
	objs := s.objects[resource]
	if objs == nil {
		objs = map[string]*record{}
		s.objects[resource] = objs
	}
	if c.next == nil {
		delete(objs, key)
	} else {
		objs[key] = c.next
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
	return rec
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
