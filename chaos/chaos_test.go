package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kinformer/kinformer/fakekubelet"
	"github.com/kinformer/kinformer/internal/testrig/overshoot"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

const widgetCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"widgets.chaos.kinformer.io"},
"spec":{"group":"chaos.kinformer.io","names":{"plural":"widgets","singular":"widget","kind":"Widget"},"scope":"Namespaced",
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`

// fault is one injected fault: it starts, lasts, and ends.
type fault struct {
	kind string
	run  func(ctx context.Context) error // blocks for the fault's duration
}

// TestChaos injects a seeded script of faults between kinformer and a real
// kube-apiserver while writers churn, and checks at every quiet point that every cache and
// handler view equals the server, every Deployment reached its desired state, and no
// ReplicaSet ever had more active pods than its spec.
func TestChaos(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const ns = "chaos"
	prepare(t, ns)

	proxy, err := NewProxy(control.URL, control.CAData)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	direct, err := listwatch.New(&listwatch.Config{Host: control.URL, BearerToken: control.Token, QPS: -1,
		TLS: listwatch.TLSConfig{CAData: control.CAData}})
	if err != nil {
		t.Fatal(err)
	}
	defer direct.CloseIdleConnections()
	// The engine's client: HTTP/2 pings every 2 s of silence, answered within 2 s, so a
	// blackholed connection is noticed in about 4 s.
	proxied, err := listwatch.New(&listwatch.Config{Host: proxy.URL(), BearerToken: control.Token, QPS: -1,
		TLS: listwatch.TLSConfig{CAData: proxy.CAData()}, HTTP2ReadIdleTimeout: 2 * time.Second, HTTP2PingTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer proxied.CloseIdleConnections()

	// Every allocation from here on carries its stack, so that the heap the engine leaves
	// can be split by who allocated it (see heapSample).
	defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
	runtime.MemProfileRate = 1
	goroutines := goroutinesNow()
	before := sampleHeap()

	kubelet, err := fakekubelet.New(fakekubelet.Options{Client: direct, Namespace: ns, ReadyAfter: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	kctx, kcancel := context.WithCancel(ctx)
	kdone := make(chan struct{})
	go func() { _ = kubelet.Run(kctx); close(kdone) }()
	defer func() { kcancel(); <-kdone }()

	eng := startEngine(t, ctx, proxied, direct, ns)
	engineStopped := false
	defer func() {
		if !engineStopped {
			eng.stop()
		}
	}()
	wr, err := startWriters(ctx, direct, ns, *seed)
	if err != nil {
		t.Fatal(err)
	}
	defer wr.stop()
	over, err := overshoot.Start(ctx, direct, ns, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}

	r := &report{kinds: map[string]int{}}
	rng := rand.New(rand.NewPCG(uint64(*seed), 11))
	began := time.Now()
	for n := 1; n <= *faultsWanted && time.Since(began) < *timeBudget; n++ {
		f := pick(rng, n, proxy)
		if err := f.run(ctx); err != nil {
			t.Fatalf("fault %d (%s): %v", n, f.kind, err)
		}
		r.kinds[f.kind]++
		r.faults++
		if !pause(ctx, time.Duration(50+rng.IntN(200))*time.Millisecond) {
			t.Fatalf("after fault %d: %v", n, ctx.Err())
		}
		if n%*quietEvery == 0 || n == *faultsWanted {
			r.quiet(t, ctx, eng, wr, proxy, direct, ns)
		}
	}
	if r.faults%*quietEvery != 0 {
		r.quiet(t, ctx, eng, wr, proxy, direct, ns)
	}
	r.elapsed = time.Since(began)
	r.writes = wr.writes.Load()
	wr.stop()
	r.overshoot, r.snapshots = over.Stop()
	for _, w := range eng.watched {
		for _, v := range w.views {
			r.broken = append(r.broken, v.Broken()...)
		}
	}
	eng.stop()
	engineStopped = true
	eng = nil // its caches may go now: the heap below is what is left without it
	kcancel()
	<-kdone
	leftover := waitGoroutines(goroutines, 10*time.Second, func() {
		proxied.CloseIdleConnections()
		direct.CloseIdleConnections()
		proxy.CloseIdleConnections()
	})
	r.goroutines = [2]int{len(goroutines), len(goroutinesNow())}
	r.heap = [2]heapSample{before, sampleHeap()}

	text := r.String()
	fmt.Println(text)
	if *reportFile != "" {
		_ = os.WriteFile(*reportFile, []byte(text), 0o644)
	}
	if r.divergences > 0 || len(r.broken) > 0 || r.overshoot != "" {
		t.Errorf("divergences %d, broken events %v, overshoot %q", r.divergences, r.broken, r.overshoot)
	}
	if len(leftover) > 0 {
		t.Errorf("%d goroutine(s) differ from before the engine started, 10 s after it stopped:\n\n%s",
			len(leftover), strings.Join(leftover, "\n\n"))
	}
}

// pick chooses the n-th fault from the seeded script.
func pick(rng *rand.Rand, n int, proxy *Proxy) fault {
	ms := func(lo, hi int) time.Duration { return time.Duration(lo+rng.IntN(hi-lo)) * time.Millisecond }
	if *restartEvery > 0 && n%*restartEvery == *restartEvery/2 {
		return fault{kind: "apiserver restart", run: func(ctx context.Context) error {
			rctx, cancel := context.WithTimeout(ctx, 90*time.Second)
			defer cancel()
			return control.RestartAPIServer(rctx)
		}}
	}
	switch k := rng.IntN(100); {
	case k < 24:
		return fault{kind: "reset", run: func(context.Context) error { proxy.ResetAll(); return nil }}
	case k < 36:
		// Connections blackholed stay dead after it ends: the HTTP/2 ping (4 s) must
		// still notice them, however short the outage.
		d := ms(1000, 2500)
		proxy.Blackhole(true)
		return fault{kind: "blackhole", run: hold(d, func() { proxy.Blackhole(false) })}
	case k < 48:
		d, per := ms(300, 1200), ms(20, 120)
		proxy.Slow(per, false)
		return fault{kind: "delay", run: hold(d, func() { proxy.Slow(0, false) })}
	case k < 60:
		d := ms(300, 1200)
		proxy.Slow(0, true)
		return fault{kind: "fragment", run: hold(d, func() { proxy.Slow(0, false) })}
	case k < 72:
		proxy.Fail(3+rng.IntN(10), 429)
		return fault{kind: "429", run: hold(ms(300, 1000), func() { proxy.Fail(0, 0) })}
	case k < 84:
		proxy.Fail(3+rng.IntN(10), 500)
		return fault{kind: "500", run: hold(ms(300, 1000), func() { proxy.Fail(0, 0) })}
	case k < 89:
		// Long enough for etcd's 5 s compaction to pass the watches' revisions: the
		// configmap watch (no watch cache) comes back to 410, a relist.
		proxy.Blackhole(true)
		return fault{kind: "compaction (7 s outage)", run: hold(7*time.Second, func() { proxy.Blackhole(false) })}
	default:
		// Slow and fragmented bytes right after an outage: relists page slowly while etcd
		// compacts, so continue tokens expire.
		proxy.ResetAll()
		proxy.Slow(ms(50, 150), true)
		return fault{kind: "reset + slow paging", run: hold(ms(1500, 3000), func() { proxy.Slow(0, false) })}
	}
}

// hold is a fault's run: it lasts d (or until ctx ends), then undoes the fault.
func hold(d time.Duration, undo func()) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		defer undo()
		if !pause(ctx, d) {
			return ctx.Err()
		}
		return nil
	}
}

// pause paces the harness's scripts (the gaps between faults, between the writers'
// writes): it returns true after d, or false as soon as ctx ends, so that a stopped
// script stops at once rather than at the end of its gap.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// report collects what the run saw.
type report struct {
	faults, divergences int
	kinds               map[string]int
	convergence         []time.Duration
	broken              []string
	overshoot           string
	snapshots           int
	elapsed             time.Duration
	writes              int64
	goroutines          [2]int
	heap                [2]heapSample
}

// quiet ends all faults, pauses the writers, and waits until every cache and view equals
// the server and every Deployment reached its spec; it records how long that took.
func (r *report) quiet(t *testing.T, ctx context.Context, eng *engine, wr *writers, proxy *Proxy, direct *listwatch.Client, ns string) {
	t.Helper()
	proxy.Blackhole(false)
	proxy.Slow(0, false)
	proxy.Fail(0, 0)
	wr.paused.Store(true)
	defer wr.paused.Store(false)
	start := time.Now()
	why := ""
	if testwait.Every(50*time.Millisecond).Poll(90*time.Second, func() bool {
		for _, w := range eng.watched {
			if good, diff := w.converged(ctx); !good {
				why = diff
				return false
			}
		}
		good, diff := deploymentsDone(ctx, direct, ns)
		why = diff
		return good
	}) {
		r.convergence = append(r.convergence, time.Since(start))
		return
	}
	r.divergences++
	t.Errorf("no convergence 90 s after fault %d: %s", r.faults, why)
	for _, w := range eng.watched {
		st := w.status()
		t.Logf("%s: %+v", w.name, st)
	}
	eng.describeManager(t, ctx, direct, ns)
}

func deploymentsDone(ctx context.Context, direct *listwatch.Client, ns string) (bool, string) {
	info, err := direct.Discover(ctx, "deployments.apps")
	if err != nil {
		return false, err.Error()
	}
	l, err := listwatch.For[*object.Deployment](direct, info, ns).List(ctx, listwatch.ListOptions{})
	if err != nil {
		return false, err.Error()
	}
	for _, d := range l.Items {
		st, want := d.Status, *d.Spec.Replicas
		if st.ObservedGeneration < d.Generation || st.Replicas != want || st.UpdatedReplicas != want || st.AvailableReplicas != want {
			return false, fmt.Sprintf("deployment %s: spec %d, status %+v (generation %d)", d.Name, want, st, d.Generation)
		}
	}
	return true, ""
}

func (r *report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "chaos report (seed %d)\n", *seed)
	fmt.Fprintf(&b, "  faults injected: %d in %s (%d writes by the churners)\n", r.faults, r.elapsed.Round(time.Second), r.writes)
	kinds := make([]string, 0, len(r.kinds))
	for k := range r.kinds {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		fmt.Fprintf(&b, "    %-26s %d\n", k, r.kinds[k])
	}
	fmt.Fprintf(&b, "  quiet points: %d, divergences: %d, inconsistent handler events: %d\n",
		len(r.convergence)+r.divergences, r.divergences, len(r.broken))
	fmt.Fprintf(&b, "  ReplicaSet overshoot in %d consistent snapshots: %s\n", r.snapshots, orNone(r.overshoot))
	if len(r.convergence) > 0 {
		c := slices.Clone(r.convergence)
		slices.Sort(c)
		fmt.Fprintf(&b, "  end of faults to convergence (caches, handler views, Deployments): p50 %s, p99 %s, max %s\n",
			pct(c, 50), pct(c, 99), c[len(c)-1].Round(time.Millisecond))
	}
	fmt.Fprintf(&b, "  goroutines: %d before the engine started, %d after it stopped\n", r.goroutines[0], r.goroutines[1])
	fmt.Fprintf(&b, "  live heap after GC: %.1f MB before the engine started, %.1f MB after it stopped, of which %.1f MB connections the faults cut\n",
		float64(r.heap[0].live)/1e6, float64(r.heap[1].live)/1e6, float64(r.heap[1].conns)/1e6)
	fmt.Fprintf(&b, "    (net/http frees them when their idle timer fires, 90 s after their last stream) and %.1f MB the test's clients and one-time tables\n",
		float64(r.heap[1].other)/1e6)
	fmt.Fprintf(&b, "  engine settings: reflector backoff 800 ms → 5 s (reset after 30 s), HTTP/2 ping after 2 s idle, 2 s timeout, list pages of 25\n")
	return b.String()
}

func pct(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100
	return sorted[max(0, min(i, len(sorted))-1)].Round(time.Millisecond)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
