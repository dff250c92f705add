package embedding_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/controllers"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
	"github.com/kinformer/kinformer/workqueue"
)

// countingClock is the embedder's clock: the wall clock, counting how often the engine
// reads it, which proves the engine reads this one and not time.Now.
type countingClock struct{ reads atomic.Int64 }

func (c *countingClock) Now() time.Time {
	c.reads.Add(1)
	return time.Now()
}

func (c *countingClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	c.reads.Add(1)
	return time.AfterFunc(d, f) // *time.Timer has Stop and Reset: it is a clock.Timer
}

// memorySource is the embedder's source of pods: a map with a revision counter and the
// history of changes. List answers a snapshot and its revision; Watch replays the changes
// after the revision it is asked for, then streams new ones, so nothing between a list
// and the watch after it is lost (the apiserver's promise, kept here too).
type memorySource struct {
	mu      sync.Mutex
	rev     int
	pods    map[string]*object.Pod
	history []listwatch.Event[*object.Pod] // history[i] has revision i+1
	streams []*chanStream
}

func (s *memorySource) List(ctx context.Context, _ listwatch.ListOptions) (*object.List[*object.Pod], error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := &object.List[*object.Pod]{}
	l.ResourceVersion = strconv.Itoa(s.rev)
	for _, p := range s.pods {
		l.Items = append(l.Items, object.DeepCopy(p))
	}
	return l, nil
}

func (s *memorySource) Watch(ctx context.Context, opts listwatch.WatchOptions) (listwatch.Stream[*object.Pod], error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	from, err := strconv.Atoi(opts.ResourceVersion)
	if err != nil || from > s.rev {
		return nil, fmt.Errorf("memory source: cannot watch from resourceVersion %q", opts.ResourceVersion)
	}
	// Room for the replay and then some: a consumer slower than that holds up apply
	// (back-pressure), it never deadlocks, since Next does not take s.mu.
	missed := s.history[from:]
	st := &chanStream{events: make(chan listwatch.Event[*object.Pod], len(missed)+64), closed: make(chan struct{})}
	for _, ev := range missed {
		st.send(ev)
	}
	s.streams = append(s.streams, st)
	return st, nil
}

// apply records a change and sends it to every open stream.
func (s *memorySource) apply(t listwatch.EventType, p *object.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rev++
	p.ResourceVersion = strconv.Itoa(s.rev)
	if t == listwatch.Deleted {
		delete(s.pods, object.Key(p))
	} else {
		s.pods[object.Key(p)] = p
	}
	ev := listwatch.Event[*object.Pod]{Type: t, Object: p}
	s.history = append(s.history, ev)
	for _, st := range s.streams {
		st.send(ev)
	}
}

// expireStreams ends every open stream with 410 Gone, as an apiserver does when the
// resourceVersion it resumes from is compacted: the reflector must relist.
func (s *memorySource) expireStreams() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.streams {
		st.fail(object.NewExpired("too old resource version"))
	}
	s.streams = nil
}

// chanStream is the embedder's listwatch.Stream: events on a channel, an end with an
// error, and a Close that unblocks Next.
type chanStream struct {
	events chan listwatch.Event[*object.Pod]
	closed chan struct{}
	once   sync.Once
	err    error
}

func (c *chanStream) Next() (listwatch.Event[*object.Pod], error) {
	select {
	case ev := <-c.events:
		return ev, nil
	case <-c.closed:
		return listwatch.Event[*object.Pod]{}, c.err
	}
}

func (c *chanStream) Close()         { c.fail(io.EOF) }
func (c *chanStream) fail(err error) { c.once.Do(func() { c.err = err; close(c.closed) }) }

// send hands the stream its own copy: the informer's transform edits what it receives.
func (c *chanStream) send(ev listwatch.Event[*object.Pod]) {
	ev.Object = object.DeepCopy(ev.Object)
	select {
	case c.events <- ev:
	case <-c.closed:
	}
}

var _ listwatch.Stream[*object.Pod] = (*chanStream)(nil)
var _ reflector.ListerWatcher[*object.Pod] = (*memorySource)(nil)
var _ clock.Clock = (*countingClock)(nil)

// nodeMirror is the controller: it keeps, per pod, the node it runs on.
type nodeMirror struct {
	lister informer.Lister[*object.Pod]
	mu     sync.Mutex
	nodes  map[string]string
	synced chan struct{} // gets a token after each sync, for the test to wait on
}

func (m *nodeMirror) sync(_ context.Context, key string) error {
	defer func() {
		select {
		case m.synced <- struct{}{}:
		default: // a token is already waiting
		}
	}()
	m.mu.Lock()
	defer m.mu.Unlock()
	pod, ok := m.lister.Get(key)
	if !ok {
		delete(m.nodes, key)
		return nil
	}
	if pod.Spec.NodeName == "" {
		return errors.New("not scheduled yet") // retried with backoff, like any failed sync
	}
	m.nodes[key] = pod.Spec.NodeName
	return nil
}

func (m *nodeMirror) snapshot() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.nodes)
}

func pod(name, node string) *object.Pod {
	p := &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: "ns", Name: name}}
	p.Spec.NodeName = node
	return p
}

func TestEmbedderFeedsAnInformerAndAControllerFromMemory(t *testing.T) {
	src := &memorySource{pods: map[string]*object.Pod{}}
	src.apply(listwatch.Added, pod("a", "node-1"))
	clk := &countingClock{}

	inf, err := informer.New[*object.Pod](src, informer.Options[*object.Pod]{Name: "pods", Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	queue := workqueue.New[string](workqueue.Options[string]{Name: "mirror", Clock: clk,
		RateLimiter: workqueue.NewItemExponential[string](time.Millisecond, 50*time.Millisecond)})
	mirror := &nodeMirror{lister: inf.Lister(), nodes: map[string]string{}, synced: make(chan struct{}, 1)}
	enqueue := func(p *object.Pod) { queue.Add(object.Key(p)) }
	if _, err := inf.AddEventHandler(informer.HandlerFuncs[*object.Pod]{
		AddFunc:    func(p *object.Pod, _ bool) { enqueue(p) },
		UpdateFunc: func(_, p *object.Pod) { enqueue(p) },
		DeleteFunc: func(p *object.Pod, _ bool) { enqueue(p) },
	}, informer.HandlerOptions{Name: "mirror"}); err != nil {
		t.Fatal(err)
	}

	// The informer watches once it has listed: the 410 below must find its stream open.
	watching := make(chan struct{}, 1)
	inf.OnStatus(func(s informer.SyncStatus) {
		if s.State == reflector.StateWatching {
			select {
			case watching <- struct{}{}:
			default:
			}
		}
	})

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); inf.Run(ctx) }()
	workers := controllers.WorkerPool{Name: "mirror", Queue: queue, Sync: mirror.sync}
	go func() { defer wg.Done(); workers.Run(ctx, ctx, 2) }()
	defer func() { cancel(); queue.ShutDown(); wg.Wait() }()

	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := informer.WaitForSync(wctx, inf); err != nil {
		t.Fatal(err)
	}
	select {
	case <-watching:
	case <-wctx.Done():
		t.Fatalf("the informer did not watch: %+v", inf.Status())
	}
	src.apply(listwatch.Added, pod("b", "")) // fails until scheduled
	src.apply(listwatch.Added, pod("c", "node-2"))
	src.apply(listwatch.Modified, pod("b", "node-1"))
	src.expireStreams() // 410: the informer relists from memory
	src.apply(listwatch.Deleted, pod("a", "node-1"))
	src.apply(listwatch.Added, pod("d", "node-3"))

	want := map[string]string{"ns/b": "node-1", "ns/c": "node-2", "ns/d": "node-3"}
	timeout := time.After(10 * time.Second)
	for !cmp.Equal(mirror.snapshot(), want) { // looked at again after each sync
		select {
		case <-mirror.synced:
		case <-timeout:
			t.Fatalf("mirror (-want +got):\n%s", cmp.Diff(want, mirror.snapshot()))
		}
	}
	if st := inf.Status(); st.Relists != 1 {
		t.Errorf("Relists = %d, want 1 (the 410 from memory)", st.Relists)
	}
	if clk.reads.Load() == 0 {
		t.Error("the engine never read the embedder's clock")
	}
}
