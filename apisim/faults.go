package apisim

import (
	"net/http"
	"sync"
	"time"

	"github.com/kinformer/kinformer/object"
)

// Faults injects the failures an informer must survive. Every method is safe to call
// while the server is serving; each takes effect on the next request or event.
type Faults struct {
	mu sync.Mutex

	failCount  int // requests still to fail
	failCode   int
	failAfter  time.Duration
	failFilter func(*http.Request) bool

	delay time.Duration

	cutAfter  int  // watch streams end after this many more events (0: off)
	cutAbrupt bool // abort the connection instead of ending cleanly

	malformed    int // frames still to replace with garbage
	unknownEvent int // frames still to send with an unknown event type
	stall        bool

	refuseStreamingList bool
	ignoreStreamingList bool
	ignoreShards        bool
	dropInitialEnd      bool
	forbid              map[string]bool

	watchDelays  map[string]time.Duration // by resource (plural name)
	delayChanged chan struct{}            // closed and replaced when watchDelays changes
}

// FailRequests answers the next count requests that match (nil: all but watches) with
// code, carrying Retry-After when retryAfter > 0 (429s always carry a hint of at least
// 1 s, as the real apiserver's do).
func (f *Faults) FailRequests(count, code int, retryAfter time.Duration, match func(*http.Request) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failCount, f.failCode, f.failAfter, f.failFilter = count, code, retryAfter, match
}

// Delay makes every request wait d before it is served.
func (f *Faults) Delay(d time.Duration) {
	f.mu.Lock()
	f.delay = d
	f.mu.Unlock()
}

// CutWatches ends every watch stream after it has sent n more events: cleanly (the
// chunked body ends) or abruptly (the connection is aborted mid-stream). n <= 0 turns it off.
func (f *Faults) CutWatches(n int, abrupt bool) {
	f.mu.Lock()
	f.cutAfter, f.cutAbrupt = n, abrupt
	f.mu.Unlock()
}

// InjectMalformedFrames replaces the next n watch events (across streams) with bytes that
// are not JSON.
func (f *Faults) InjectMalformedFrames(n int) {
	f.mu.Lock()
	f.malformed = n
	f.mu.Unlock()
}

// InjectUnknownEvents sends the next n watch events with the type "SURPRISE".
func (f *Faults) InjectUnknownEvents(n int) {
	f.mu.Lock()
	f.unknownEvent = n
	f.mu.Unlock()
}

// StallWatches makes open watch streams go silent while on (no events, no bookmarks, and
// no end at timeoutSeconds), like a connection a load balancer dropped without closing
// it: only the client's idle deadline ends them.
func (f *Faults) StallWatches(on bool) {
	f.mu.Lock()
	f.stall = on
	f.mu.Unlock()
}

// RefuseStreamingList answers sendInitialEvents watches with 422, as a server without
// the WatchList feature does.
func (f *Faults) RefuseStreamingList(on bool) {
	f.mu.Lock()
	f.refuseStreamingList = on
	f.mu.Unlock()
}

// IgnoreStreamingList answers sendInitialEvents watches as a server that does not know the
// parameter (an older apiserver, an aggregated API): a plain watch that sends ADDED for
// every object, then ordinary changes, and never the initial-events-end bookmark.
func (f *Faults) IgnoreStreamingList(on bool) {
	f.mu.Lock()
	f.ignoreStreamingList = on
	f.mu.Unlock()
}

// IgnoreShardSelector makes the server ignore the shardSelector parameter while on, as
// kube-apiserver 1.36 does without the ShardedListAndWatch feature gate (its default):
// lists are whole and carry no metadata.shardInfo, watches send every event, and a
// malformed selector is no error, all without a word. Off, the default, the simulator
// behaves as a gated apiserver.
func (f *Faults) IgnoreShardSelector(on bool) {
	f.mu.Lock()
	f.ignoreShards = on
	f.mu.Unlock()
}

func (f *Faults) ignoringShards() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ignoreShards
}

// DropInitialEventsEnd omits the bookmark that ends a streaming list's initial events.
func (f *Faults) DropInitialEventsEnd(on bool) {
	f.mu.Lock()
	f.dropInitialEnd = on
	f.mu.Unlock()
}

// Forbid answers every request on resource (plural name) with 403 while on.
func (f *Faults) Forbid(resource string, on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.forbid == nil {
		f.forbid = map[string]bool{}
	}
	f.forbid[resource] = on
}

// DelayWatchEvents holds back the watch events of resource (plural name, as for Forbid),
// as an apiserver whose watch cache lags does: each change reaches the open watches of
// that resource d after the stream learned of it (at once, for a stream keeping up), in
// order, and no bookmark claims a revision whose event is still held back. A long d holds
// the events until the delay is shortened or turned off (d <= 0), which sends those then
// due at once. Lists, and the initial events of a watch, are not delayed: a client that
// relists sees the current state.
func (f *Faults) DelayWatchEvents(resource string, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.watchDelays == nil {
		f.watchDelays = map[string]time.Duration{}
	}
	if d > 0 {
		f.watchDelays[resource] = d
	} else {
		delete(f.watchDelays, resource)
	}
	if f.delayChanged != nil {
		close(f.delayChanged) // held streams look again
	}
	f.delayChanged = make(chan struct{})
}

// watchDelay returns resource's watch delay and a channel closed when any delay changes.
func (f *Faults) watchDelay(resource string) (time.Duration, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.delayChanged == nil {
		f.delayChanged = make(chan struct{})
	}
	return f.watchDelays[resource], f.delayChanged
}

// before applies delays and request failures.
func (f *Faults) before(r *http.Request) error {
	f.mu.Lock()
	delay := f.delay
	var err error
	isWatch := r.URL.Query().Get("watch") == "1" || r.URL.Query().Get("watch") == "true"
	matches := f.failFilter != nil && f.failFilter(r) || f.failFilter == nil && !isWatch
	if f.failCount > 0 && matches {
		f.failCount--
		se := object.NewStatusError(int32(f.failCode), reasonFor(f.failCode), "injected failure")
		retry := f.failAfter
		if f.failCode == http.StatusTooManyRequests && retry < time.Second {
			retry = time.Second
		}
		if retry > 0 {
			se.RetryAfter = retry
			se.Status.Details = &object.StatusDetails{RetryAfterSeconds: int32(retry / time.Second)}
		}
		err = se
	}
	f.mu.Unlock()
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
		}
	}
	return err
}

func (f *Faults) forbidden(resource string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.forbid[resource] {
		return object.NewStatusError(http.StatusForbidden, object.ReasonForbidden,
			"%s is forbidden: injected by the simulator", resource)
	}
	return nil
}

func reasonFor(code int) object.StatusReason {
	switch code {
	case http.StatusTooManyRequests:
		return object.ReasonTooManyRequests
	case http.StatusGone:
		return object.ReasonExpired
	case http.StatusForbidden:
		return object.ReasonForbidden
	case http.StatusUnauthorized:
		return object.ReasonUnauthorized
	case http.StatusGatewayTimeout:
		return object.ReasonTimeout
	}
	return object.ReasonInternalError
}

// frameFault says what to do with the next watch event of a stream.
type frameFault int

const (
	frameOK frameFault = iota
	frameMalformed
	frameUnknown
)

func (f *Faults) nextFrame() frameFault {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.malformed > 0:
		f.malformed--
		return frameMalformed
	case f.unknownEvent > 0:
		f.unknownEvent--
		return frameUnknown
	}
	return frameOK
}

func (f *Faults) watchCut() (int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cutAfter, f.cutAbrupt
}

func (f *Faults) stalled() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stall
}

func (f *Faults) streamingList() (refuse, ignore, dropEnd bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refuseStreamingList, f.ignoreStreamingList, f.dropInitialEnd
}
