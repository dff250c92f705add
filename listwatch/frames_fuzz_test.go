package listwatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/object"
)

// FuzzWatchSplits feeds one byte stream through the frame reader and the event decoder
// twice, whole and in chunks cut where the fuzzer says, and under a frame size limit it
// also picks. A stream's meaning must not depend on how the network chunked it: both
// runs yield the same frames and the same events, then the same end (a clean EOF, or the
// same error at the same byte offset). And the reader's buffer never grows past the
// limit plus one read.
func FuzzWatchSplits(f *testing.F) {
	pod := `{"type":"MODIFIED","object":{"metadata":{"name":"a","namespace":"ns","resourceVersion":"2"},"spec":{"nodeName":"n"}}}`
	for _, seed := range []struct {
		stream string
		cuts   []byte
		limit  uint16
	}{
		{pod + "\n" + pod, []byte{0}, 4096},
		{pod + pod + "  \r\n" + pod, []byte{3, 200, 1}, 100}, // the limit is under one event
		{`{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}}` + "\n" + `{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}}`, []byte{7}, 512},
		{`{"type":"ADDED","object":{"metadata":{"name":"}{\"]"}}}{"type":"SURPRISE","object":{}}`, []byte{1, 2}, 512},
		{`{"type":"ADDED","object":{"metadata":{"name":7}}}`, nil, 512},
		{pod + ` [1]`, []byte{5}, 512},
		{pod + `{"type":"ADDED","obj`, []byte{9, 0}, 512},
		{`{"type":"DELETED"}`, []byte{0}, 512},
		{"\n\n", nil, 0},
	} {
		f.Add([]byte(seed.stream), seed.cuts, seed.limit)
	}
	f.Fuzz(func(t *testing.T, stream, cuts []byte, limit uint16) {
		max := 16 + int(limit)
		whole := readAll(t, bytes.NewReader(stream), max)
		split := readAll(t, &chunkReader{data: stream, cuts: cuts}, max)
		if d := cmp.Diff(whole.frames, split.frames); d != "" {
			t.Fatalf("frames differ when the stream is cut at %v (-whole +cut):\n%s", cuts, d)
		}
		sameEnd(t, "frame reader", whole.err, split.err)

		// Read on one goroutine whole, on two (the prefetcher) cut.
		wholeEvents, wholeErr := readEvents(bytes.NewReader(stream), max, false)
		splitEvents, splitErr := readEvents(&chunkReader{data: stream, cuts: cuts}, max, true)
		if d := cmp.Diff(wholeEvents, splitEvents); d != "" {
			t.Fatalf("events differ when the stream is cut at %v (-whole +cut):\n%s", cuts, d)
		}
		sameEnd(t, "watch", wholeErr, splitErr)
	})
}

// chunkReader hands out data in chunks whose lengths cycle through cuts (each 1 to 256
// bytes), returning io.EOF with the last bytes when there is an odd number of cuts, as
// some readers do, and after them otherwise.
type chunkReader struct {
	data []byte
	cuts []byte
	n    int // reads so far
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	size := len(c.data)
	if len(c.cuts) > 0 {
		size = int(c.cuts[c.n%len(c.cuts)]) + 1
	}
	c.n++
	n := copy(p, c.data[:min(size, len(c.data))])
	c.data = c.data[n:]
	if len(c.data) == 0 && len(c.cuts)%2 == 1 {
		return n, io.EOF
	}
	return n, nil
}

type framesRead struct {
	frames []string
	err    error
}

// readAll reads frames to the end, checking the buffer bound after each.
func readAll(t *testing.T, r io.Reader, max int) framesRead {
	fr := newFrameReader(r, max)
	var out framesRead
	for {
		frame, _, _, err := fr.next(nil)
		if bound := max + readSize; len(fr.buf) > bound {
			t.Fatalf("the frame reader's buffer grew to %d bytes, past the %d-byte limit plus one read (%d)", len(fr.buf), max, bound)
		}
		if err != nil {
			out.err = err
			return out
		}
		out.frames = append(out.frames, string(frame))
	}
}

// readEvents decodes a stream as a watch does, each event written as type and object.
func readEvents(r io.Reader, max int, prefetch bool) ([]string, error) {
	w := newWatchFromReader[*object.Raw](context.Background(), io.NopCloser(r), WatchOptions{MaxFrameSize: max}, readAhead{on: prefetch, pool: newBatchPool()})
	defer w.Close()
	var events []string
	for {
		ev, err := w.Next()
		if err != nil {
			return events, err
		}
		obj, err := json.Marshal(ev.Object)
		if err != nil {
			return events, fmt.Errorf("re-encoding a decoded object: %w", err)
		}
		events = append(events, string(ev.Type)+" "+string(obj))
	}
}

// sameEnd checks that two reads of one stream ended alike. A FrameError's Frame is the
// start of the bad frame as far as it had arrived, which depends on the cuts: only one
// must be a prefix of the other.
func sameEnd(t *testing.T, what string, whole, split error) {
	t.Helper()
	var fw, fs *FrameError
	if errors.As(whole, &fw) && errors.As(split, &fs) {
		short, long := fw.Frame, fs.Frame
		if len(short) > len(long) {
			short, long = long, short
		}
		if fw.Offset != fs.Offset || fw.Reason != fs.Reason || fmt.Sprint(fw.Err) != fmt.Sprint(fs.Err) || !bytes.HasPrefix(long, short) {
			t.Fatalf("%s: the stream ends with\n%v\nwhole, but with\n%v\ncut", what, whole, split)
		}
		return
	}
	if fmt.Sprint(whole) != fmt.Sprint(split) {
		t.Fatalf("%s: the stream ends with %v whole, but with %v cut", what, whole, split)
	}
}

// The frame reader never holds more than the limit plus one read, however large the
// frame the server sends, and a frame of exactly the limit still decodes.
func TestFrameReaderBufferStaysBounded(t *testing.T) {
	const max = 1 << 20
	frameOf := func(size int) string {
		head := `{"type":"ADDED","object":{"data":"`
		tail := `"}}`
		return head + strings.Repeat("x", size-len(head)-len(tail)) + tail
	}
	for _, tt := range []struct {
		name  string
		size  int
		wants error
	}{
		{"at the limit", max, io.EOF},
		{"ten times the limit", 10 * max, ErrFrameTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fr := newFrameReader(strings.NewReader(frameOf(tt.size)), max)
			var err error
			for err == nil {
				_, _, _, err = fr.next(nil)
			}
			if !errors.Is(err, tt.wants) {
				t.Fatalf("error %v, want %v", err, tt.wants)
			}
			if len(fr.buf) > max+readSize {
				t.Errorf("buffer grew to %d bytes, past %d + %d", len(fr.buf), max, readSize)
			}
			if tt.wants == ErrFrameTooLarge {
				for _, want := range []string{"at byte 0", fmt.Sprintf("%d-byte limit", max), "MaxFrameSize"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
			}
		})
	}
}
