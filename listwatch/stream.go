package listwatch

// Stream is an open watch, read one event at a time: what a reflector consumes. *Watch is
// the apiserver's stream over HTTP or a websocket; an embedder can supply any other
// source (a recorded trace, another transport, an in-memory fake such as Fake) by
// returning its own Stream from a ListerWatcher's Watch.
//
// The contract a reflector relies on:
//   - Next blocks for the next event. It returns io.EOF when the source ended the stream
//     cleanly (the reflector then resumes from the last resourceVersion it saw), an error
//     for which object.IsGone is true when that resourceVersion is too old (the reflector
//     relists), or any other error for a broken stream (the reflector resumes, backing
//     off if the stream did no work). Once Next has failed, it keeps failing.
//   - Close may be called from any goroutine, more than once, and must make a blocked
//     Next return: a reflector closes its stream when its context ends, and a streaming
//     list that overstays its timeout.
//   - A BOOKMARK event's object carries only a resourceVersion (and, ending a streaming
//     list's initial events, InitialEventsEndAnnotation).
type Stream[T any] interface {
	Next() (Event[T], error)
	Close()
}

var _ Stream[any] = (*Watch[any])(nil)
