// Package pipeline generates realistic watch streams for benchmarks of the informer's
// data path: decode → deltafifo → indexer → handler.
package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
	"github.com/kinformer/kinformer/trace"
)

// PodJSON is a pod as a kubelet-managed cluster serves it (about 1.6 KB): labels,
// annotations, an owner, one container with resources and probes, status conditions.
func PodJSON(i int, rv int) string {
	return fmt.Sprintf(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-%[1]d","generateName":"web-","namespace":"ns%[3]d","uid":"6d1c5f2e-0000-4000-8000-%012[1]d","resourceVersion":"%[2]d","creationTimestamp":"2026-11-01T10:00:00Z","labels":{"app":"web","pod-template-hash":"5d9c7b8f6","tier":"frontend"},"annotations":{"kubernetes.io/config.seen":"2026-11-01T10:00:00Z","prometheus.io/scrape":"true"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-5d9c7b8f6","uid":"1f0e9d8c-0000-4000-8000-000000000001","controller":true,"blockOwnerDeletion":true}]},"spec":{"volumes":[{"name":"kube-api-access","projected":{"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}}],"defaultMode":420}}],"containers":[{"name":"web","image":"nginx:1.27","ports":[{"containerPort":8080,"protocol":"TCP"}],"resources":{"limits":{"cpu":"500m","memory":"128Mi"},"requests":{"cpu":"100m","memory":"64Mi"}},"readinessProbe":{"httpGet":{"path":"/healthz","port":8080,"scheme":"HTTP"},"timeoutSeconds":1,"periodSeconds":5,"successThreshold":1,"failureThreshold":3},"terminationMessagePath":"/dev/termination-log","imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","serviceAccountName":"default","nodeName":"node-%[3]d","schedulerName":"default-scheduler","priority":0},"status":{"phase":"Running","conditions":[{"type":"Initialized","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-01T10:00:00Z"},{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-01T10:00:05Z"},{"type":"PodScheduled","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-01T10:00:00Z"}],"hostIP":"10.0.0.%[3]d","podIP":"10.1.%[3]d.%[4]d","startTime":"2026-11-01T10:00:00Z","qosClass":"Burstable"}}`,
		i, rv, i%50, i%250)
}

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
		p, err := object.DecodeValid[*object.Pod]([]byte(PodJSON(i, 1)))
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

// RunInformer is the kinformer side of the pipeline benchmark: an informer over a Source
// of `objects` pods syncs, then the timer covers b.N MODIFIED events from the recorded
// stream to the handler.
func RunInformer(b *testing.B, objects int) { runInformer(b, objects, nil) }

// RunInformerTraced is RunInformer with tracing on, one event in every followed up to
// the handler (see package trace): what tracing costs the events it follows and the
// ones it does not.
func RunInformerTraced(b *testing.B, objects, every int) {
	runInformer(b, objects, trace.NewCollector(trace.Options{Every: every, Last: trace.Delivered}))
}

func runInformer(b *testing.B, objects int, tracer trace.Tracer) {
	src := NewSource(objects, b.N)
	b.SetBytes(int64(src.StreamBytes() / b.N))
	inf, err := informer.New[*object.Pod](src, informer.Options[*object.Pod]{Reflector: reflector.Options{WatchTimeoutMin: time.Hour}, Tracer: tracer})
	if err != nil {
		b.Fatal(err)
	}
	var updates atomic.Int64
	done := make(chan struct{})
	_, _ = inf.AddEventHandler(informer.HandlerFuncs[*object.Pod]{UpdateFunc: func(_, _ *object.Pod) {
		if updates.Add(1) == int64(b.N) {
			close(done)
		}
	}}, informer.HandlerOptions{BufferSize: 1 << 20, Tracer: tracer})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go inf.Run(ctx)
	if err := informer.WaitForSync(ctx, inf); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	src.Start()
	<-done
	b.StopTimer()
}
