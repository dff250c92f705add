package pipelinebench

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
	"time"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/internal/codec"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
)

// relistSource serves two states of `objects` pods from pre-encoded JSON, decoding each
// page on every List as a client would from the wire: the first state at RV 1, then,
// after its first watch is expired (410), a second state in which a fraction of the pods
// changed and one "marker" pod was added, so the moment the relist lands is visible.
type relistSource struct {
	pages  [2][][]string // state → pages → pod JSON
	expire chan struct{}
	mu     sync.Mutex
	state  int
}

const relistPageSize = 500

func newRelistSource(objects int, changed float64) *relistSource {
	s := &relistSource{expire: make(chan struct{})}
	changedN := int(float64(objects) * changed)
	for state := range 2 {
		var all []string
		for i := range objects {
			rv := 1
			if state == 1 && i < changedN {
				rv = 2 + i
			}
			all = append(all, PodJSON(i, rv))
		}
		if state == 1 {
			all = append(all, PodJSON(objects, 2+objects)) // the marker
		}
		for len(all) > 0 {
			n := min(relistPageSize, len(all))
			s.pages[state] = append(s.pages[state], all[:n])
			all = all[n:]
		}
	}
	return s
}

func (s *relistSource) List(_ context.Context, opts listwatch.ListOptions) (*object.List[*object.Pod], error) {
	s.mu.Lock()
	state := s.state
	s.mu.Unlock()
	page := 0
	if opts.Continue != "" {
		page, _ = strconv.Atoi(opts.Continue)
	}
	l := &object.List[*object.Pod]{ListMeta: object.ListMeta{ResourceVersion: strconv.Itoa(1 + state*1_000_000)}}
	for _, js := range s.pages[state][page] {
		p, err := codec.DecodeUnvalidated[*object.Pod]([]byte(js), object.DecodeOptions{})
		if err != nil {
			return nil, err
		}
		l.Items = append(l.Items, p)
	}
	if page+1 < len(s.pages[state]) {
		l.Continue = strconv.Itoa(page + 1)
	}
	return l, nil
}

// Watch: the first one waits for expire and answers 410 (the relist); later ones idle.
func (s *relistSource) Watch(ctx context.Context, _ listwatch.WatchOptions) (listwatch.Stream[*object.Pod], error) {
	s.mu.Lock()
	first := s.state == 0
	s.mu.Unlock()
	if first {
		select {
		case <-s.expire:
			s.mu.Lock()
			s.state = 1
			s.mu.Unlock()
			return nil, object.NewExpired("too old resource version")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// markedLive is the heap the last collection found live (the runtime's
// /gc/heap/live:bytes). It collects nothing itself, so it can be sampled while the
// relist runs without changing what it measures; after a runtime.GC it is the heap live
// now. (memtest.AfterGC, which the tests weigh caches with, collects first.)
func markedLive() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// RunRelistMemory measures the peak memory of a relist against the size of the store.
//
// An informer with one handler syncs `objects` pods; store is the live heap that adds.
// Then its watch gets 410 and it relists a state in which `changed` (0..1) of the pods
// moved. During the relist the GC runs at GOGC=1, so it collects almost continuously and
// the live heap it finds each cycle tracks the real peak closely; peak is the largest,
// above the same baseline. Reported, for each of the n (b.N) relists: store-MB and
// peak/store (the target is ≤ 2).
func RunRelistMemory(b B, n, objects int, changed float64) {
	for range n {
		peak, store := relistOnce(b, objects, changed)
		b.ReportMetric(float64(store)/(1<<20), "store-MB")
		b.ReportMetric(float64(peak)/float64(store), "peak/store")
	}
}

func relistOnce(b B, objects int, changed float64) (peak, store uint64) {
	src := newRelistSource(objects, changed)
	runtime.GC()
	base := markedLive()

	inf, err := informer.New[*object.Pod](src, informer.Options[*object.Pod]{Reflector: reflector.Options{
		WatchTimeoutMin: time.Hour, PageSize: relistPageSize}})
	if err != nil {
		b.Fatal(err)
	}
	_, _ = inf.AddEventHandler(informer.HandlerFuncs[*object.Pod]{}, informer.HandlerOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	if err := informer.WaitForSync(ctx, inf); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	store = markedLive() - base

	old := debug.SetGCPercent(1)
	defer debug.SetGCPercent(old)
	stop := make(chan struct{})
	var sampled sync.WaitGroup
	sampled.Add(1)
	go func() {
		defer sampled.Done()
		for {
			peak = max(peak, markedLive())
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
	}()
	close(src.expire)
	marker := fmt.Sprintf("ns%d/web-%d", objects%50, objects)
	for {
		if _, ok := inf.Lister().Get(marker); ok {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(stop)
	sampled.Wait()
	runtime.GC() // this cycle's live heap includes the end of the relist
	peak = max(peak, markedLive())
	return peak - base, store
}
