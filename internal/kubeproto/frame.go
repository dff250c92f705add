package kubeproto

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// AppendFrame appends msg as one frame of a protobuf watch stream: its length as four
// big-endian bytes, then msg.
func AppendFrame(dst, msg []byte) []byte {
	if uint64(len(msg)) > math.MaxUint32 {
		// A length that does not fit would silently desynchronise the stream.
		panic("kubeproto: watch frame longer than 4 GiB")
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(msg)))
	return append(dst, msg...)
}

// defaultMaxFrame is the limit of a FrameReader made with max ≤ 0: the 16 MiB that
// listwatch and apimachinery's stream decoder allow one event.
const defaultMaxFrame = 16 << 20

// ErrFrameTooLarge is wrapped by the error of a frame whose length exceeds the
// FrameReader's limit.
var ErrFrameTooLarge = errors.New("protobuf watch frame exceeds the limit")

type frameTooLargeError struct {
	size uint32
	max  int
}

func (e *frameTooLargeError) Error() string {
	return fmt.Sprintf("protobuf watch frame of %d bytes exceeds the limit of %d", e.size, e.max)
}

func (e *frameTooLargeError) Unwrap() error { return ErrFrameTooLarge }

// FrameReader splits a protobuf watch stream into its frames.
type FrameReader struct {
	r   io.Reader
	max int
	hdr [4]byte
	buf []byte
	err error // sticky: after a bad frame the stream cannot be resynchronised
}

// NewFrameReader returns a FrameReader of r that refuses frames longer than max bytes
// (max ≤ 0: 16 MiB), before allocating for them, so that a broken or hostile length
// cannot make it allocate up to 4 GiB.
func NewFrameReader(r io.Reader, max int) *FrameReader {
	if max <= 0 {
		max = defaultMaxFrame
	}
	return &FrameReader{r: r, max: max}
}

// Next returns the next frame's message, valid until the following call (one buffer,
// grown to the largest frame yet, is reused). At a clean end between frames it returns
// io.EOF; a stream that ends inside a frame, header or message, is io.ErrUnexpectedEOF.
// After an error every call returns the same error.
func (f *FrameReader) Next() ([]byte, error) {
	if f.err != nil {
		return nil, f.err
	}
	msg, err := f.next()
	if err != nil {
		f.err = err
	}
	return msg, err
}

func (f *FrameReader) next() ([]byte, error) {
	// io.ReadFull already says io.EOF for nothing read and io.ErrUnexpectedEOF for a
	// part of the header.
	if _, err := io.ReadFull(f.r, f.hdr[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(f.hdr[:])
	if uint64(size) > uint64(f.max) {
		return nil, &frameTooLargeError{size: size, max: f.max}
	}
	if int(size) > cap(f.buf) {
		// Grow at least twofold, so that a stream of growing frames does not
		// allocate at each one.
		f.buf = make([]byte, max(int(size), min(2*cap(f.buf), f.max)))
	}
	msg := f.buf[:size:size]
	if _, err := io.ReadFull(f.r, msg); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return msg, nil
}
