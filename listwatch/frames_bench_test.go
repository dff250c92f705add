package listwatch

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// BenchmarkFrameReader measures splitting a watch stream into frames, the hot path of
// every watch: a stream of pod events read whole, and the same stream arriving in small
// chunks so that frames straddle reads and the scan resumes.
func BenchmarkFrameReader(b *testing.B) {
	event := `{"type":"MODIFIED","object":` + benchPod + "}\n"
	stream := []byte(strings.Repeat(event, 1000))
	for _, bc := range []struct {
		name  string
		chunk int
	}{{"whole", 0}, {"chunks=100", 100}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			for range b.N {
				var r io.Reader = bytes.NewReader(stream)
				if bc.chunk > 0 {
					r = &chunkReader{data: stream, cuts: []byte{byte(bc.chunk - 1)}}
				}
				fr := newFrameReader(r, 0)
				n := 0
				for {
					_, _, _, err := fr.next(nil)
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != 1000 {
					b.Fatalf("got %d frames", n)
				}
			}
		})
	}
}
