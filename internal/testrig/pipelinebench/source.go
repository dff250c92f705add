package pipelinebench

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/kinformer/kinformer/internal/codec"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// Source is a ListerWatcher for benchmarks: its list holds `objects` pods, and its first
// watch serves a recorded stream of updates to them once Start is called (so a benchmark
// can sync first and time only the stream). Later watches wait for the context to end.
type Source struct {
	objects []*object.Pod
	stream  []byte
	start   chan struct{}
	served  bool
}

// NewSource lists `objects` pods and then serves n MODIFIED events on them.
func NewSource(objects, n int) *Source {
	s := &Source{start: make(chan struct{})}
	for i := range objects {
		p, err := codec.DecodeUnvalidated[*object.Pod]([]byte(PodJSON(i, 1)), object.DecodeOptions{})
		if err != nil {
			panic(err)
		}
		s.objects = append(s.objects, p)
	}
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"type":"MODIFIED","object":%s}`+"\n", PodJSON(i%objects, i+2))
	}
	s.stream = b.Bytes()
	return s
}

// StreamBytes is the size of the recorded stream.
func (s *Source) StreamBytes() int { return len(s.stream) }

// Start releases the stream.
func (s *Source) Start() { close(s.start) }

// List returns the pods at resourceVersion 1.
func (s *Source) List(context.Context, listwatch.ListOptions) (*object.List[*object.Pod], error) {
	return &object.List[*object.Pod]{ListMeta: object.ListMeta{ResourceVersion: "1"}, Items: s.objects}, nil
}

// Watch serves the stream once (after Start), then blocks until ctx ends.
func (s *Source) Watch(ctx context.Context, opts listwatch.WatchOptions) (listwatch.Stream[*object.Pod], error) {
	if !s.served {
		s.served = true
		select {
		case <-s.start:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return listwatch.NewWatchFromReader[*object.Pod](ctx, io.NopCloser(bytes.NewReader(s.stream)), opts), nil
	}
	<-ctx.Done()
	return nil, ctx.Err()
}
