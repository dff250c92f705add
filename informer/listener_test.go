package informer

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/object"
)

// pod is a state of object "ns/name": uid says which object, rv which state of it.
func pod(name, uid, rv string) *object.Pod {
	return &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: "ns", Name: name, UID: uid, ResourceVersion: rv}}
}

func describe(p *object.Pod) string { return p.Name + "/" + p.UID + "@" + p.ResourceVersion }

// TestOverflowCoalescing feeds a listener with a one-slot buffer (already taken, so every
// note below overflows) and checks what the handler is told once it catches up: the net
// change per object, never a lost final state, and never a recreated object passed off
// as an update of the deleted one.
func TestOverflowCoalescing(t *testing.T) {
	var at stamp
	add := func(p *object.Pod, initial bool) note[*object.Pod] {
		return note[*object.Pod]{kind: noteAdd, obj: p, initial: initial, at: at}
	}
	upd := func(old, p *object.Pod) note[*object.Pod] {
		return note[*object.Pod]{kind: noteUpdate, old: old, obj: p, at: at}
	}
	del := func(p *object.Pod, finalStateUnknown bool) note[*object.Pod] {
		return note[*object.Pod]{kind: noteDelete, obj: p, finalStateUnknown: finalStateUnknown, at: at}
	}
	a1, a2, a3 := pod("a", "u1", "1"), pod("a", "u1", "2"), pod("a", "u1", "3")
	b1 := pod("a", "u2", "4") // "a" again, but another object
	tests := []struct {
		name  string
		notes []note[*object.Pod]
		want  []string
	}{
		{"updates merge into one", []note[*object.Pod]{upd(a1, a2), upd(a2, a3)},
			[]string{"update a/u1@1 -> a/u1@3"}},
		{"an initial add stays initial", []note[*object.Pod]{add(a1, true), upd(a1, a2)},
			[]string{"add a/u1@2 initial=true"}},
		{"created and deleted unseen: nothing", []note[*object.Pod]{add(a1, false), upd(a1, a2), del(a2, false)},
			nil},
		{"update then delete: the delete with the final state", []note[*object.Pod]{upd(a1, a2), del(a3, false)},
			[]string{"delete a/u1@3 finalStateUnknown=false"}},
		{"a tombstone keeps its flag", []note[*object.Pod]{del(a1, true)},
			[]string{"delete a/u1@1 finalStateUnknown=true"}},
		{"deleted and recreated: delete then add", []note[*object.Pod]{upd(a1, a2), del(a3, false), add(b1, false)},
			[]string{"delete a/u1@3 finalStateUnknown=false", "add a/u2@4 initial=false"}},
		{"recreated then deleted again: the known object's delete", []note[*object.Pod]{del(a1, false), add(b1, false), del(b1, false)},
			[]string{"delete a/u1@1 finalStateUnknown=false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newListener[*object.Pod](nil, HandlerOptions{Name: "h", BufferSize: 1}, slog.New(slog.DiscardHandler), nil)
			l.add(add(pod("filler", "f", "0"), true)) // takes the only slot
			for _, n := range tt.notes {
				l.add(n)
			}
			l.add(add(pod("sentinel", "s", "9"), false)) // overflows last, so comes out last
			l.markSynced()
			var got []string
			for {
				if l.hasSynced() {
					t.Fatal("synced before taking everything")
				}
				n, _ := l.next()
				l.mu.Lock()
				l.checkSynced()
				l.mu.Unlock()
				if n.obj.Name == "sentinel" {
					break
				}
				switch {
				case n.obj.Name == "filler":
				case n.kind == noteAdd:
					got = append(got, fmt.Sprintf("add %s initial=%v", describe(n.obj), n.initial))
				case n.kind == noteUpdate:
					got = append(got, fmt.Sprintf("update %s -> %s", describe(n.old), describe(n.obj)))
				case n.kind == noteDelete:
					got = append(got, fmt.Sprintf("delete %s finalStateUnknown=%v", describe(n.obj), n.finalStateUnknown))
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("delivered (-want +got):\n%s", d)
			}
			if !l.hasSynced() {
				t.Error("not synced after taking everything")
			}
		})
	}
}

// A handler that keeps up but is always a little behind never drains its buffer: the
// buffer's array must stay bounded by the capacity, not grow with the events.
func TestBufferStaysBoundedWhenNeverDrained(t *testing.T) {
	l := newListener[*object.Pod](HandlerFuncs[*object.Pod]{}, HandlerOptions{Name: "behind", BufferSize: 8}, slog.New(slog.DiscardHandler), nil)
	p := &object.Pod{ObjectMeta: object.ObjectMeta{Name: "p"}}
	l.add(note[*object.Pod]{kind: noteUpdate, old: p, obj: p}) // the one always left behind
	for range 100000 {
		l.add(note[*object.Pod]{kind: noteUpdate, old: p, obj: p})
		if _, ok := l.next(); !ok {
			t.Fatal("stopped")
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := cap(l.buf); c > 4*l.capacity {
		t.Errorf("buffer array of %d for a capacity of %d after 100000 notifications", c, l.capacity)
	}
}

// adoptAll takes a relist's notes as the buffer itself only when nothing is queued and
// they fit; otherwise it adds them as addAll does. Either way the handler hears what was
// queued before, then the notes, in order.
func TestAdoptAll(t *testing.T) {
	var at stamp
	add := func(name string) note[*object.Pod] {
		return note[*object.Pod]{kind: noteAdd, obj: pod(name, "u-"+name, "1"), at: at}
	}
	tests := []struct {
		name    string
		buffer  int
		before  []string // queued first
		notes   []string
		adopted bool
		want    []string
	}{
		{"an empty buffer takes them", 4, nil, []string{"a", "b", "c"}, true, []string{"a", "b", "c"}},
		{"after what is queued", 4, []string{"x"}, []string{"a", "b"}, false, []string{"x", "a", "b"}},
		{"more than the buffer holds", 2, nil, []string{"a", "b", "c"}, false, []string{"a", "b", "c"}},
		{"after an overflow", 1, []string{"x", "y"}, []string{"a"}, false, []string{"x", "y", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newListener[*object.Pod](nil, HandlerOptions{Name: "h", BufferSize: tt.buffer}, slog.New(slog.DiscardHandler), nil)
			for _, name := range tt.before {
				l.add(add(name))
			}
			notes := make([]note[*object.Pod], 0, len(tt.notes))
			for _, name := range tt.notes {
				notes = append(notes, add(name))
			}
			l.adoptAll(notes)
			l.mu.Lock()
			adopted := len(l.buf) > 0 && &l.buf[0] == &notes[0]
			queued := l.queued
			l.mu.Unlock()
			if adopted != tt.adopted {
				t.Errorf("adopted: %v, want %v", adopted, tt.adopted)
			}
			if want := uint64(len(tt.before) + len(tt.notes)); queued != want {
				t.Errorf("queued %d, want %d", queued, want)
			}
			var got []string
			for range tt.want {
				n, ok := l.next()
				if !ok {
					t.Fatalf("the listener stopped after %v", got)
				}
				got = append(got, n.obj.Name)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("what the handler heard (-want +got):\n%s", d)
			}
		})
	}
}
