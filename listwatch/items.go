package listwatch

import (
	"fmt"
	"io"
	"time"

	"github.com/kinformer/kinformer/clock"
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

func (s *itemSource) pending() bool   { return s.fr.pending() }
func (s *itemSource) validated() bool { return s.fr.validated() }

// close is nothing: the list's caller closes the body, which ends a read in progress.
func (s *itemSource) close() error { return nil }
