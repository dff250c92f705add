package eventcheck

import (
	"fmt"
	"maps"
	"sync"

	"github.com/kinformer/kinformer/object"
)

// View is a handler's picture of a resource. It is safe for concurrent use.
type View[T object.Object] struct {
	mu     sync.Mutex
	rvs    map[string]string // key → resourceVersion
	uids   map[string]string // key → UID
	broken []string
}

// New returns an empty view.
func New[T object.Object]() *View[T] {
	return &View[T]{rvs: map[string]string{}, uids: map[string]string{}}
}

// OnAdd records obj; it must not be held already.
func (v *View[T]) OnAdd(obj T, _ bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	key, m := object.Key(obj), obj.Meta()
	if rv, held := v.rvs[key]; held {
		v.broken = append(v.broken, fmt.Sprintf("add %s@%s while holding it at %s", key, m.ResourceVersion, rv))
	}
	v.rvs[key], v.uids[key] = m.ResourceVersion, m.UID
}

// OnUpdate records obj; old must be the state held, of the same object.
func (v *View[T]) OnUpdate(old, obj T) {
	v.mu.Lock()
	defer v.mu.Unlock()
	key, om, m := object.Key(obj), old.Meta(), obj.Meta()
	if rv, held := v.rvs[key]; !held || rv != om.ResourceVersion || v.uids[key] != om.UID || om.UID != m.UID {
		v.broken = append(v.broken, fmt.Sprintf("update %s %s/%s→%s/%s while holding %s/%s (held %v)",
			key, om.UID, om.ResourceVersion, m.UID, m.ResourceVersion, v.uids[key], rv, held))
	}
	v.rvs[key], v.uids[key] = m.ResourceVersion, m.UID
}

// OnDelete forgets obj; it must be the object held.
func (v *View[T]) OnDelete(obj T, _ bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	key := object.Key(obj)
	if _, held := v.rvs[key]; !held || v.uids[key] != obj.Meta().UID {
		v.broken = append(v.broken, fmt.Sprintf("delete %s/%s while holding %q (held %v)", key, obj.Meta().UID, v.uids[key], held))
	}
	delete(v.rvs, key)
	delete(v.uids, key)
}

// Snapshot returns the picture: key → resourceVersion.
func (v *View[T]) Snapshot() map[string]string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return maps.Clone(v.rvs)
}

// Broken returns the events that did not follow from the ones before them.
func (v *View[T]) Broken() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.broken...)
}
