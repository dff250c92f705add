package listwatch

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/kinformer/kinformer/internal/testrig/memtest"
	"github.com/kinformer/kinformer/object"
)

const podWithManagedFields = `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"n","resourceVersion":"7",` +
	`"managedFields":[{"manager":"kubelet","operation":"Update","fieldsV1":{"f:status":{}}}],"selfLink":"/p"},"spec":{},"status":{}}`

// Watch and list decode alike: with DropManagedFields the objects lack managedFields and
// keep the other unknown members; without it they keep both.
func TestDropManagedFields(t *testing.T) {
	for _, drop := range []bool{false, true} {
		watch := NewWatchFromReader[*object.Pod](context.Background(),
			io.NopCloser(strings.NewReader(`{"type":"MODIFIED","object":`+podWithManagedFields+"}\n")),
			WatchOptions{Decode: object.DecodeOptions{DropManagedFields: drop}})
		ev, err := watch.Next()
		watch.Close()
		if err != nil {
			t.Fatalf("drop=%v: watch: %v", drop, err)
		}
		list, err := decodeListReading[*object.Pod](strings.NewReader(`{"kind":"PodList","metadata":{"resourceVersion":"7"},"items":[`+podWithManagedFields+`]}`),
			0, object.DecodeOptions{DropManagedFields: drop}, defaultReadAhead(nil), nil)
		if err != nil {
			t.Fatalf("drop=%v: list: %v", drop, err)
		}
		for how, obj := range map[string]*object.Pod{"watched": ev.Object, "listed": list.Items[0]} {
			u := obj.Meta().Unknown
			if got := u.Get("managedFields") != nil; got == drop {
				t.Errorf("drop=%v: %s pod has managedFields: %v", drop, how, got)
			}
			if string(u.Get("selfLink")) != `"/p"` || obj.Name != "p" {
				t.Errorf("drop=%v: %s pod lost other members: %+v", drop, how, obj.ObjectMeta)
			}
		}
	}
}

// With a map table, two watched objects with the same labels hold one map; without, two.
func TestShareMaps(t *testing.T) {
	frame := func(name string) string {
		return `{"type":"MODIFIED","object":{"kind":"Pod","metadata":{"name":"` + name + `","labels":{"app":"web","tier":"front"}}}}` + "\n"
	}
	for _, share := range []bool{false, true} {
		var opts WatchOptions
		if share {
			opts.Decode.Maps = object.NewMapTable()
		}
		watch := NewWatchFromReader[*object.Pod](context.Background(), io.NopCloser(strings.NewReader(frame("a")+frame("b"))), opts)
		a, errA := watch.Next()
		b, errB := watch.Next()
		watch.Close()
		if errA != nil || errB != nil {
			t.Fatalf("share=%v: %v, %v", share, errA, errB)
		}
		same := memtest.SameMap(a.Object.Labels, b.Object.Labels)
		if same != share || b.Object.Labels["tier"] != "front" {
			t.Errorf("share=%v: one map = %v, labels %v", share, same, b.Object.Labels)
		}
	}
}
