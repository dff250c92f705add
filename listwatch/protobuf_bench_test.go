package listwatch

import (
	"os"
	"testing"

	"github.com/kinformer/kinformer/internal/kubeproto"
	"github.com/kinformer/kinformer/object"
)

// BenchmarkDecodeProtoEvent decodes a watch event of a pod as the stream server's
// uniform corpus writes it (object/testdata/protobuf/pod-uniform-0.pb), into a cache's
// table as an informer does: the cost of an event once it is framed. DELETED is a pod
// decoded whole (the table remembers nothing of it); MODIFIED the same pod again,
// decoded against its last state, which the table remembers
// (codec.DecodeProtobufModified): its spec and status taken from it.
func BenchmarkDecodeProtoEvent(b *testing.B) {
	pod, err := os.ReadFile("../object/testdata/protobuf/pod-uniform-0.pb")
	if err != nil {
		b.Fatal(err)
	}
	for _, typ := range []string{"DELETED", "MODIFIED"} {
		b.Run(typ, func(b *testing.B) {
			frame := kubeproto.AppendWatchEvent(nil, kubeproto.WatchEvent{Type: typ, Object: pod})
			opts := object.DecodeOptions{DropManagedFields: true, Maps: object.NewMapTable()}
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for range b.N {
				if _, err := decodeProtoEvent[*object.Pod](frame, opts, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
