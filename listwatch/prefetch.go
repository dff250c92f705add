package listwatch

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/internal/jsonscan"
)

// A watch stream is read in two stages, on two goroutines: the prefetcher reads the
// connection, splits it into frames and validates each (jsonscan.Valid), and the
// consumer (the reflector's goroutine, in Next) decodes them, in order. Reading, framing
// and validating are about a third of an event's cost; decoding is most of the rest. On
// one goroutine they take turns on one core while the second idles; split, the next
// frames are read and checked while this one is decoded.
//
// Frames travel in batches: every frame already in the read buffer when one is split
// off goes with it, up to maxBatchFrames or maxBatchBytes. A hand-off is a channel send
// and, when the consumer is asleep, a thread wake-up: one per batch rather than one per
// event, when the server sends faster than it is read. A frame waits for no later one:
// the batch goes as soon as the buffer holds no other complete frame. The consumer is
// the slower stage, so the prefetcher mostly waits for room and is woken once a batch:
// 128 KB batches (about 55 protobuf pods) took a steady watch from 5.4 to 5.1 µs of CPU
// an event against 32 KB ones (256 KB did no better). A batch starts at 48 KB and
// grows only as a busy stream fills it.
const (
	maxBatchFrames = 64
	maxBatchBytes  = 128 << 10
	// busyBatchSize is a batch's capacity once a stream fills it past its first 48 KB:
	// room for maxBatchBytes and a frame more than most frames.
	busyBatchSize = maxBatchBytes + 16<<10
	// batchesInFlight bounds what the prefetcher reads ahead of the consumer, so a slow
	// consumer still holds back the connection (and the server) as it did on one goroutine.
	batchesInFlight = 2
)

// errWatchClosed is what a Next blocked on a closed watch returns when the source gave
// no error of its own.
var errWatchClosed = errors.New("watch stream: closed")

// rawFrame is one frame as the consumer gets it.
type rawFrame struct {
	data          []byte
	at            int64     // byte offset in the stream
	started, read time.Time // trace stamps (zero when not stamped)
	valid         bool      // jsonscan.Valid held
}

// frameBatch is frames back to back in one buffer; spans index it.
type frameBatch struct {
	buf   []byte
	spans []frameSpan
}

type frameSpan struct {
	off, n        int
	at            int64
	started, read time.Time
	valid         bool
}

// prefetcher runs a frameSource on its own goroutine (see above). Its consumer calls
// next and buffered from one goroutine; close may come from any.
type prefetcher struct {
	src   frameSource
	stamp clock.Clock // stamps every frame when set: the consumer cannot say in advance which it will follow

	full  chan *frameBatch // to the consumer; closed after the last batch
	pool  *batchPool       // batches come from it and go back to it,
	spare chan *frameBatch // or, those a busy stream filled, back here (see recycle)
	ended atomic.Bool      // run returned: no batch is taken from spare any more
	done  chan struct{}    // closed by close: the prefetcher stops sending
	once  sync.Once
	err   error // how the source ended, written before full is closed
	errAt int64 // the stream offset the source gave with err

	cur *frameBatch // the consumer's batch
	i   int         // its next span
}

// readAhead says how a stream (a watch, a list page's items) is read: on a goroutine of
// its own, a prefetcher, with batches from pool (on), or by its consumer. A Client
// decides it once (defaultReadAhead); tests try both.
type readAhead struct {
	on   bool
	pool *batchPool // nil: no pool
}

// defaultReadAhead reads ahead unless on one core, where the second goroutine would only
// add hand-offs.
func defaultReadAhead(pool *batchPool) readAhead {
	return readAhead{on: runtime.GOMAXPROCS(0) > 1, pool: pool}
}

// start is the prefetcher reading src as ra says, or nil when src is read by its consumer.
func (ra readAhead) start(ctx context.Context, src frameSource, stamp clock.Clock) *prefetcher {
	if !ra.on {
		return nil
	}
	return newPrefetcher(ctx, src, stamp, ra.pool)
}

// newPrefetcher starts reading src. It stops at close, at the source's end, or at the end
// of ctx, so that a stream its caller drops without closing still lets its goroutine go.
func newPrefetcher(ctx context.Context, src frameSource, stamp clock.Clock, pool *batchPool) *prefetcher {
	p := &prefetcher{src: src, stamp: stamp, full: make(chan *frameBatch, batchesInFlight), pool: pool,
		spare: make(chan *frameBatch, batchesInFlight), done: make(chan struct{})}
	go p.run(ctx)
	return p
}

// run reads frames into batches until the source fails (io.EOF included) or close.
func (p *prefetcher) run(ctx context.Context) {
	defer func() {
		p.ended.Store(true) // before full is closed: the consumer sees it when it sees the end
		close(p.full)
	}()
	for {
		var b *frameBatch
		select {
		case b = <-p.spare:
		default:
			b = p.pool.get()
		}
		at, err := p.fill(b)
		if len(b.spans) > 0 {
			select {
			case p.full <- b:
			case <-p.done:
				err = errWatchClosed
			case <-ctx.Done():
				err = ctx.Err()
			}
		} else {
			p.pool.put(b)
		}
		if err != nil {
			p.err, p.errAt = err, at
			return
		}
	}
}

// fill adds frames to b until the source has no complete one buffered or b is full. An
// error comes with the stream offset the source gave it.
func (p *prefetcher) fill(b *frameBatch) (int64, error) {
	for {
		frame, at, started, err := p.src.next(p.stamp)
		if err != nil {
			return at, err
		}
		s := frameSpan{off: len(b.buf), n: len(frame), at: at, started: started, valid: p.src.validated() || jsonscan.Valid(frame)}
		if p.stamp != nil {
			s.read = p.stamp.Now()
		}
		if n := len(b.buf) + len(frame); n > cap(b.buf) && n <= busyBatchSize {
			b.buf = append(make([]byte, 0, busyBatchSize), b.buf...) // once, not by appends' steps
		}
		b.buf = append(b.buf, frame...)
		b.spans = append(b.spans, s)
		if !p.src.pending() || len(b.spans) >= maxBatchFrames || len(b.buf) >= maxBatchBytes {
			return 0, nil
		}
	}
}

// next returns the next frame, valid until the following call, or the source's error.
func (p *prefetcher) next() (rawFrame, error) {
	select {
	case <-p.done: // closed: what was read ahead is not handed out any more
		return rawFrame{}, errWatchClosed
	default:
	}
	if p.cur == nil || p.i == len(p.cur.spans) {
		if p.cur != nil {
			p.recycle(p.cur) // its frames are decoded, and the decoder keeps no part of them
		}
		b, ok := <-p.full
		if !ok {
			p.cur = nil
			return rawFrame{at: p.errAt}, p.err
		}
		p.cur, p.i = b, 0
	}
	s := p.cur.spans[p.i]
	p.i++
	return rawFrame{data: p.cur.buf[s.off : s.off+s.n : s.off+s.n], at: s.at, started: s.started, read: s.read, valid: s.valid}, nil
}

// recycle gives b back for another batch: to the prefetcher itself while the stream is
// busy (more batches wait for the consumer), else to the pool. The pool is emptied by
// every second collection, which a busy stream meets every few thousand events: its
// batches, grown to busyBatchSize, were then made and grown again, some 70 bytes an
// event of a steady protobuf watch. Once the stream quiets down (no batch waits) or has
// ended, its spares go back to the pool too, and a batch grown past busyBatchSize for a
// large object always does: only the pool lets them go in time.
func (p *prefetcher) recycle(b *frameBatch) {
	switch {
	case len(p.full) == 0 || p.ended.Load():
		p.pool.put(b)
		for {
			select {
			case s := <-p.spare:
				p.pool.put(s)
			default:
				return
			}
		}
	case cap(b.buf) > busyBatchSize:
		p.pool.put(b)
		return
	}
	b.buf, b.spans = b.buf[:0], b.spans[:0]
	select {
	case p.spare <- b:
	default:
		p.pool.put(b)
	}
}

// nextFrame is the next frame of src: from p, which reads src ahead, or read here when
// p is nil. The frame is valid until the following call.
func nextFrame(p *prefetcher, src frameSource, stamp clock.Clock) (rawFrame, error) {
	if p != nil {
		return p.next()
	}
	data, at, started, err := src.next(stamp)
	return rawFrame{data: data, at: at, started: started, valid: err == nil && src.validated()}, err
}

// buffered reports whether next would return without waiting for the connection.
func (p *prefetcher) buffered() bool {
	return p.cur != nil && p.i < len(p.cur.spans) || len(p.full) > 0
}

// close stops the prefetcher and the source; a blocked next then returns the source's
// error.
func (p *prefetcher) close() error {
	p.once.Do(func() { close(p.done) })
	return p.src.close()
}

// batchPool keeps frame batches for the watches and list pages of one Client, so that
// reading a stream allocates no buffer after its first few, nor each page of a list
// (which reads its next page while this one is decoded: ListOptions.OnContinue). The
// zero pool (nil) keeps none.
//
// It is a sync.Pool: what a stream puts back is taken again by the next batch or page,
// and what an idle Client holds goes with the second garbage collection after it was
// put back. A fixed free list kept 384 KB per Client for good, about 40 bytes a pod in
// a 10k-pod cache's figure; a batch grown for a large object (a 1 MB secret's) was kept
// until its stream ended, and now until the collector runs, which a stream of large
// objects gives it time to be reused before. A busy stream keeps the batches it fills
// to itself instead (prefetcher.recycle), as long as it stays busy.
type batchPool struct{ free sync.Pool }

func newBatchPool() *batchPool { return &batchPool{} }

// get returns an empty batch, with room for 48 KB: most streams' batches are small, and
// a busy stream's grows to busyBatchSize once.
func (p *batchPool) get() *frameBatch {
	if p != nil {
		if b, ok := p.free.Get().(*frameBatch); ok {
			return b
		}
	}
	return &frameBatch{buf: make([]byte, 0, readSize+16<<10), spans: make([]frameSpan, 0, maxBatchFrames)}
}

// put keeps b for reuse.
func (p *batchPool) put(b *frameBatch) {
	if p == nil {
		return
	}
	b.buf, b.spans = b.buf[:0], b.spans[:0]
	p.free.Put(b)
}
