package listwatch_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/internal/codec"
	"github.com/kinformer/kinformer/internal/kubeproto"
	"github.com/kinformer/kinformer/internal/testrig/pbmsg"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// The protobuf read path against bytes kube-apiserver's own serializers wrote (the
// golden files of object/testdata/protobuf): a list page, a watch stream with every
// event type, error answers; and the same pods from JSON, for comparison.

func golden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../object/testdata/protobuf/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var podsInfo = listwatch.ResourceInfo{GroupVersionResource: listwatch.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: "Pod", Namespaced: true}

// goldenServer answers a list and a watch of pods with the golden bytes of the encoding
// the request asks for first, and records the Accept headers it was sent.
func goldenServer(t *testing.T, status int, body func(proto, watch bool) ([]byte, string)) (*listwatch.Client, *[]string) {
	var accepts []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		accepts = append(accepts, r.Header.Get("Accept"))
		proto := strings.HasPrefix(r.Header.Get("Accept"), "application/vnd.kubernetes.protobuf")
		b, ct := body(proto, r.URL.Query().Get("watch") == "1" || r.URL.Query().Get("watch") == "true")
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(status)
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	c, err := listwatch.New(&listwatch.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c, &accepts
}

func goldenPods(t *testing.T) func(proto, watch bool) ([]byte, string) {
	return func(proto, watch bool) ([]byte, string) {
		switch {
		case proto && watch:
			return golden(t, "watch.pb"), "application/vnd.kubernetes.protobuf;stream=watch"
		case proto:
			return golden(t, "podlist.pb"), "application/vnd.kubernetes.protobuf"
		case watch:
			return golden(t, "watch.json"), "application/json"
		}
		return golden(t, "podlist.json"), "application/json"
	}
}

func TestProtobufListEqualsJSON(t *testing.T) {
	ctx := testwait.Context(t, 20*time.Second)
	lists := map[listwatch.Encoding]*object.List[*object.Pod]{}
	for _, enc := range []listwatch.Encoding{listwatch.EncodingJSON, listwatch.EncodingAuto, listwatch.EncodingProtobuf} {
		c, accepts := goldenServer(t, http.StatusOK, goldenPods(t))
		c = withEncoding(t, c, enc)
		r := listwatch.For[*object.Pod](c, podsInfo, "")
		var token string
		list, err := r.List(ctx, listwatch.ListOptions{OnContinue: func(s string) { token = s }})
		if err != nil {
			t.Fatalf("%s: %v", enc, err)
		}
		lists[enc] = list
		wantProto := enc != listwatch.EncodingJSON
		if got := strings.HasPrefix((*accepts)[0], "application/vnd.kubernetes.protobuf"); got != wantProto {
			t.Errorf("%s: asked with Accept %q", enc, (*accepts)[0])
		}
		if token != list.Continue || token == "" {
			t.Errorf("%s: OnContinue got %q, the list says %q", enc, token, list.Continue)
		}
	}
	json, pb := lists[listwatch.EncodingJSON], lists[listwatch.EncodingProtobuf]
	if len(pb.Items) != 3 || pb.ResourceVersion != "12345" || pb.RemainingItemCount == nil || *pb.RemainingItemCount != 42 {
		t.Fatalf("protobuf list: %d items, metadata %+v", len(pb.Items), pb.ListMeta)
	}
	if diff := cmp.Diff(json.ListMeta, pb.ListMeta); diff != "" {
		t.Errorf("list metadata (-json +protobuf):\n%s", diff)
	}
	for i := range pb.Items {
		if json.Items[i].Name != pb.Items[i].Name || json.Items[i].ResourceVersion != pb.Items[i].ResourceVersion {
			t.Errorf("item %d: %s/%s from JSON, %s/%s from protobuf", i, json.Items[i].Name, json.Items[i].ResourceVersion, pb.Items[i].Name, pb.Items[i].ResourceVersion)
		}
		if _, ok := pb.Items[i].Unknown.Protobuf(); !ok && pb.Items[i].Unknown.Len() > 0 {
			t.Errorf("item %d: its unknown fields are not protobuf", i)
		}
	}
}

func withEncoding(t *testing.T, c *listwatch.Client, enc listwatch.Encoding) *listwatch.Client {
	cfg := c.Config()
	cfg.Encoding = enc
	c2, err := listwatch.New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c2
}

func TestProtobufWatchEvents(t *testing.T) {
	ctx := testwait.Context(t, 20*time.Second)
	for _, enc := range []listwatch.Encoding{listwatch.EncodingJSON, listwatch.EncodingProtobuf} {
		c, _ := goldenServer(t, http.StatusOK, goldenPods(t))
		w, err := listwatch.For[*object.Pod](withEncoding(t, c, enc), podsInfo, "").Watch(ctx, listwatch.WatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for {
			ev, err := w.Next()
			if err != nil {
				if !object.IsGone(err) {
					t.Errorf("%s: the stream ends with %v, want the golden ERROR (410)", enc, err)
				}
				break
			}
			s := string(ev.Type) + " " + ev.Object.Name + "@" + ev.Object.ResourceVersion + " " + ev.Object.Kind
			if ev.Type == listwatch.Bookmark {
				s += " " + ev.Object.Annotations[listwatch.InitialEventsEndAnnotation]
			}
			got = append(got, s)
		}
		w.Close()
		want := []string{"ADDED pod-minimal@", "MODIFIED ", "DELETED ", "BOOKMARK @999 Pod true"}
		if len(got) != len(want) {
			t.Fatalf("%s: events %q", enc, got)
		}
		for i := range want {
			if !strings.HasPrefix(got[i], strings.Fields(want[i])[0]) {
				t.Errorf("%s: event %d is %q, want %q", enc, i, got[i], want[i])
			}
		}
		if got[3] != want[3] {
			t.Errorf("%s: bookmark %q, want %q", enc, got[3], want[3])
		}
	}
}

// The watch of each encoding yields the same objects, event by event.
func TestProtobufWatchEqualsJSON(t *testing.T) {
	ctx := testwait.Context(t, 20*time.Second)
	events := map[listwatch.Encoding][]listwatch.Event[*object.Pod]{}
	for _, enc := range []listwatch.Encoding{listwatch.EncodingJSON, listwatch.EncodingProtobuf} {
		c, _ := goldenServer(t, http.StatusOK, goldenPods(t))
		w, err := listwatch.For[*object.Pod](withEncoding(t, c, enc), podsInfo, "").Watch(ctx, listwatch.WatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for {
			ev, err := w.Next()
			if err != nil {
				break
			}
			events[enc] = append(events[enc], ev)
		}
		w.Close()
	}
	js, pb := events[listwatch.EncodingJSON], events[listwatch.EncodingProtobuf]
	if len(js) != len(pb) || len(js) != 4 {
		t.Fatalf("%d events from JSON, %d from protobuf", len(js), len(pb))
	}
	for i := range js {
		a, b := js[i].Object, pb[i].Object
		if a.Name != b.Name || a.Kind != b.Kind || a.APIVersion != b.APIVersion || a.Status.Phase != b.Status.Phase ||
			len(a.Spec.Containers) != len(b.Spec.Containers) || !cmp.Equal(a.Labels, b.Labels) || !cmp.Equal(a.OwnerReferences, b.OwnerReferences) {
			t.Errorf("event %d: %+v from JSON, %+v from protobuf", i, a.ObjectMeta, b.ObjectMeta)
		}
	}
}

func TestProtobufErrorAnswers(t *testing.T) {
	ctx := testwait.Context(t, 20*time.Second)
	c, _ := goldenServer(t, http.StatusNotFound, func(proto, watch bool) ([]byte, string) {
		return golden(t, "status-404.pb"), "application/vnd.kubernetes.protobuf"
	})
	_, err := listwatch.For[*object.Pod](c, podsInfo, "shop").Get(ctx, "web-1")
	var se *object.StatusError
	if !errors.As(err, &se) || !object.IsNotFound(err) || se.Status.Details == nil || se.Status.Details.RetryAfterSeconds != 3 {
		t.Fatalf("a protobuf 404 reads as %#v", err)
	}
}

// A protobuf watch cut short, or with a frame over the limit, ends with a FrameError
// that says so; never a panic, never a wrong object.
func TestProtobufWatchMalformed(t *testing.T) {
	ctx := testwait.Context(t, 20*time.Second)
	stream := golden(t, "watch.pb")
	first := 4 + int(uint32(stream[0])<<24|uint32(stream[1])<<16|uint32(stream[2])<<8|uint32(stream[3]))
	cases := []struct {
		name string
		body []byte
		max  int
		want string
	}{
		{"cut inside a frame", stream[:first+10], 0, "stream ended inside a frame"},
		{"cut inside a length", stream[:first+2], 0, "stream ended inside a frame's length"},
		{"frame over the limit", stream, first - 5, "limit"},
		{"garbage frame", append(kubeproto.AppendFrame(nil, []byte{0xff, 0xff}), stream...), 0, "invalid event"},
		{"object of another type", kubeproto.AppendFrame(nil, kubeproto.AppendWatchEvent(nil, kubeproto.WatchEvent{Type: "ADDED",
			Object: kubeproto.AppendEnvelope(nil, kubeproto.Envelope{APIVersion: "v1", Kind: "Pod", Raw: []byte{0x0a, 0x02, 0x08, 0x01}})})), 0, "does not decode"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := goldenServer(t, http.StatusOK, func(bool, bool) ([]byte, string) {
				return tc.body, "application/vnd.kubernetes.protobuf;stream=watch"
			})
			w, err := listwatch.For[*object.Pod](c, podsInfo, "").Watch(ctx, listwatch.WatchOptions{MaxFrameSize: tc.max})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			for {
				_, err := w.Next()
				if err == nil {
					continue
				}
				var fe *listwatch.FrameError
				if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("the stream ends with %v, want a FrameError saying %q", err, tc.want)
				}
				return
			}
		})
	}
}

// A protobuf list cut short fails with an error, whatever byte of the list it stops at.
// (Protobuf has no end mark: a page cut between the envelope's two last fields, the
// empty contentEncoding and contentType after the list, is a whole message; a body cut
// by a dropped connection fails in the HTTP transport all the same.)
func TestProtobufListTruncated(t *testing.T) {
	ctx := testwait.Context(t, 20*time.Second)
	page := golden(t, "podlist.pb")
	if !bytes.HasSuffix(page, []byte{0x1a, 0x00, 0x22, 0x00}) {
		t.Fatalf("the golden list does not end with the envelope's empty fields 3 and 4")
	}
	for n := 0; n < len(page)-4; n += 3 {
		c, _ := goldenServer(t, http.StatusOK, func(bool, bool) ([]byte, string) {
			return page[:n], "application/vnd.kubernetes.protobuf"
		})
		if list, err := listwatch.For[*object.Pod](c, podsInfo, "").List(ctx, listwatch.ListOptions{}); err == nil {
			t.Fatalf("a page cut at byte %d of %d decodes: %d items", n, len(page), len(list.Items))
		}
	}
}

// What cannot be decoded from protobuf is read as JSON under auto, and refused under
// protobuf, at the first call, saying why: an embedder's projection (it has no protobuf
// field numbers), and object.Raw, read by member name, under auto.
func TestProtobufEncodingChoice(t *testing.T) {
	ctx := testwait.Context(t, 20*time.Second)
	c, accepts := goldenServer(t, http.StatusOK, func(bool, bool) ([]byte, string) {
		return []byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`), "application/json"
	})
	if _, err := listwatch.For[*podNames](c, podsInfo, "").List(ctx, listwatch.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := listwatch.For[*object.Raw](c, podsInfo, "").List(ctx, listwatch.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, a := range *accepts {
		if strings.Contains(a, "protobuf") {
			t.Errorf("request %d asked %q under auto, for a type read as JSON", i, a)
		}
	}
	_, err := listwatch.For[*podNames](withEncoding(t, c, listwatch.EncodingProtobuf), podsInfo, "").List(ctx, listwatch.ListOptions{})
	if err == nil || !strings.Contains(err.Error(), "cannot be decoded from protobuf") {
		t.Errorf("a projection's list under encoding protobuf: %v", err)
	}
}

// podNames is an embedder's projection of a pod: json tags, no protobuf numbers.
type podNames struct {
	Metadata object.ObjectMeta `json:"metadata"`
}

func (p *podNames) Meta() *object.ObjectMeta { return &p.Metadata }

// An object read in protobuf carries the fields the model does not hold as protobuf,
// and is written back in protobuf, with them.
func TestProtobufObjectIsWrittenBackInProtobuf(t *testing.T) {
	ctx := testwait.Context(t, 20*time.Second)
	pod := golden(t, "pod-full.pb")
	var sent []byte
	var sentType string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			sent, _ = io.ReadAll(r.Body)
			sentType = r.Header.Get("Content-Type")
		}
		w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf")
		_, _ = w.Write(pod)
	}))
	defer srv.Close()
	c, err := listwatch.New(&listwatch.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	r := listwatch.For[*object.Pod](c, podsInfo, "shop")
	p, err := r.Get(ctx, "web-1")
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind != "Pod" || p.APIVersion != "v1" {
		t.Errorf("the object's type is %q %q", p.APIVersion, p.Kind)
	}
	if _, err := r.Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	if sentType != "application/vnd.kubernetes.protobuf" || !bytes.Equal(sent, pod) {
		t.Errorf("the update sent %q, %d bytes; want the %d bytes read, in protobuf", sentType, len(sent), len(pod))
	}
	if _, err := codec.Marshal(p); !errors.Is(err, codec.ErrProtobufMembers) {
		t.Errorf("encoding the protobuf pod as JSON: %v, want ErrProtobufMembers", err)
	}
}

// A metadata-only list in protobuf: its items (PartialObjectMetadata messages) get the
// kind and apiVersion their JSON items carry.
func TestProtobufMetadataOnlyList(t *testing.T) {
	ctx := testwait.Context(t, 20*time.Second)
	meta := pbmsg.Msg(1, pbmsg.Str(1, "web-1"), pbmsg.Str(3, "shop"), pbmsg.Str(6, "42"))
	list := kubeproto.AppendList(nil, object.ListMeta{ResourceVersion: "42"}, [][]byte{meta})
	body := kubeproto.AppendEnvelope(nil, kubeproto.Envelope{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadataList", Raw: list})
	c, accepts := goldenServer(t, http.StatusOK, func(bool, bool) ([]byte, string) { return body, "application/vnd.kubernetes.protobuf" })
	l, err := listwatch.For[*object.Raw](c, podsInfo, "").MetadataOnly().List(ctx, listwatch.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix((*accepts)[0], "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList") {
		t.Errorf("asked with Accept %q", (*accepts)[0])
	}
	if len(l.Items) != 1 || l.Items[0].Name != "web-1" || l.Items[0].Kind != "PartialObjectMetadata" || l.Items[0].APIVersion != "meta.k8s.io/v1" {
		t.Errorf("items %+v", l.Items)
	}
}
