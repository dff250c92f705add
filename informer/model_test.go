package informer

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

var modelSeeds = flag.Int("model.seeds", 4, "seeds for TestModel (make test runs a few; raise it to soak)")

// TestModel interleaves random creates, updates and deletes with random faults (cut and
// stalled streams, malformed frames, 429s and 503s, compaction, a tiny history window that
// forces 410s) and checks that, once the faults stop and the informer catches up, the
// cache equals the server exactly and so does every handler's view built from its events.
func TestModel(t *testing.T) {
	for seed := range *modelSeeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { runModel(t, uint64(seed)) })
	}
}

func runModel(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 42))
	e := newEnv(t, apisim.Options{HistoryWindow: 40 + rng.IntN(200), BookmarkInterval: 100 * time.Millisecond})
	ro := fastReflector()
	ro.StreamingList = rng.IntN(2) == 0
	ro.WatchTimeoutMin, ro.WatchTimeoutMax, ro.IdleMargin = time.Second, 2*time.Second, 300*time.Millisecond
	ro.PageSize = int64(5 + rng.IntN(20))
	inf := mustNew(t, e.pods, Options[*object.Pod]{Reflector: ro})
	recs := []*recorder{newRecorder(), newRecorder(), newRecorder()}
	inf.AddEventHandler(recs[0], HandlerOptions{})
	inf.AddEventHandler(recs[1], HandlerOptions{BufferSize: 3}) // coalesces a lot
	for i := range 30 {
		e.create(t, fmt.Sprint("pre", i), nil)
	}
	run(t, inf)
	f := e.sim.Faults()
	ctx := context.Background()
	for step := range 400 {
		name := fmt.Sprint("p", rng.IntN(40))
		switch rng.IntN(4) {
		case 0, 1:
			_, _ = e.pods.Create(ctx, &object.Pod{ObjectMeta: object.ObjectMeta{Name: name}})
		case 2:
			_, _ = e.pods.Patch(ctx, name, listwatch.MergePatch, []byte(fmt.Sprintf(`{"metadata":{"labels":{"s":"%d"}}}`, step)), "")
		case 3:
			_ = e.pods.Delete(ctx, name, listwatch.DeleteOptions{})
		}
		if rng.IntN(25) == 0 {
			switch rng.IntN(7) {
			case 0:
				f.CutWatches(1+rng.IntN(5), rng.IntN(2) == 0)
			case 1:
				f.InjectMalformedFrames(1)
			case 2:
				f.InjectUnknownEvents(1)
			case 3:
				f.FailRequests(1+rng.IntN(3), []int{http.StatusTooManyRequests, http.StatusServiceUnavailable}[rng.IntN(2)], 0,
					func(r *http.Request) bool { return r.Method == http.MethodGet })
			case 4:
				e.sim.Compact()
			case 5:
				// A stall of random length is one of the model's faults: real time passes
				// with the streams silent (the informer runs on the real clock), not a
				// wait for some condition.
				f.StallWatches(true)
				time.Sleep(time.Duration(rng.IntN(500)) * time.Millisecond)
				f.StallWatches(false)
			case 6:
				f.CutWatches(0, false)
			}
		}
		if step == 200 { // a late handler joins mid-storm
			inf.AddEventHandler(recs[2], HandlerOptions{})
		}
		if rng.IntN(50) == 0 {
			// Think time: now and then the writer pauses, so the informer catches up at
			// random points of the storm instead of always trailing the writes.
			time.Sleep(time.Duration(rng.IntN(50)) * time.Millisecond)
		}
	}
	f.CutWatches(0, false)
	f.FailRequests(0, 0, 0, nil)
	f.StallWatches(false)
	// A last write gives the informer a resourceVersion to catch up to.
	_, _ = e.pods.Create(ctx, &object.Pod{ObjectMeta: object.ObjectMeta{Name: "final"}})
	want := e.serverState(t)
	testwait.Eventually(t, 20*time.Second, func() bool {
		ok := cmp.Equal(want, cacheState(inf))
		for _, r := range recs {
			ok = ok && cmp.Equal(want, r.snapshot())
		}
		return ok
	}, "seed %d: no convergence.\n%s", seed, testwait.Lazy(func() any {
		return fmt.Sprintf("cache vs server:\n%s\nhandler 0:\n%s\nhandler 1 (buffer 3):\n%s\nhandler 2 (late):\n%s\nstatus %+v",
			cmp.Diff(want, cacheState(inf)), cmp.Diff(want, recs[0].snapshot()),
			cmp.Diff(want, recs[1].snapshot()), cmp.Diff(want, recs[2].snapshot()), inf.Status())
	}))
	for i, r := range recs {
		if v := r.check.Broken(); len(v) > 0 {
			t.Errorf("seed %d: handler %d was told inconsistent events: %q", seed, i, v)
		}
	}
}
