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
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/object"
)

func readFrames(r io.Reader, max int) ([]string, error) {
	fr := newFrameReader(r, max)
	var out []string
	for {
		f, _, _, err := fr.next(nil)
		if err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, err
		}
		out = append(out, string(f))
	}
}

func TestFrameReaderSplitsAnyChunking(t *testing.T) {
	stream := `{"type":"ADDED","object":{"metadata":{"name":"a}{\"b"}}}` + "\n" +
		`  {"type":"MODIFIED","object":{"data":{"k":"[{\\\"}}","list":[1,{"x":[]}]}}}` +
		`{"type":"DELETED","object":{}}` + "\r\n\t"
	want := []string{
		`{"type":"ADDED","object":{"metadata":{"name":"a}{\"b"}}}`,
		`{"type":"MODIFIED","object":{"data":{"k":"[{\\\"}}","list":[1,{"x":[]}]}}}`,
		`{"type":"DELETED","object":{}}`,
	}
	readers := map[string]func() io.Reader{
		"whole":      func() io.Reader { return strings.NewReader(stream) },
		"one byte":   func() io.Reader { return iotest.OneByteReader(strings.NewReader(stream)) },
		"half reads": func() io.Reader { return iotest.HalfReader(strings.NewReader(stream)) },
		"data+EOF":   func() io.Reader { return iotest.DataErrReader(strings.NewReader(stream)) },
	}
	for name, mk := range readers {
		t.Run(name, func(t *testing.T) {
			got, err := readFrames(mk(), 0)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("frames (-want +got):\n%s", d)
			}
		})
	}
}

func TestFrameReaderGrowsForLargeFrames(t *testing.T) {
	big := `{"type":"ADDED","object":{"data":"` + strings.Repeat("x", 200<<10) + `"}}`
	got, err := readFrames(iotest.HalfReader(strings.NewReader(big+big)), 1<<20)
	if err != nil || len(got) != 2 || got[0] != big {
		t.Fatalf("got %d frames, err %v", len(got), err)
	}
}

func TestFrameReaderErrors(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		max    int
		frames int
		is     error
		reason string
	}{
		{name: "not an object", stream: `{"type":"ADDED","object":{}} [1,2]`, frames: 1, reason: "expected '{'"},
		{name: "truncated", stream: `{"type":"ADDED","object":{"a":`, is: io.ErrUnexpectedEOF},
		{name: "too large", stream: `{"type":"ADDED","object":{"data":"` + strings.Repeat("y", 4096) + `"}}`, max: 1024, is: ErrFrameTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readFrames(strings.NewReader(tt.stream), tt.max)
			var fe *FrameError
			if !errors.As(err, &fe) {
				t.Fatalf("error = %v, want a *FrameError", err)
			}
			if len(got) != tt.frames {
				t.Errorf("%d frames before the error, want %d", len(got), tt.frames)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v does not wrap %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("error %q does not say %q", err, tt.reason)
			}
		})
	}
}

// A bad frame is reported at the byte where it starts in the stream, whichever frame it
// is and whether the framing or the decoding found it.
func TestFrameErrorOffset(t *testing.T) {
	good := `{"type":"ADDED","object":{"metadata":{"name":"a"}}}` + "\n"
	tests := []struct {
		name   string
		stream string
		at     int64
	}{
		{name: "first frame undecodable", stream: `{"type":"ADDED","object":{"metadata":{"name":7}}}`, at: 0},
		{name: "third frame undecodable", stream: good + good + `{"type":"ADDED","object":{x}}`, at: int64(2 * len(good))},
		{name: "not an object after white space", stream: good + "  \n [1]", at: int64(len(good) + 4)},
		{name: "truncated second frame", stream: good + `{"type":"ADDED","obj`, at: int64(len(good))},
		{name: "event without an object", stream: good + `{"type":"MODIFIED"}`, at: int64(len(good))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWatchFromReader[*object.Pod](context.Background(),
				io.NopCloser(iotest.HalfReader(strings.NewReader(tt.stream))), WatchOptions{})
			defer w.Close()
			var err error
			for err == nil {
				_, err = w.Next()
			}
			var fe *FrameError
			if !errors.As(err, &fe) {
				t.Fatalf("error = %v, want a *FrameError", err)
			}
			if fe.Offset != tt.at {
				t.Errorf("offset %d, want %d (%v)", fe.Offset, tt.at, err)
			}
			if want := fmt.Sprintf("at byte %d:", tt.at); !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		})
	}
}

func TestDecodeEvent(t *testing.T) {
	tests := []struct {
		frame   string
		typ     EventType
		name    string
		wantErr func(error) bool
	}{
		{frame: `{"type":"ADDED","object":{"metadata":{"name":"p"}}}`, typ: Added, name: "p"},
		{frame: `{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}}`, typ: Bookmark},
		{frame: `{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired","message":"too old resource version"}}`,
			wantErr: object.IsGone},
		{frame: `{"type":"SURPRISE","object":{}}`, wantErr: func(err error) bool { var u *UnknownEventError; return errors.As(err, &u) }},
		{frame: `{"type":"ADDED"}`, wantErr: isFrameError},
		{frame: `{"type":"ADDED","object":{this is not json}}`, wantErr: isFrameError},
		{frame: `{"type":"ADDED","object":{"metadata":{"name":7}}}`, wantErr: isFrameError},
		// The object before its type, other members around it, white space: decoded alike.
		{frame: `{"object":{"metadata":{"name":"p"}},"type":"MODIFIED"}`, typ: Modified, name: "p"},
		{frame: ` { "x" : [1,{"}":2}] , "type" : "DELETED" , "object" : {"metadata":{"name":"p"}} , "y":null } `, typ: Deleted, name: "p"},
		{frame: `{"object":{"kind":"Status","code":410,"reason":"Expired"},"type":"ERROR"}`, wantErr: object.IsGone},
		{frame: `{"type":"ADDED","object":{"metadata":{"name":"a"}},"object":{"metadata":{"name":"b"}}}`, typ: Added, name: "b"},
		{frame: `{"type":"ADDED","object":null}`, wantErr: isFrameError},
		{frame: `{"type":7,"object":{}}`, wantErr: isFrameError},
	}
	for _, tt := range tests {
		ev, err := decodeEvent[*object.Pod]([]byte(tt.frame), object.DecodeOptions{})
		if tt.wantErr != nil {
			if err == nil || !tt.wantErr(err) {
				t.Errorf("%s: error = %v", tt.frame, err)
			}
			continue
		}
		if err != nil || ev.Type != tt.typ || ev.Object.Name != tt.name {
			t.Errorf("%s: got %v %+v, %v", tt.frame, ev.Type, ev.Object, err)
		}
	}
}

func isFrameError(err error) bool { var fe *FrameError; return errors.As(err, &fe) }

// FuzzWatchDecoder feeds arbitrary bytes through the frame reader and event decoder: they
// must never panic or loop, every frame starts with '{', and an event is decoded only from
// a frame that is valid JSON (a frame split at mismatched brackets must fail to decode).
func FuzzWatchDecoder(f *testing.F) {
	for _, seed := range []string{
		`{"type":"ADDED","object":{"metadata":{"name":"a"}}}`,
		`{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"1"}}}{"type":"DELETED","object":{}}`,
		`{"type":"ERROR","object":{"kind":"Status","code":410}}`,
		`{"a":"\"}"}`, `{`, `}`, `{"type":"ADDED","object":{x}}`, "\n\n", `[]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fr := newFrameReader(iotest.OneByteReader(bytes.NewReader(data)), 4096)
		for i := 0; i <= len(data); i++ {
			frame, _, _, err := fr.next(nil)
			if err != nil {
				return
			}
			if len(frame) == 0 || frame[0] != '{' {
				t.Fatalf("frame %q does not open an object", frame)
			}
			if _, err := decodeEvent[*object.Raw](frame, object.DecodeOptions{}); err == nil && !json.Valid(frame) {
				t.Fatalf("decoded an event from invalid JSON %q", frame)
			}
		}
		t.Fatalf("more frames than bytes in %q", data)
	})
}

func BenchmarkDecodeWatchEvent(b *testing.B) {
	frame := []byte(`{"type":"MODIFIED","object":` + benchPod + `}`)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for range b.N {
		if _, err := decodeEvent[*object.Pod](frame, object.DecodeOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

const benchPod = `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-1","namespace":"ns","uid":"6d1c5f2e","resourceVersion":"42","creationTimestamp":"2026-11-01T10:00:00Z","labels":{"app":"web","tier":"frontend"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-5d9c7b8f6","uid":"1f0e","controller":true}]},"spec":{"containers":[{"name":"web","image":"nginx:1.27","resources":{"limits":{"cpu":"500m"}}}],"nodeName":"node-1"},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-01T10:00:05Z"}],"podIP":"10.1.0.1"}}`

// pacedReader returns at most limit() bytes a read, of a stream of counting bytes.
type pacedReader struct {
	limit func() int
	next  byte
}

func (r *pacedReader) Read(p []byte) (int, error) {
	n := min(len(p), r.limit())
	for i := range p[:n] {
		p[i] = r.next
		r.next++
	}
	return n, nil
}

// TestWatchBufferFollowsItsStream: a watch's buffer grows while its reads come back full
// and shrinks after a run of short ones; a list's stays at its first size. No byte is
// lost or reordered on the way.
func TestWatchBufferFollowsItsStream(t *testing.T) {
	for _, watch := range []bool{true, false} {
		t.Run(fmt.Sprintf("watch=%v", watch), func(t *testing.T) {
			limit := 1 << 30
			src := &pacedReader{limit: func() int { return limit }}
			rb := &readBuffer{r: src, max: DefaultMaxFrameSize, buf: make([]byte, readSize)}
			if watch {
				rb.watchReads()
			}
			var want byte
			consume := func() { // as a frame reader does: everything buffered is taken
				for _, b := range rb.buf[rb.start:rb.end] {
					if b != want {
						t.Fatalf("byte %d is %d, want %d", rb.offset, b, want)
					}
					want++
					rb.offset++
				}
				rb.start = rb.end
			}
			for range 8 {
				if err := rb.fill(0); err != nil {
					t.Fatal(err)
				}
				consume()
			}
			busy := readSize
			if watch {
				busy = busyReadSize
			}
			if got := len(rb.buf); got != busy {
				t.Fatalf("after full reads the buffer is %d bytes, want %d", got, busy)
			}
			limit = 100
			for range idleReads + 1 {
				if err := rb.fill(0); err != nil {
					t.Fatal(err)
				}
				consume()
			}
			if got := len(rb.buf); got != readSize {
				t.Fatalf("after short reads the buffer is %d bytes, want %d", got, readSize)
			}
		})
	}
}

// TestWatchBufferGrowsToBusySizeAtMost: a buffer grown for a large frame, past half the
// busy size, grows to the busy size when its stream is busy, not to twice its size.
func TestWatchBufferGrowsToBusySizeAtMost(t *testing.T) {
	src := &pacedReader{limit: func() int { return 1 << 30 }}
	rb := &readBuffer{r: src, max: DefaultMaxFrameSize, buf: make([]byte, readSize)}
	rb.watchReads()
	if err := rb.fill(160 << 10); err != nil { // a frame of 160 KB
		t.Fatal(err)
	}
	for range 4 {
		rb.start = rb.end
		if err := rb.fill(0); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(rb.buf); got != busyReadSize {
		t.Fatalf("the buffer is %d bytes, want %d", got, busyReadSize)
	}
}
