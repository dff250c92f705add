package listwatch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/internal/kubeproto"
	"github.com/kinformer/kinformer/internal/protowire"
	"github.com/kinformer/kinformer/object"
)

// Protobuf bodies, read as they arrive: a watch is frames of a 4-byte big-endian length
// and a WatchEvent message; a list is the k8s\x00 magic, then an envelope whose field 2
// holds the List message, whose fields are its ListMeta (1) and its items (2), each the
// item's message behind its length. Both are read through protoReader, which holds at
// most one frame or item (bounded by MaxFrameSize) plus one read, as frameReader does
// for JSON: a list page is never held whole.

// protoReader is a bounded buffer over a stream of protobuf.
type protoReader struct{ readBuffer }

func newProtoReader(r io.Reader, max int) *protoReader {
	if max <= 0 {
		max = DefaultMaxFrameSize
	}
	return &protoReader{readBuffer{r: r, max: max, buf: make([]byte, readSize)}}
}

func (p *protoReader) buffered() []byte { return p.buf[p.start:p.end] }

// ensure reads until n bytes are buffered. At the end of the stream it returns io.EOF
// if nothing is buffered, io.ErrUnexpectedEOF if some is.
func (p *protoReader) ensure(n int) error {
	for p.end-p.start < n {
		if err := p.fill(n); err != nil {
			if err == io.EOF && p.end > p.start {
				return io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

func (p *protoReader) consume(n int) {
	p.start += n
	p.offset += int64(n)
}

// varint reads a varint, reading more of the stream as it needs.
func (p *protoReader) varint() (uint64, error) {
	for {
		v, n := protowire.ConsumeVarint(p.buffered())
		if n > 0 {
			p.consume(n)
			return v, nil
		}
		if err := protowire.Error(n); err != protowire.ErrTruncated {
			return 0, err
		}
		if err := p.ensure(p.end - p.start + 1); err != nil {
			return 0, err
		}
	}
}

// protoWatchSource is a protobuf watch stream as a frameSource: each frame the
// WatchEvent message, without its length.
type protoWatchSource struct {
	body   io.ReadCloser
	in     *protoReader
	cancel func()
}

func (s *protoWatchSource) next(stamp clock.Clock) ([]byte, int64, time.Time, error) {
	var started time.Time
	at := s.in.offset
	if err := s.in.ensure(4); err != nil {
		if err == io.ErrUnexpectedEOF {
			return nil, at, started, s.malformed("stream ended inside a frame's length", err)
		}
		return nil, at, started, err
	}
	if stamp != nil {
		started = stamp.Now()
	}
	n := int(binary.BigEndian.Uint32(s.in.buffered()))
	if n > s.in.max {
		return nil, at, started, s.malformed(tooLargeReason(s.in.max), ErrFrameTooLarge)
	}
	if err := s.in.ensure(4 + n); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, at, started, s.malformed("stream ended inside a frame", io.ErrUnexpectedEOF)
		}
		return nil, at, started, err
	}
	frame := s.in.buffered()[4 : 4+n]
	s.in.consume(4 + n)
	return frame, at, started, nil
}

func (s *protoWatchSource) malformed(reason string, err error) *FrameError {
	fe := &FrameError{Offset: s.in.offset, Reason: reason, Err: err, Frame: head(s.in.buffered())}
	s.in.err = fe // the stream cannot be resynchronised after a bad frame
	return fe
}

// pending reports whether a whole frame is buffered.
func (s *protoWatchSource) pending() bool {
	b := s.in.buffered()
	return len(b) >= 4 && len(b)-4 >= int(binary.BigEndian.Uint32(b))
}

// validated is true: there is no JSON to check, and the decoder checks the protobuf.
func (s *protoWatchSource) validated() bool { return true }

func (s *protoWatchSource) close() error {
	s.cancel()
	return s.body.Close()
}

// protoListSource is the items of a protobuf list page as a frameSource: each next is
// the next item's message, io.EOF after the last.
type protoListSource struct {
	in       *protoReader
	meta     object.ListMeta
	metaSeen bool
	left     int64 // bytes of the List message not yet read
	typeMeta object.TypeMeta
	n        int // items returned
}

// openProtoList reads the envelope up to the List message, and the ListMeta when it
// comes first (as the apiserver writes it), so that its continue token is known before
// any item is read.
func openProtoList(in *protoReader) (*protoListSource, error) {
	s := &protoListSource{in: in, left: -1}
	if err := in.ensure(4); err != nil {
		return nil, fmt.Errorf("protobuf list: %w", unexpectedEOF(err))
	}
	if [4]byte(in.buffered()) != kubeproto.Magic {
		return nil, fmt.Errorf("protobuf list: missing the k8s\\x00 magic (starts %q)", head(in.buffered()))
	}
	in.consume(4)
	for s.left < 0 {
		num, wire, err := s.tag()
		if err != nil {
			return nil, fmt.Errorf("protobuf list envelope: %w", unexpectedEOF(err))
		}
		switch {
		case num == 2 && wire == protowire.Bytes:
			l, err := in.varint()
			if err != nil {
				return nil, fmt.Errorf("protobuf list envelope: %w", unexpectedEOF(err))
			}
			s.left = int64(l)
		case num == 1 && wire == protowire.Bytes:
			b, err := s.value(wire, "the list's type")
			if err != nil {
				return nil, err
			}
			apiVersion, kind, err := kubeproto.ParseTypeMeta(b)
			if err != nil {
				return nil, fmt.Errorf("protobuf list envelope: %w", err)
			}
			s.typeMeta = object.TypeMeta{APIVersion: apiVersion, Kind: kind}
		default:
			if _, err := s.value(wire, "a field of the list's envelope"); err != nil {
				return nil, err
			}
		}
	}
	return s, s.readMetaFirst()
}

// readMetaFirst reads the List's first field if it is the ListMeta.
func (s *protoListSource) readMetaFirst() error {
	if s.left == 0 {
		return nil
	}
	if err := s.in.ensure(1); err != nil {
		return fmt.Errorf("protobuf list: %w", unexpectedEOF(err))
	}
	if num, wire, n := protowire.ConsumeTag(s.in.buffered()); n <= 0 || num != 1 || wire != protowire.Bytes {
		return nil
	}
	_, _, err := s.listField()
	return err
}

// tag reads a field's tag.
func (s *protoListSource) tag() (protowire.Number, protowire.Type, error) {
	v, err := s.in.varint()
	if err != nil {
		return 0, 0, err
	}
	num, wire, n := protowire.ConsumeTag(protowire.AppendVarint(nil, v))
	if n < 0 {
		return 0, 0, protowire.Error(n)
	}
	return num, wire, nil
}

// value reads a field's value (at most max bytes), valid until the next read.
func (s *protoListSource) value(wire protowire.Type, what string) ([]byte, error) {
	switch wire {
	case protowire.Varint:
		_, err := s.in.varint()
		return nil, unexpectedEOF(err)
	case protowire.Fixed32, protowire.Fixed64:
		n := 4
		if wire == protowire.Fixed64 {
			n = 8
		}
		if err := s.in.ensure(n); err != nil {
			return nil, unexpectedEOF(err)
		}
		b := s.in.buffered()[:n]
		s.in.consume(n)
		return b, nil
	case protowire.Bytes:
		l, err := s.in.varint()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, unexpectedEOF(err))
		}
		if l > uint64(s.in.max) {
			return nil, fmt.Errorf("%s is %s: %w", what, tooLargeReason(s.in.max), ErrFrameTooLarge)
		}
		if err := s.in.ensure(int(l)); err != nil {
			return nil, fmt.Errorf("%s: %w", what, unexpectedEOF(err))
		}
		b := s.in.buffered()[:l]
		s.in.consume(int(l))
		return b, nil
	}
	return nil, fmt.Errorf("%s: unknown wire type %d", what, wire)
}

// listField reads the List message's next field: an item's message (item true), or the
// ListMeta, read into s.meta, or a field skipped.
func (s *protoListSource) listField() (b []byte, item bool, err error) {
	before := s.in.offset
	num, wire, err := s.tag()
	if err != nil {
		return nil, false, fmt.Errorf("protobuf list: %w", unexpectedEOF(err))
	}
	what := fmt.Sprintf("item %d", s.n)
	if num == 1 {
		what = "the list's metadata"
	}
	if b, err = s.value(wire, what); err != nil {
		return nil, false, err
	}
	if s.left -= s.in.offset - before; s.left < 0 {
		return nil, false, errors.New("protobuf list: a field runs past the end of the list")
	}
	switch {
	case num == 2 && wire == protowire.Bytes:
		return b, true, nil
	case num == 1 && wire == protowire.Bytes:
		meta, err := kubeproto.ParseListMeta(b)
		if err != nil {
			return nil, false, fmt.Errorf("protobuf list: %w", err)
		}
		s.meta, s.metaSeen = meta, true
	case num <= 2:
		return nil, false, fmt.Errorf("protobuf list: field %d has wire type %d", num, wire)
	}
	return nil, false, nil
}

func (s *protoListSource) next(clock.Clock) ([]byte, int64, time.Time, error) {
	for s.left > 0 {
		at := s.in.offset
		b, item, err := s.listField()
		if err != nil {
			return nil, at, time.Time{}, err
		}
		if item {
			s.n++
			return b, at, time.Time{}, nil
		}
	}
	// The envelope's fields after the list (contentEncoding, contentType): skipped.
	for {
		num, wire, err := s.tag()
		if err == io.EOF {
			return nil, s.in.offset, time.Time{}, io.EOF
		}
		if err != nil {
			return nil, s.in.offset, time.Time{}, fmt.Errorf("protobuf list envelope: %w", err)
		}
		if _, err := s.value(wire, fmt.Sprintf("field %d of the list's envelope", num)); err != nil {
			return nil, s.in.offset, time.Time{}, err
		}
	}
}

// pending reports whether the next field is buffered whole ("false when in doubt").
func (s *protoListSource) pending() bool {
	b := s.in.buffered()
	_, _, n := protowire.ConsumeField(b)
	return n > 0
}

func (s *protoListSource) validated() bool { return true }

func (s *protoListSource) close() error { return nil }
