package listwatch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/internal/jsonscan"
)

// DefaultMaxFrameSize bounds one watch event, and one object of a list page. The
// apiserver limits an object to about 1.5 MiB in etcd, so 16 MiB leaves room for any real
// object while stopping a broken or hostile server from growing a buffer without end.
const DefaultMaxFrameSize = 16 << 20

// readSize is what the frame reader asks of its source at a time, and its first buffer.
const readSize = 32 << 10

// FrameError reports a watch stream that cannot be decoded. The stream ends with it.
type FrameError struct {
	Offset int64  // byte offset of the frame in the stream
	Reason string // what was wrong
	Frame  []byte // the start of the offending frame (at most 256 bytes), for logs
	Err    error  // underlying error, if any
}

func (e *FrameError) Error() string {
	msg := fmt.Sprintf("watch stream: frame at byte %d: %s", e.Offset, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if len(e.Frame) > 0 {
		msg += fmt.Sprintf(" (frame starts %q)", e.Frame)
	}
	return msg
}

func (e *FrameError) Unwrap() error { return e.Err }

// ErrFrameTooLarge is wrapped by the error of a watch event or list item over the size
// limit (MaxFrameSize). The event is lost: a watch cannot resume past it, only a relist
// (which reports the same error until the object shrinks or the limit is raised).
var ErrFrameTooLarge = errors.New("frame exceeds the maximum size")

// tooLargeReason says what the limit is and where to raise it, so that the error in a
// sync status is enough to fix it.
func tooLargeReason(max int) string {
	return fmt.Sprintf("over the %d-byte limit (raise MaxFrameSize in the reflector, watch or list options)", max)
}

// frameReader splits a byte stream into top-level JSON objects. It does not rely on chunk
// or line boundaries: it tracks string and nesting state byte by byte, so a frame may
// arrive in any number of reads and several frames may share one. It never holds more
// than one frame (plus one read) in memory: its buffer never grows past max + readSize.
type frameReader struct {
	readBuffer
	valid bool // the last frame next returned is known to be valid JSON
	// readyAt and readyEnd are where pending found a whole valid frame (readyEnd 0: none
	// found); fill, which moves the data, clears them.
	readyAt, readyEnd int
}

func newFrameReader(r io.Reader, max int) *frameReader {
	if max <= 0 {
		max = DefaultMaxFrameSize
	}
	return &frameReader{readBuffer: readBuffer{r: r, max: max, buf: make([]byte, readSize)}}
}

// next returns the next frame and the byte offset in the stream where it starts. The
// slice is valid until the following call. At a clean end between frames it returns io.EOF.
// With stamp set it also returns when, on that clock, the frame's first byte was there (trace.Started):
// now if an earlier read brought it, else when the read that brought it returned, so
// the wait on an idle stream is nobody's.
func (f *frameReader) next(stamp clock.Clock) (frame []byte, at int64, started time.Time, err error) {
	// Skip white space between frames.
	for {
		next := jsonscan.SkipSpace(f.buf[:f.end], f.start)
		f.offset += int64(next - f.start)
		f.start = next
		if f.start < f.end {
			break
		}
		if err := f.fill(); err != nil {
			return nil, f.offset, started, err
		}
	}
	if stamp != nil {
		started = stamp.Now()
	}
	at = f.offset
	if f.buf[f.start] != '{' {
		return nil, at, started, f.malformed("expected '{' to open an event", nil, f.end)
	}
	// Most often the whole frame is in the buffer and valid: one pass finds its end and
	// checks it, and the decoder need not check it again. Otherwise (a frame cut by the
	// read, or not valid) the frame is split by its brackets alone, as it always was, and
	// checked after.
	end, ok := f.readyEnd, f.readyAt == f.start && f.readyEnd > 0 // found by pending
	if !ok {
		end, ok = jsonscan.ValidAt(f.buf[:f.end], f.start)
	}
	f.readyEnd = 0
	if ok && end-f.start <= f.max {
		frame = f.buf[f.start:end]
		f.offset += int64(len(frame))
		f.start, f.valid = end, true
		return frame, at, started, nil
	}
	f.valid = false
	var (
		scan jsonscan.Scanner
		i    = f.start // bytes before i are scanned
	)
	for {
		if n := scan.End(f.buf[i:f.end]); n >= 0 {
			if i+n-f.start > f.max {
				return nil, at, started, f.malformed(tooLargeReason(f.max), ErrFrameTooLarge, f.start+256)
			}
			frame = f.buf[f.start : i+n]
			f.offset += int64(len(frame))
			f.start = i + n
			return frame, at, started, nil
		}
		i = f.end
		if i-f.start >= f.max {
			return nil, at, started, f.malformed(tooLargeReason(f.max), ErrFrameTooLarge, f.start+256)
		}
		// Need more input: move the partial frame to the front, grow if full, read.
		shift := f.start
		if err := f.fill(); err != nil {
			if err == io.EOF {
				return nil, at, started, f.malformed("stream ended inside a frame", io.ErrUnexpectedEOF, f.end)
			}
			return nil, at, started, err
		}
		i -= shift - f.start
	}
}

// validated reports whether the frame next returned last was found valid (jsonscan.Valid)
// while it was split off; false says nothing.
func (f *frameReader) validated() bool { return f.valid }

// pending reports whether a whole, valid frame is buffered: next will return it without
// reading. The end it finds is kept for next, so the frame is scanned once. (A frame the
// buffer holds only the start of is not pending: a caller holding earlier frames hands
// them on rather than wait for it.)
func (f *frameReader) pending() bool { return f.pendingAt(f.start) }

// pendingAt is pending of a frame that starts at buf[i] or after white space there.
func (f *frameReader) pendingAt(i int) bool {
	i = jsonscan.SkipSpace(f.buf[:f.end], i)
	if i == f.end {
		return false
	}
	if f.buf[i] != '{' {
		return true // next fails at once
	}
	end, ok := jsonscan.ValidAt(f.buf[:f.end], i)
	if !ok || end-i > f.max {
		return false
	}
	f.readyAt, f.readyEnd = i, end
	return true
}

// fill reads more data (see readBuffer.fill), and forgets the frame pending found.
func (f *frameReader) fill() error {
	f.readyEnd = 0
	return f.readBuffer.fill(0)
}

// readBuffer is a stream read into a buffer that holds at most one frame (of at most
// max bytes) and one read: the JSON frame reader's, and the protobuf one's.
type readBuffer struct {
	r          io.Reader
	max        int
	buf        []byte
	start, end int // unconsumed data is buf[start:end]
	offset     int64
	err        error // sticky read error
	// A watch's buffer follows its stream (watchReads): it grows to busyReadSize while
	// reads fill it (busy), and goes back to readSize after idleReads short ones in a row
	// (short counts them).
	follows bool
	busy    bool
	short   int
}

// A watch stream that has more waiting than a read takes is read in larger reads: each
// read of a socket costs a system call and, for TCP, an acknowledgement to send, so a
// busy stream's buffer grows to busyReadSize (about a tenth of the CPU of a steady
// protobuf watch on loopback went to 32 KB reads). A list is read into the buffer it
// started with: it is over in seconds, and a buffer grown page after page is garbage
// the sync's collector would have to keep up with.
const (
	busyReadSize = 256 << 10
	idleReads    = 16
)

// watchReads makes f's buffer follow its stream (see above).
func (f *readBuffer) watchReads() { f.follows = true }

// fill reads more data, compacting and growing the buffer as needed to hold need bytes
// from start (never past max plus one read). It returns the sticky error once no data
// is left.
func (f *readBuffer) fill(need int) error {
	if f.err != nil {
		return f.err
	}
	if f.start > 0 {
		copy(f.buf, f.buf[f.start:f.end])
		f.end -= f.start
		f.start = 0
	}
	limit := f.max + readSize
	switch {
	case f.end == len(f.buf) || need > len(f.buf):
		n := min(max(need, 2*len(f.buf)), limit)
		if n <= f.end {
			return &FrameError{Offset: f.offset, Reason: tooLargeReason(f.max), Err: ErrFrameTooLarge}
		}
		f.resize(n)
	case f.busy && len(f.buf) < min(busyReadSize, limit):
		f.resize(min(2*len(f.buf), busyReadSize, limit))
	case f.short >= idleReads && len(f.buf) > readSize && f.end <= readSize/2 && need <= readSize:
		f.resize(readSize)
	}
	room := len(f.buf) - f.end
	n, err := f.r.Read(f.buf[f.end:])
	f.end += n
	if f.follows {
		f.busy = n == room && room >= readSize/2
		if f.short++; n >= readSize/4 {
			f.short = 0
		}
	}
	if err != nil {
		f.err = err
		if n > 0 {
			return nil
		}
		return err
	}
	return nil
}

// resize moves the buffered bytes, which start at 0, into a buffer of n bytes.
func (f *readBuffer) resize(n int) {
	b := make([]byte, n)
	copy(b, f.buf[:f.end])
	f.buf, f.short = b, 0
}

func (f *frameReader) malformed(reason string, err error, upto int) *FrameError {
	end := min(upto, f.end, f.start+256)
	fe := &FrameError{Offset: f.offset, Reason: reason, Err: err, Frame: append([]byte(nil), f.buf[f.start:end]...)}
	f.err = fe // the stream cannot be resynchronised after a bad frame
	return fe
}

// peek returns the next byte that is not white space, without consuming it, reading more
// as needed; io.EOF at the end of the stream. It lets a caller step over what lies
// between frames (a list's commas and closing bracket).
func (f *frameReader) peek() (byte, error) {
	for {
		next := jsonscan.SkipSpace(f.buf[:f.end], f.start)
		f.offset += int64(next - f.start)
		f.start = next
		if f.start < f.end {
			return f.buf[f.start], nil
		}
		if err := f.fill(); err != nil {
			return 0, err
		}
	}
}

// skip consumes one byte that peek returned.
func (f *frameReader) skip() {
	f.start++
	f.offset++
}

// rest is what the reader has not consumed: its buffered bytes, then the stream.
func (f *frameReader) rest() io.Reader {
	buffered := bytes.NewReader(append([]byte(nil), f.buf[f.start:f.end]...))
	if f.err != nil {
		return io.MultiReader(buffered, errReader{f.err})
	}
	return io.MultiReader(buffered, f.r)
}

// errReader fails every read with err (a stream's sticky error, io.EOF included).
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
