package listwatch

import (
	"fmt"
	"io"
	"time"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/internal/jsonscan"
)

// itemSource is the items of a list page as a frameSource: each next is the next item,
// io.EOF after the closing bracket, the errors those of decodeItems.
type itemSource struct {
	fr *frameReader
	n  int // items returned
}

func (s *itemSource) next(clock.Clock) ([]byte, int64, time.Time, error) {
	c, err := s.fr.peek()
	if err != nil {
		return nil, 0, time.Time{}, fmt.Errorf("items: %w", unexpectedEOF(err))
	}
	if c == ']' {
		s.fr.skip()
		return nil, 0, time.Time{}, io.EOF
	}
	if s.n > 0 {
		if c != ',' {
			return nil, 0, time.Time{}, fmt.Errorf("items: invalid character %q after item %d", c, s.n-1)
		}
		s.fr.skip()
		if c, err = s.fr.peek(); err != nil {
			return nil, 0, time.Time{}, fmt.Errorf("items: %w", unexpectedEOF(err))
		}
	}
	if c != '{' {
		if c == 'n' {
			return nil, 0, time.Time{}, fmt.Errorf("item %d is null", s.n)
		}
		return nil, 0, time.Time{}, fmt.Errorf("item %d: an object is a JSON object, not a value starting with %q", s.n, c)
	}
	frame, at, _, err := s.fr.next(nil)
	if err != nil {
		return nil, at, time.Time{}, fmt.Errorf("item %d: %w", s.n, unexpectedEOF(err))
	}
	s.n++
	return frame, at, time.Time{}, nil
}

// pending reports whether next would return without reading: the closing bracket, or
// the comma and the whole item after it, is buffered. (Stopping at the comma, as the
// watch's frames have none, would hand a batch out only once the next item's bytes came.)
func (s *itemSource) pending() bool {
	b := s.fr.buf[:s.fr.end]
	i := jsonscan.SkipSpace(b, s.fr.start)
	switch {
	case i == len(b):
		return false
	case b[i] == ']':
		return true
	case b[i] == ',' && s.n > 0:
		i++
	}
	return s.fr.pendingAt(i)
}
func (s *itemSource) validated() bool { return s.fr.validated() }

// close is nothing: the list's caller closes the body, which ends a read in progress.
func (s *itemSource) close() error { return nil }
