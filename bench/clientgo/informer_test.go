package clientgo

import (
	"bytes"
	"fmt"
	"io"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	restclientwatch "k8s.io/client-go/rest/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/internal/testrig/pipelinebench"
)

// BenchmarkPipeline runs one MODIFIED pod event (the same recorded bytes for both) from
// frame split and JSON decode through the queue and cache to a handler, in kinformer's
// informer and in client-go's SharedIndexInformer, after both have synced.
func BenchmarkPipeline(b *testing.B) {
	for _, objects := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("objects=%d/kinformer", objects), func(b *testing.B) { pipelinebench.RunInformer(b, b.N, objects) })
		b.Run(fmt.Sprintf("objects=%d/client-go", objects), func(b *testing.B) { benchClientGo(b, objects) })
	}
}

func benchClientGo(b *testing.B, objects int) {
	var list corev1.PodList
	list.ResourceVersion = "1"
	for i := range objects {
		var p corev1.Pod
		if err := runtime.DecodeInto(scheme.Codecs.UniversalDecoder(), []byte(pipelinebench.PodJSON(i, 1)), &p); err != nil {
			b.Fatal(err)
		}
		list.Items = append(list.Items, p)
	}
	var stream bytes.Buffer
	for i := range b.N {
		fmt.Fprintf(&stream, `{"type":"MODIFIED","object":%s}`+"\n", pipelinebench.PodJSON(i%objects, i+2))
	}
	start := make(chan struct{})
	served := false
	lw := &cache.ListWatch{
		ListFunc: func(metav1.ListOptions) (runtime.Object, error) { return list.DeepCopy(), nil },
		WatchFunc: func(opts metav1.ListOptions) (watch.Interface, error) {
			if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
				// client-go 1.36 tries a streaming list first; refuse it, as a server
				// without WatchList would, so both informers sync by list+watch.
				return nil, apierrors.NewBadRequest("streaming list not supported by this benchmark")
			}
			if served {
				return watch.NewFake(), nil // quiet afterwards
			}
			served = true
			<-start
			return streamWatcher(io.NopCloser(bytes.NewReader(stream.Bytes()))), nil
		},
	}
	inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	var updates atomic.Int64
	done := make(chan struct{})
	inf.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(_, _ any) {
		if updates.Add(1) == int64(b.N) {
			close(done)
		}
	}})
	stop := make(chan struct{})
	defer close(stop)
	go inf.Run(stop)
	if !cache.WaitForCacheSync(stop, inf.HasSynced) {
		b.Fatal("client-go informer did not sync")
	}
	b.ReportAllocs()
	b.ResetTimer()
	close(start)
	<-done
	b.StopTimer()
}

// streamWatcher decodes a watch body the way client-go's REST client does: JSON framing,
// the WatchEvent envelope, then the embedded object.
func streamWatcher(body io.ReadCloser) watch.Interface {
	info, _ := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	frames := info.StreamSerializer.Framer.NewFrameReader(body)
	events := streaming.NewDecoder(frames, info.StreamSerializer.Serializer)
	objects := scheme.Codecs.UniversalDeserializer()
	return watch.NewStreamWatcher(restclientwatch.NewDecoder(events, objects), nil)
}
