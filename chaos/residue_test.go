package chaos

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
)

// What a process holds once the engine has stopped: its goroutines, and its live heap
// split by who allocated it.

// goroutineSet is every goroutine at one moment, by id, with its stack.
type goroutineSet map[string]string

func goroutinesNow() goroutineSet { return leakcheck.Goroutines() }

// waitGoroutines polls until exactly the goroutines of base are running, or d has passed;
// it returns the stacks of the goroutines base does not have (and of those of base that
// have gone: a replaced goroutine is no less a difference). Before each look it calls
// tidy, which closes the idle connections of the test's own clients: a connection
// becomes idle only once net/http has forgotten its last request, a little after the
// caller has moved on, and it keeps its read loop until closed. The control plane's
// goroutines (one waits for each process, and a restarted apiserver has a new one) are
// not compared.
func waitGoroutines(base goroutineSet, d time.Duration, tidy func()) []string {
	compared := func(stack string) bool { return !strings.Contains(stack, "internal/testrig/cluster.(*Cluster).launch") }
	var diff []string
	testwait.Every(20*time.Millisecond).Poll(d, func() bool {
		tidy()
		now := goroutinesNow()
		diff = nil
		for id, stack := range now {
			if _, ok := base[id]; !ok && compared(stack) {
				diff = append(diff, "new: "+stack)
			}
		}
		for id, stack := range base {
			if _, ok := now[id]; !ok && compared(stack) {
				diff = append(diff, "gone: "+stack)
			}
		}
		return len(diff) == 0
	})
	slices.Sort(diff)
	return diff
}

// heapSample is the live heap after a full collection. With runtime.MemProfileRate at
// 1, every object allocated since has its allocation stack, so the heap can be split:
// conns is what net/http and crypto/tls allocated for connections (buffers, HPACK
// tables, TLS state), other every other object allocated since the rate was set, but
// for the measuring's own.
type heapSample struct {
	live  uint64 // HeapAlloc: every live object
	spans uint64 // HeapInuse: the spans holding them, free slots included
	conns uint64
	other uint64
	sites map[string]uint64 // other, by allocation site
}

// connFrame reports whether fn is part of net/http's or crypto/tls's per-connection
// machinery: what it allocates belongs to one connection and goes when it goes. A
// connection the engine failed to close keeps its read loop running, which the goroutine
// check sees.
func connFrame(fn string) bool {
	for _, c := range []string{
		"net/http.(*http2ClientConn).", "net/http.(*http2clientConnReadLoop).", "net/http.(*http2Transport).newClientConn",
		"net/http.(*http2clientStream).", "net/http.(*http2addConnCall).", "net/http.(*persistConn).",
		"net/http.(*Transport).dialConn", "net/http.(*http2serverConn).", "net/http.(*conn).", "crypto/tls.(*Conn).",
	} {
		if strings.HasPrefix(fn, c) {
			return true
		}
	}
	return false
}

// settle has the runtime free what nothing reaches any more, and what only stopped
// timers (see flushStoppedTimers) and sync.Pools reach: of two collections, the first
// moves the pools' contents to their victim caches, the second frees those.
func settle() {
	flushStoppedTimers()
	runtime.GC()
	runtime.GC()
}

// sampleHeap settles the heap and measures it.
func sampleHeap() heapSample {
	settle()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h := heapSample{live: ms.HeapAlloc, spans: ms.HeapInuse, sites: map[string]uint64{}}
	var records []runtime.MemProfileRecord
	n, _ := runtime.MemProfile(nil, false)
	for {
		records = make([]runtime.MemProfileRecord, n+50)
		var ok bool
		if n, ok = runtime.MemProfile(records, false); ok {
			records = records[:n]
			break
		}
	}
	for _, r := range records {
		conn, self, site, first := false, false, "", ""
		frames := runtime.CallersFrames(r.Stack())
		for {
			f, more := frames.Next()
			name := fmt.Sprintf("%s (%s:%d)", f.Function, f.File[strings.LastIndex(f.File, "/")+1:], f.Line)
			if first == "" {
				first = name
			}
			if site == "" && !strings.HasPrefix(f.Function, "runtime.") && !strings.HasPrefix(f.Function, "internal/") {
				site = name
			}
			conn = conn || connFrame(f.Function)
			// The measuring is not the engine's: the samples this one is compared with,
			// and the timers' heaps flushStoppedTimers has grown.
			self = self || strings.HasSuffix(f.Function, "chaos.sampleHeap") || strings.Contains(f.Function, "chaos.flushStoppedTimers")
			if !more {
				break
			}
		}
		if site == "" {
			site = first
		}
		switch {
		case self:
		case conn:
			h.conns += uint64(r.InUseBytes())
		default:
			h.other += uint64(r.InUseBytes())
			h.sites[site] += uint64(r.InUseBytes())
		}
	}
	return h
}

// flushStoppedTimers has the runtime let go of stopped timers. A stopped timer stays in
// its P's timer heap, holding its function and what that refers to (a stopped watch's
// idle timer holds the watch, its frame buffer and its informer's map table), until it
// reaches the top of the heap at its deadline (minutes, for a watch), or until stopped
// timers make up more than a quarter of that P's heap when the P next looks at it
// (runtime/time.go, timers.check). Many timers started and then stopped on every P,
// and each P's turn at its heap, make the latter true everywhere at once.
func flushStoppedTimers() {
	var wg sync.WaitGroup
	for range 4 * runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// All started before any is stopped: the runtime drops a stopped timer at
			// the end of the heap as soon as another one is started.
			timers := make([]*time.Timer, 512)
			for i := range timers {
				timers[i] = time.AfterFunc(time.Hour, func() {})
			}
			for _, t := range timers {
				t.Stop()
			}
			runtime.Gosched()
		}()
	}
	wg.Wait()
}

// growth lists the allocation sites whose live bytes grew from h to later, biggest first.
func (h heapSample) growth(later heapSample, top int) string {
	type site struct {
		name  string
		delta int64
	}
	var sites []site
	for name, b := range later.sites {
		if d := int64(b) - int64(h.sites[name]); d > 0 {
			sites = append(sites, site{name, d})
		}
	}
	slices.SortFunc(sites, func(a, b site) int { return int(b.delta - a.delta) })
	var out strings.Builder
	for i, s := range sites {
		if i == top {
			break
		}
		fmt.Fprintf(&out, "  %+8d B  %s\n", s.delta, s.name)
	}
	return out.String()
}

func (h heapSample) String() string {
	return fmt.Sprintf("live %.2f MB (spans %.2f MB); profiled: connections %.0f KB, other %.0f KB",
		float64(h.live)/1e6, float64(h.spans)/1e6, float64(h.conns)/1e3, float64(h.other)/1e3)
}
