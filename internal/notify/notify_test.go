package notify

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAddNotifyRemove(t *testing.T) {
	var l List[int]
	var got []string
	removeA := l.Add(func(v int) { got = append(got, "a") })
	var removeB func()
	removeB = l.Add(func(v int) {
		got = append(got, "b")
		removeB() // removing itself from inside a callback must not deadlock
	})
	l.Notify(1)
	l.Notify(2)
	removeA()
	l.Notify(3)
	if diff := cmp.Diff([]string{"a", "b", "a"}, got); diff != "" {
		t.Fatalf("callbacks (-want +got):\n%s", diff)
	}
}
