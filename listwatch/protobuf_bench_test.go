package listwatch

import (
	"os"
	"strconv"
	"testing"

	"github.com/kinformer/kinformer/internal/codec"
	"github.com/kinformer/kinformer/internal/kubeproto"
	"github.com/kinformer/kinformer/object"
)

// BenchmarkDecodeProtoEvent decodes a watch event of a pod as the stream server's
// uniform corpus writes it (object/testdata/protobuf/pod-uniform-0.pb), into a cache's
// table as an informer does: the cost of an event once it is framed. listed is the pod
// decoded whole (a streaming list's ADDED event: the table remembers nothing of it);
// MODIFIED the same pod again, decoded against its last state, which the table
// remembers (codec.DecodeProtobufModified): its spec and status taken from it;
// MODIFIED-stamped the pod with an annotation that changes at every event, as the
// benchmark's stream server stamps its send time: the annotations are a new map.
func BenchmarkDecodeProtoEvent(b *testing.B) {
	pod, err := os.ReadFile("../object/testdata/protobuf/pod-uniform-0.pb")
	if err != nil {
		b.Fatal(err)
	}
	tests := []struct {
		name   string
		typ    string
		live   bool
		frames [][]byte
	}{
		{"listed", "ADDED", false, [][]byte{pod}},
		{"MODIFIED", "MODIFIED", true, [][]byte{pod}},
		{"MODIFIED-stamped", "MODIFIED", true, stamped(b, pod, 2)},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			var frames [][]byte
			for _, obj := range tt.frames {
				frames = append(frames, kubeproto.AppendWatchEvent(nil, kubeproto.WatchEvent{Type: tt.typ, Object: obj}))
			}
			opts := object.DecodeOptions{DropManagedFields: true, Maps: object.NewMapTable()}
			b.SetBytes(int64(len(frames[0])))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := decodeProtoEvent[*object.Pod](frames[i%len(frames)], opts, tt.live); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// stamped returns n envelopes of the pod in env, each with another value of a stamp
// annotation.
func stamped(b *testing.B, env []byte, n int) [][]byte {
	e, err := kubeproto.ParseEnvelope(env)
	if err != nil {
		b.Fatal(err)
	}
	p, err := codec.DecodeProtobuf[*object.Pod](e.Raw, codec.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var out [][]byte
	for i := range n {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations["bench.kinformer.io/sent-unix-nano"] = strconv.Itoa(1700000000000000000 + i)
		raw, err := codec.MarshalProtobuf(p)
		if err != nil {
			b.Fatal(err)
		}
		e.Raw = raw
		out = append(out, kubeproto.AppendEnvelope(nil, e))
	}
	return out
}
