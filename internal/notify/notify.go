package notify

import (
	"slices"
	"sync"
)

// List is a set of callbacks of S, safe for concurrent use. The zero value is empty.
type List[S any] struct {
	mu      sync.Mutex
	next    int
	entries []entry[S]
}

type entry[S any] struct {
	id int
	f  func(S)
}

// Add registers f and returns the function that removes it.
func (l *List[S]) Add(f func(S)) (remove func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := l.next
	l.next++
	l.entries = append(l.entries, entry[S]{id, f})
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.entries = slices.DeleteFunc(l.entries, func(e entry[S]) bool { return e.id == id })
	}
}

// Notify calls every callback with s, in the order they were added. It calls them outside
// the lock, so a callback may add or remove callbacks.
func (l *List[S]) Notify(s S) {
	l.mu.Lock()
	entries := slices.Clone(l.entries)
	l.mu.Unlock()
	for _, e := range entries {
		e.f(s)
	}
}
