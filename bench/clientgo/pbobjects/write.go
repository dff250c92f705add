package pbobjects

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kinformer/kinformer/bench/internal/streamserver"
)

// marshaler is what every k8s.io/api type implements: its protobuf encoding.
type marshaler interface{ Marshal() ([]byte, error) }

// Encode is the protobuf encoding of one object's JSON (a Pod, Secret or ConfigMap of
// apiVersion v1): the raw message of its type, without the runtime.Unknown envelope the
// server adds.
func Encode(js []byte) ([]byte, error) {
	obj, gvk, err := scheme.Codecs.UniversalDeserializer().Decode(js, nil, nil)
	if err != nil {
		return nil, err
	}
	m, ok := obj.(marshaler)
	if !ok {
		return nil, fmt.Errorf("%v has no protobuf encoding", gvk)
	}
	return m.Marshal()
}

// Write writes the -protobuf-objects file of s's objects to w. s must not be lazy
// (Server.Lazy): the lazy mode serves no protobuf.
func Write(w io.Writer, s *streamserver.Server) error {
	if s.Lazy() {
		return errors.New("pbobjects: a lazy stream server serves no protobuf")
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if _, err := bw.Write(streamserver.ProtobufFileHeader(s.Kind(), s.Len())); err != nil {
		return err
	}
	var rec []byte
	for i := range s.Len() {
		msg, err := Encode(s.ObjectJSON(i))
		if err != nil {
			return fmt.Errorf("object %d: %w", i, err)
		}
		rec = streamserver.AppendProtobufRecord(rec[:0], msg)
		if _, err := bw.Write(rec); err != nil {
			return err
		}
	}
	return bw.Flush()
}
