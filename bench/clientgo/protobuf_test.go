package clientgo

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/bench/clientgo/pbobjects"
	"github.com/kinformer/kinformer/bench/internal/streamserver"
	"github.com/kinformer/kinformer/shard"
)

// protobufServer starts a stream server of o's objects with their protobuf encodings
// (made by pbobjects, as pbprep makes them) and returns it and two clientsets: one as
// client-go is by default (JSON), one as the benchmark's client-go-protobuf engine.
func protobufServer(t *testing.T, o streamserver.Options) (*streamserver.Server, *kubernetes.Clientset, *kubernetes.Clientset) {
	t.Helper()
	plain, err := streamserver.New(o)
	if err != nil {
		t.Fatal(err)
	}
	o.ProtobufObjects = filepath.Join(t.TempDir(), "objects.pb")
	f, err := os.Create(o.ProtobufObjects)
	if err != nil {
		t.Fatal(err)
	}
	if err := pbobjects.Write(f, plain); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := streamserver.New(o)
	if err != nil {
		t.Fatal(err)
	}
	url, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	// As clientgo-runner configures its two engines. Left unset, ContentType would be
	// protobuf for the typed clients of built-in types.
	jsonCS := kubernetes.NewForConfigOrDie(&rest.Config{Host: url, QPS: -1, ContentConfig: rest.ContentConfig{
		ContentType:        "application/json",
		AcceptContentTypes: "application/json",
	}, WrapTransport: func(rt http.RoundTripper) http.RoundTripper { return mustServe{t, rt, "application/json"} }})
	pbCS := kubernetes.NewForConfigOrDie(&rest.Config{Host: url, QPS: -1, ContentConfig: rest.ContentConfig{
		ContentType:        "application/vnd.kubernetes.protobuf",
		AcceptContentTypes: "application/vnd.kubernetes.protobuf,application/json",
	}, WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
		return mustServe{t, rt, "application/vnd.kubernetes.protobuf"}
	}})
	return s, jsonCS, pbCS
}

// mustServe fails the test on a response of another media type than its own, so that
// neither client can pass by getting the other's encoding: then the test would compare
// an encoding with itself.
type mustServe struct {
	t         *testing.T
	rt        http.RoundTripper
	mediaType string
}

func (m mustServe) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := m.rt.RoundTrip(req)
	if err == nil && !strings.HasPrefix(resp.Header.Get("Content-Type"), m.mediaType) {
		m.t.Errorf("%s: Content-Type %q, want %s", req.URL, resp.Header.Get("Content-Type"), m.mediaType)
	}
	return resp, err
}

// listAll lists the pods of the bench namespace page by page, and returns them with each
// page's ListMeta.
func listAll(t *testing.T, cs *kubernetes.Clientset, ns string, opts metav1.ListOptions) ([]corev1.Pod, []metav1.ListMeta) {
	t.Helper()
	var pods []corev1.Pod
	var metas []metav1.ListMeta
	for {
		l, err := cs.CoreV1().Pods(ns).List(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		pods = append(pods, l.Items...)
		metas = append(metas, l.ListMeta)
		if l.Continue == "" {
			return pods, metas
		}
		opts.Continue = l.Continue
	}
}

// The JSON server's items carry kind and apiVersion, as the server's JSON lists do (the
// apiserver's do not); protobuf has no place for them in an item. Only that differs.
var ignoreTypeMeta = cmp.Transformer("noTypeMeta", func(p corev1.Pod) corev1.Pod {
	p.TypeMeta = metav1.TypeMeta{}
	return p
})

// client-go decodes the server's protobuf lists, paged and sharded, to the same pods and
// list metadata as its JSON ones.
func TestProtobufListMatchesJSON(t *testing.T) {
	s, jsonCS, pbCS := protobufServer(t, streamserver.Options{Objects: 250})
	for name, opts := range map[string]metav1.ListOptions{
		"whole":   {},
		"paged":   {Limit: 100},
		"sharded": {Limit: 40, ShardSelector: shard.Selector{Field: shard.UID, Ranges: []shard.Range{{First: 0, Last: 1<<62 - 1}}}.String()},
	} {
		want, wantMeta := listAll(t, jsonCS, "bench", opts)
		got, gotMeta := listAll(t, pbCS, "bench", opts)
		if len(want) == 0 || name != "sharded" && len(want) != s.Len() {
			t.Fatalf("%s: %d pods listed in JSON", name, len(want))
		}
		if diff := cmp.Diff(want, got, ignoreTypeMeta); diff != "" {
			t.Errorf("%s: protobuf pods (-JSON +protobuf):\n%s", name, diff)
		}
		if diff := cmp.Diff(wantMeta, gotMeta); diff != "" {
			t.Errorf("%s: protobuf list metadata (-JSON +protobuf):\n%s", name, diff)
		}
		if name == "paged" && (len(gotMeta) != 3 || gotMeta[0].RemainingItemCount == nil || *gotMeta[0].RemainingItemCount != 150) {
			t.Errorf("paged: %d pages, first %+v", len(gotMeta), gotMeta[0])
		}
		if name == "sharded" && (gotMeta[0].ShardInfo == nil || gotMeta[0].ShardInfo.Selector != opts.ShardSelector) {
			t.Errorf("sharded: shardInfo %+v", gotMeta[0].ShardInfo)
		}
	}
}

// event is a watch event as compared: the stamp is the send time, different in every
// event, so it is checked and cut out.
type event struct {
	Type watch.EventType
	Pod  *corev1.Pod
}

func readEvents(t *testing.T, cs *kubernetes.Clientset, ns string, opts metav1.ListOptions, n int, since time.Time) []event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var evs []event
	for ev := range w.ResultChan() {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok {
			t.Fatalf("event %d: %s of a %T: %v", len(evs), ev.Type, ev.Object, ev.Object)
		}
		if ev.Type != watch.Bookmark {
			ns, err := strconv.ParseInt(p.Annotations[streamserver.StampAnnotation], 10, 64)
			if err != nil || len(p.Annotations[streamserver.StampAnnotation]) != 19 || ns < since.UnixNano() || ns > time.Now().UnixNano() {
				t.Errorf("event %d: stamp %q", len(evs), p.Annotations[streamserver.StampAnnotation])
			}
			delete(p.Annotations, streamserver.StampAnnotation)
		}
		p.TypeMeta = metav1.TypeMeta{}
		evs = append(evs, event{ev.Type, p})
		if len(evs) == n {
			return evs
		}
	}
	t.Fatalf("the watch ended after %d events", len(evs))
	return nil
}

// client-go decodes the server's protobuf watch to the same events as its JSON one: the
// changes with their resourceVersions and send-time stamps, and the bookmarks, the
// initial-events-end one included.
func TestProtobufWatchMatchesJSON(t *testing.T) {
	s, jsonCS, pbCS := protobufServer(t, streamserver.Options{Objects: 30, WatchEvents: 25})
	r0 := strconv.FormatInt(s.ListResourceVersion(), 10)
	yes := true
	for name, c := range map[string]struct {
		opts metav1.ListOptions
		n    int
	}{
		// 25 changes, among them DELETED and ADDED, then a bookmark a second later.
		"changes": {metav1.ListOptions{ResourceVersion: r0, AllowWatchBookmarks: true}, 26},
		// Every pod ADDED, the initial-events-end bookmark, then the changes.
		"initial events": {metav1.ListOptions{SendInitialEvents: &yes, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
			AllowWatchBookmarks: true}, s.Len() + 1 + 5},
	} {
		since := time.Now()
		want := readEvents(t, jsonCS, "bench", c.opts, c.n, since)
		got := readEvents(t, pbCS, "bench", c.opts, c.n, since)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: protobuf events (-JSON +protobuf):\n%s", name, diff)
		}
		types := map[watch.EventType]int{}
		for _, ev := range got {
			types[ev.Type]++
		}
		if name == "changes" {
			last := got[len(got)-1]
			if types[watch.Deleted] != 2 || types[watch.Added] != 2 || last.Type != watch.Bookmark ||
				last.Pod.ResourceVersion != strconv.FormatInt(s.ListResourceVersion()+25, 10) {
				t.Errorf("changes: %v, last %s at %s", types, last.Type, last.Pod.ResourceVersion)
			}
			if k, _ := strconv.ParseInt(got[3].Pod.ResourceVersion, 10, 64); k != s.ListResourceVersion()+4 {
				t.Errorf("the 4th change has resourceVersion %s", got[3].Pod.ResourceVersion)
			}
		} else if end := got[s.Len()]; end.Type != watch.Bookmark || end.Pod.Annotations[metav1.InitialEventsAnnotationKey] != "true" {
			t.Errorf("initial events: %v, then %s %v", types, end.Type, end.Pod.Annotations)
		}
	}
}

// TestProtobufRefusesLazy: the lazy mode's pods are in no file, so pbobjects (pbprep)
// writes none, and the server refuses a file with them.
func TestProtobufRefusesLazy(t *testing.T) {
	s, err := streamserver.New(streamserver.Options{Objects: 100, Lazy: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := pbobjects.Write(io.Discard, s); err == nil || !strings.Contains(err.Error(), "lazy") {
		t.Fatalf("Write of a lazy server: %v, want an error saying lazy", err)
	}
	_, err = streamserver.New(streamserver.Options{Objects: 100, Lazy: true, ProtobufObjects: "objects.pb"})
	if err == nil || !strings.Contains(err.Error(), "lazy") {
		t.Fatalf("New with Lazy and ProtobufObjects: %v, want an error saying lazy", err)
	}
}
