package listwatch

import (
	"errors"
	"io"
	"sync"
)

// ErrFakeClosed is what Fake's senders return once the stream is closed.
var ErrFakeClosed = errors.New("fake watch stream: closed")

// Fake is a Stream a test drives by hand, as client-go's FakeWatcher serves its users:
// each Add, Modify, Delete or Bookmark blocks until Next has taken the event (so when it
// returns, the consumer has it), End and Fail end the stream the way a server would, and
// Close, from either side, unblocks both.
type Fake[T any] struct {
	events chan Event[T]
	ended  chan struct{} // closed by End, Fail or Close
	once   sync.Once
	err    error // why it ended: io.EOF, Fail's error or ErrFakeClosed
}

// NewFake returns an open fake stream.
func NewFake[T any]() *Fake[T] {
	return &Fake[T]{events: make(chan Event[T]), ended: make(chan struct{})}
}

// Next returns the next event sent, or the error that ended the stream.
func (f *Fake[T]) Next() (Event[T], error) {
	select {
	case ev := <-f.events:
		return ev, nil
	case <-f.ended:
		return Event[T]{}, f.err
	}
}

// Close ends the stream; a blocked Next returns ErrFakeClosed and later sends fail.
func (f *Fake[T]) Close() { f.end(ErrFakeClosed) }

// Add, Modify, Delete and Bookmark send one event and wait until Next has taken it;
// they return ErrFakeClosed if the stream ends first.
func (f *Fake[T]) Add(obj T) error      { return f.Send(Event[T]{Type: Added, Object: obj}) }
func (f *Fake[T]) Modify(obj T) error   { return f.Send(Event[T]{Type: Modified, Object: obj}) }
func (f *Fake[T]) Delete(obj T) error   { return f.Send(Event[T]{Type: Deleted, Object: obj}) }
func (f *Fake[T]) Bookmark(obj T) error { return f.Send(Event[T]{Type: Bookmark, Object: obj}) }

// Send sends any event, and waits like Add.
func (f *Fake[T]) Send(ev Event[T]) error {
	select {
	case f.events <- ev:
		return nil
	case <-f.ended:
		return ErrFakeClosed
	}
}

// End ends the stream cleanly: Next returns io.EOF, as when a server's timeoutSeconds
// pass.
func (f *Fake[T]) End() { f.end(io.EOF) }

// Fail ends the stream with err: a *object.StatusError with code 410 makes a reflector
// relist, anything else reads as a broken connection.
func (f *Fake[T]) Fail(err error) { f.end(err) }

// Done is closed once the stream has ended, by either side.
func (f *Fake[T]) Done() <-chan struct{} { return f.ended }

func (f *Fake[T]) end(err error) {
	f.once.Do(func() {
		f.err = err
		close(f.ended)
	})
}

var _ Stream[any] = (*Fake[any])(nil)
