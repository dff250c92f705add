package listwatch

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/kinformer/kinformer/internal/kubeproto"
	"github.com/kinformer/kinformer/object"
)

// The cache's table remembers an object that just changed or was just made, and the next
// state of it is decoded against it (its containers are then the same slice); a list's
// objects, a streaming list's initial events included, are not remembered; a deleted
// one is, weakly (the cache lets go of it), while something else holds it, as here.
func TestProtobufWatchRemembersChanges(t *testing.T) {
	frame := podFrames(t)
	tests := []struct {
		typ        string
		live, want bool
	}{
		{"MODIFIED", true, true},
		{"ADDED", true, true},
		{"ADDED", false, false}, // a streaming list's
		{"DELETED", true, true},
	}
	for _, tt := range tests {
		opts := object.DecodeOptions{DropManagedFields: true, Maps: object.NewMapTable()}
		first, err := decodeProtoEvent[*object.Pod](frame(tt.typ), opts, tt.live)
		if err != nil {
			t.Fatal(err)
		}
		next, err := decodeProtoEvent[*object.Pod](frame("MODIFIED"), opts, true)
		if err != nil {
			t.Fatal(err)
		}
		if got := &first.Object.Spec.Containers[0] == &next.Object.Spec.Containers[0]; got != tt.want {
			t.Errorf("%s (after the list: %v), then MODIFIED: the containers shared: %v, want %v", tt.typ, tt.live, got, tt.want)
		}
		runtime.KeepAlive(first)
	}
}

// The table holds what the cache holds, no more: once an object's DELETED event is
// decoded, neither the state before it nor the deleted object itself is kept alive.
func TestProtobufWatchLetsDeletedGo(t *testing.T) {
	frame := podFrames(t)
	opts := object.DecodeOptions{DropManagedFields: true, Maps: object.NewMapTable()}
	gone := make(chan string, 2)
	for _, typ := range []string{"MODIFIED", "DELETED"} {
		ev, err := decodeProtoEvent[*object.Pod](frame(typ), opts, true)
		if err != nil {
			t.Fatal(err)
		}
		runtime.AddCleanup(ev.Object, func(typ string) { gone <- typ }, typ)
	}
	collected := map[string]bool{}
	for range 50 {
		runtime.GC()
		select {
		case typ := <-gone:
			collected[typ] = true
		case <-time.After(10 * time.Millisecond):
		}
		if len(collected) == 2 {
			break
		}
	}
	if len(collected) != 2 {
		t.Errorf("collected after the DELETED event: %v, want both states", collected)
	}
	runtime.KeepAlive(opts.Maps) // the cache's table lives on
}

// podFrames returns a maker of watch event frames of a golden pod, by event type.
func podFrames(t *testing.T) func(typ string) []byte {
	t.Helper()
	pod, err := os.ReadFile("../object/testdata/protobuf/pod-uniform-0.pb")
	if err != nil {
		t.Fatal(err)
	}
	return func(typ string) []byte {
		return kubeproto.AppendWatchEvent(nil, kubeproto.WatchEvent{Type: typ, Object: pod})
	}
}
