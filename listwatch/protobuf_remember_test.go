package listwatch

import (
	"os"
	"runtime"
	"testing"

	"github.com/kinformer/kinformer/internal/kubeproto"
	"github.com/kinformer/kinformer/object"
)

// The cache's table remembers an object that just changed or was just made, and the next
// state of it is decoded against it (its containers are then the same slice); a list's
// objects, a streaming list's initial events included, and a deleted object are not
// remembered.
func TestProtobufWatchRemembersChanges(t *testing.T) {
	pod, err := os.ReadFile("../object/testdata/protobuf/pod-uniform-0.pb")
	if err != nil {
		t.Fatal(err)
	}
	frame := func(typ string) []byte {
		return kubeproto.AppendWatchEvent(nil, kubeproto.WatchEvent{Type: typ, Object: pod})
	}
	tests := []struct {
		typ        string
		live, want bool
	}{
		{"MODIFIED", true, true},
		{"ADDED", true, true},
		{"ADDED", false, false}, // a streaming list's
		{"DELETED", true, false},
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
