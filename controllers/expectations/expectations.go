package expectations

import (
	"sync"
	"time"

	"github.com/kinformer/kinformer/object"
)

// DefaultTTL is how long a record may stay unmet before it counts as met.
const DefaultTTL = 5 * time.Minute

// Expectations holds one record per controller key (a ReplicaSet's "namespace/name").
// It is safe for concurrent use by workers and event handlers.
type Expectations struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	records map[string]*record
}

// record is what one controller key still waits for.
type record struct {
	adds    int
	deletes map[string]struct{} // keys of the objects whose deletion is awaited
	// uncertain are creates that got no answer (a lost response): each still counts in
	// adds until the informer shows the object or a read proves it was never made.
	uncertain map[string]time.Time // object key → when the create was sent
	at        time.Time            // when the writes were recorded
}

// New returns empty expectations with the given TTL (0: DefaultTTL) and clock (nil: time.Now).
func New(ttl time.Duration, now func() time.Time) *Expectations {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if now == nil {
		now = time.Now
	}
	return &Expectations{ttl: ttl, now: now, records: map[string]*record{}}
}

// ExpectCreations records n creations about to be issued for key, replacing any record.
func (e *Expectations) ExpectCreations(key string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.records[key] = &record{adds: n, at: e.now()}
}

// ExpectDeletions records the deletions of the objects with objKeys about to be issued
// for key, replacing any record.
func (e *Expectations) ExpectDeletions(key string, objKeys []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := &record{deletes: make(map[string]struct{}, len(objKeys)), at: e.now()}
	for _, k := range objKeys {
		r.deletes[k] = struct{}{}
	}
	e.records[key] = r
}

// CreationObserved lowers key's pending creations by one: the informer showed a created
// object, or a create call failed and never will.
func (e *Expectations) CreationObserved(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r := e.records[key]; r != nil && r.adds > 0 {
		r.adds--
	}
}

// CreationObservedOf lowers key's pending creations for the created object objKey,
// settling it if its create was uncertain.
func (e *Expectations) CreationObservedOf(key, objKey string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := e.records[key]
	if r == nil {
		return
	}
	delete(r.uncertain, objKey)
	if r.adds > 0 {
		r.adds--
	}
}

// CreationUncertain records that the create of objKey got no answer: it may have been
// made. It stays expected, so no sync creates a replacement for a pod that exists.
func (e *Expectations) CreationUncertain(key, objKey string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r := e.records[key]; r != nil {
		if r.uncertain == nil {
			r.uncertain = map[string]time.Time{}
		}
		r.uncertain[objKey] = e.now()
	}
}

// Uncertain returns the creates of key that got no answer more than age ago, for the
// controller to check on the server.
func (e *Expectations) Uncertain(key string, age time.Duration) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	if r := e.records[key]; r != nil {
		for k, at := range r.uncertain {
			if e.now().Sub(at) >= age {
				out = append(out, k)
			}
		}
	}
	return out
}

// CreationNotMade settles an uncertain create that the server shows was never made.
func (e *Expectations) CreationNotMade(key, objKey string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r := e.records[key]; r != nil {
		if _, ok := r.uncertain[objKey]; ok {
			delete(r.uncertain, objKey)
			if r.adds > 0 {
				r.adds--
			}
		}
	}
}

// DeletionObserved lowers key's pending deletions when objKey is one of them.
func (e *Expectations) DeletionObserved(key, objKey string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r := e.records[key]; r != nil {
		delete(r.deletes, objKey)
	}
}

// Satisfied reports whether key may act on its cache: it has no record, every awaited
// write was observed, or the record outlived the TTL.
func (e *Expectations) Satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := e.records[key]
	if r == nil {
		return true
	}
	return r.adds <= 0 && len(r.deletes) == 0 || e.now().Sub(r.at) > e.ttl
}

// Pending returns key's outstanding creations and deletions (for status and tests).
func (e *Expectations) Pending(key string) (adds, deletes int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r := e.records[key]; r != nil {
		return r.adds, len(r.deletes)
	}
	return 0, 0
}

// Forget drops key's record: its object was deleted or replaced by another (new UID).
func (e *Expectations) Forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.records, key)
}

// ForgetNamespaces drops the record of every key in a namespace gone accepts ("" is a
// cluster-scoped key) and returns how many it dropped: a sharded controller manager has
// handed those namespaces to another process, whose writes this process will not
// observe. Kept, a record would make a sync wait up to the TTL for them if a namespace
// came back.
func (e *Expectations) ForgetNamespaces(gone func(namespace string) bool) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for key := range e.records {
		if ns, _, _ := object.SplitKey(key); gone(ns) {
			delete(e.records, key)
			n++
		}
	}
	return n
}
