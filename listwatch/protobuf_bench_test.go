package listwatch

import (
	"os"
	"testing"

	"github.com/kinformer/kinformer/internal/kubeproto"
	"github.com/kinformer/kinformer/object"
)

// BenchmarkDecodeProtoEvent decodes a MODIFIED event of a pod as the stream server's
// uniform corpus writes it (object/testdata/protobuf/pod-uniform-0.pb), into a cache's
// table as an informer does: the cost of an event once it is framed.
func BenchmarkDecodeProtoEvent(b *testing.B) {
	pod, err := os.ReadFile("../object/testdata/protobuf/pod-uniform-0.pb")
	if err != nil {
		b.Fatal(err)
	}
	frame := kubeproto.AppendWatchEvent(nil, kubeproto.WatchEvent{Type: "MODIFIED", Object: pod})
	opts := object.DecodeOptions{DropManagedFields: true, Maps: object.NewMapTable()}
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for range b.N {
		if _, err := decodeProtoEvent[*object.Pod](frame, opts); err != nil {
			b.Fatal(err)
		}
	}
}
