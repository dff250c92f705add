package deltafifo

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/object"
)

// PopBatch hands over what is queued, in order, at most limit at a time; the dedup and
// HasSynced bookkeeping is that of popping the items one by one.
func TestPopBatch(t *testing.T) {
	f := New[*object.Pod]()
	f.Replace([]*object.Pod{pod("a", "1")}, "1")
	for i := range 5 {
		f.Update(pod("a", fmt.Sprint(2+i)))
	}
	f.Delete(pod("a", "7"))
	var batches [][]string
	for f.Len() > 0 {
		err := f.PopBatch(context.Background(), 3, func(items []*Item[*object.Pod]) error {
			var b []string
			for _, it := range items {
				if it.Replace != nil {
					b = append(b, "Replace@"+it.Replace.ResourceVersion)
				} else {
					b = append(b, string(it.Delta.Type)+"@"+it.Delta.Object.ResourceVersion)
				}
			}
			batches = append(batches, b)
			if len(batches) == 1 && f.HasSynced() {
				t.Error("synced while the initial list is being processed")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	want := [][]string{{"Replace@1", "Updated@2", "Updated@3"}, {"Updated@4", "Updated@5", "Updated@6"}, {"Deleted@7"}}
	if d := cmp.Diff(want, batches); d != "" {
		t.Errorf("batches (-want +got):\n%s", d)
	}
	if !f.HasSynced() {
		t.Error("not synced after the batch with the initial list")
	}
	// The delete was popped: a new one for the key is news again, not a duplicate.
	f.Delete(pod("a", "8"))
	if f.Len() != 1 {
		t.Errorf("a delete after the popped one was dropped as a duplicate")
	}
}

// While held, what is queued does not wake a waiting consumer; Release wakes it once for
// all of it.
func TestHoldDefersTheWakeUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := New[*object.Pod]()
		var got [][]string
		done := make(chan struct{})
		go func() {
			defer close(done)
			for len(got) == 0 || len(got[len(got)-1]) > 0 && got[len(got)-1][0] != "stop" {
				err := f.PopBatch(context.Background(), 100, func(items []*Item[*object.Pod]) error {
					var b []string
					for _, it := range items {
						b = append(b, it.Delta.Key)
					}
					got = append(got, b)
					return nil
				})
				if err != nil {
					return
				}
			}
		}()
		synctest.Wait() // the consumer waits on the empty queue
		f.Hold()
		f.Add(pod("a", "1"))
		f.Add(pod("b", "2"))
		synctest.Wait()
		if len(got) != 0 {
			t.Fatalf("the consumer woke while the queue was held: %v", got)
		}
		f.Release()
		synctest.Wait()
		f.Add(&object.Pod{ObjectMeta: object.ObjectMeta{Name: "stop"}}) // not held: wakes it at once
		<-done
		want := [][]string{{"ns/a", "ns/b"}, {"stop"}}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("batches (-want +got):\n%s", d)
		}
	})
}
