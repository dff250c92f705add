package deltafifo

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/object"
)

func pod(name, rv string) *object.Pod {
	return &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

// popAll drains the FIFO into strings "Type key@rv".
func popAll(t *testing.T, f *FIFO[*object.Pod]) []string {
	t.Helper()
	var out []string
	for f.Len() > 0 {
		err := f.Pop(context.Background(), func(it *Item[*object.Pod]) error {
			switch {
			case it.Replace != nil:
				out = append(out, fmt.Sprintf("Replace(%d)@%s", len(it.Replace.Objects), it.Replace.ResourceVersion))
			case it.Resync:
				out = append(out, "Resync")
			default:
				s := fmt.Sprintf("%s %s@%s", it.Delta.Type, it.Delta.Key, it.Delta.Object.ResourceVersion)
				if it.Delta.FinalStateUnknown {
					s += " (final state unknown)"
				}
				out = append(out, s)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestArrivalOrderAcrossKeys(t *testing.T) {
	f := New[*object.Pod]()
	f.Replace([]*object.Pod{pod("a", "1")}, "1")
	f.Update(pod("a", "2"))
	f.Add(pod("b", "3"))
	f.Update(pod("a", "4"))
	f.Resync()
	f.Delete(pod("b", "5"))
	want := []string{"Replace(1)@1", "Updated ns/a@2", "Added ns/b@3", "Updated ns/a@4", "Resync", "Deleted ns/b@5"}
	if d := cmp.Diff(want, popAll(t, f)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestDeleteDedup(t *testing.T) {
	f := New[*object.Pod]()
	f.Add(pod("a", "1"))
	f.Delete(pod("a", "2"))
	f.Delete(pod("a", "2")) // duplicate trailing delete: dropped
	f.Add(pod("b", "3"))
	f.Delete(pod("b", "4"))
	f.Add(pod("c", "5"))
	f.Delete(pod("c", "6"))
	f.Add(pod("c", "7"))
	f.Delete(pod("c", "8")) // not trailing a delete: kept
	want := []string{"Added ns/a@1", "Deleted ns/a@2", "Added ns/b@3", "Deleted ns/b@4", "Added ns/c@5", "Deleted ns/c@6", "Added ns/c@7", "Deleted ns/c@8"}
	if d := cmp.Diff(want, popAll(t, f)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// Once popped, a new delete for the key is not a duplicate.
	f.Delete(pod("a", "9"))
	if f.Len() != 1 {
		t.Error("a delete after the previous one was popped must be queued")
	}
}

type fakeKnown map[string]*object.Pod

func (k fakeKnown) Get(key string) (*object.Pod, bool) { p, ok := k[key]; return p, ok }
func (k fakeKnown) ListKeys() []string {
	var keys []string
	for key := range k {
		keys = append(keys, key)
	}
	return keys
}

func TestReplaceDeltasTombstones(t *testing.T) {
	known := fakeKnown{"ns/a": pod("a", "1"), "ns/gone": pod("gone", "2")}
	r := &Replace[*object.Pod]{Objects: []*object.Pod{pod("a", "3"), pod("new", "4")}, ResourceVersion: "5"}
	replaced, tombs := ReplaceDeltas[*object.Pod](r, known)
	if len(replaced) != 2 || replaced[0].Key != "ns/a" || replaced[1].Key != "ns/new" {
		t.Errorf("replaced: %+v", replaced)
	}
	if len(tombs) != 1 || tombs[0].Key != "ns/gone" || !tombs[0].FinalStateUnknown || tombs[0].Object.ResourceVersion != "2" {
		t.Errorf("tombstones: %+v", tombs)
	}
}

func TestHasSyncedAfterInitialPopulationIsProcessed(t *testing.T) {
	f := New[*object.Pod]()
	f.Replace(nil, "1") // an empty initial list still syncs
	if f.HasSynced() {
		t.Fatal("synced before the initial list was popped")
	}
	err := f.Pop(context.Background(), func(it *Item[*object.Pod]) error {
		if f.HasSynced() {
			t.Error("synced before process returned")
		}
		return errors.New("process errors are returned")
	})
	if err == nil || !f.HasSynced() {
		t.Errorf("err %v, synced %v", err, f.HasSynced())
	}
}

// TestPopStopsOnContextAndClose runs in a synctest bubble: the context's deadline passes
// as soon as Pop waits, and synctest.Wait returns once the second Pop is parked in its
// wait for an item, so Close is known to wake a blocked Pop, not to beat it to the lock.
// A Close that did not wake it would leave the bubble deadlocked, which fails the test.
func TestPopStopsOnContextAndClose(t *testing.T) {
	leakcheck.Check(t)
	synctest.Test(t, func(t *testing.T) {
		f := New[*object.Pod]()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if err := f.Pop(ctx, func(*Item[*object.Pod]) error { return nil }); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v", err)
		}
		done := make(chan error)
		go func() { done <- f.Pop(context.Background(), func(*Item[*object.Pod]) error { return nil }) }()
		synctest.Wait() // the Pop is parked in sync.Cond.Wait, the only durable block in it
		f.Close()
		if err := <-done; !errors.Is(err, ErrClosed) {
			t.Errorf("err = %v", err)
		}
		f.Add(pod("x", "1"))
		if f.Len() != 0 {
			t.Error("adds after Close must be dropped")
		}
	})
}
