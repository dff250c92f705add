package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	restclientwatch "k8s.io/client-go/rest/watch"

	"github.com/kinformer/kinformer/bench/internal/streamserver"
)

// goldenDir is the committed golden data, from this package's directory.
var goldenDir = filepath.Join("..", "..", "..", "..", "object", "testdata", "protobuf")

// Decoders made afresh, as client-go makes them, not the generator's values.
var (
	pbDecoder   = protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	jsonDecoder = json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme.Scheme, scheme.Scheme, json.SerializerOptions{})
)

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(goldenDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// semanticEqual reports a difference between want and got (apimachinery's semantic
// equality: times as instants, quantities by value, nil and empty alike).
func semanticEqual(t *testing.T, what string, want, got any) {
	t.Helper()
	if !apiequality.Semantic.DeepEqual(want, got) {
		t.Errorf("%s: objects differ (-want +got):\n%s", what, cmp.Diff(want, got))
	}
}

// TestGoldenPairs decodes every NAME.pb with client-go's protobuf serializer and
// NAME.json with its JSON serializer, and checks that they are the same object, that
// each re-encodes to the other's bytes, and that the .pb is "k8s\x00" + an Unknown
// naming the JSON's apiVersion and kind.
func TestGoldenPairs(t *testing.T) {
	entries, err := os.ReadDir(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".pb"); ok && name != "watch" {
			names = append(names, name)
		}
	}
	cases, err := allCases()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if !slices.Contains(names, c.name) {
			t.Errorf("%s.pb is missing from %s: run make protobuf-golden", c.name, goldenDir)
		}
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			pb, js := readGolden(t, name+".pb"), readGolden(t, name+".json")

			// The envelope, read by hand.
			body, ok := bytes.CutPrefix(pb, []byte("k8s\x00"))
			if !ok {
				t.Fatalf("%s.pb does not start with k8s\\x00: % x", name, pb[:min(len(pb), 8)])
			}
			var unk runtime.Unknown
			if err := unk.Unmarshal(body); err != nil {
				t.Fatalf("%s.pb: runtime.Unknown: %v", name, err)
			}
			jsKind, err := json.DefaultMetaFactory.Interpret(js)
			if err != nil {
				t.Fatalf("%s.json: %v", name, err)
			}
			if unk.GroupVersionKind() != *jsKind || jsKind.Kind == "" || jsKind.Version == "" {
				t.Errorf("Unknown.typeMeta says %v, the JSON %v", unk.GroupVersionKind(), jsKind)
			}
			if unk.ContentEncoding != "" || unk.ContentType != "" || len(unk.Raw) == 0 {
				t.Errorf("Unknown: contentEncoding %q, contentType %q, %d raw bytes", unk.ContentEncoding, unk.ContentType, len(unk.Raw))
			}

			fromPB, gvk, err := pbDecoder.Decode(pb, nil, nil)
			if err != nil {
				t.Fatalf("%s.pb: %v", name, err)
			}
			fromJSON, gvkJSON, err := jsonDecoder.Decode(js, nil, nil)
			if err != nil {
				t.Fatalf("%s.json: %v", name, err)
			}
			if *gvk != *gvkJSON {
				t.Errorf("kinds: %v from protobuf, %v from JSON", gvk, gvkJSON)
			}
			semanticEqual(t, name, fromJSON, fromPB)

			// Each encoding is determined by the other.
			js2, pb2, err := encodePair(fromPB)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(js2, js) {
				t.Errorf("%s.pb decoded and encoded in JSON is not %s.json:\n%s\n%s", name, name, js2, js)
			}
			if _, pb2, err = encodePair(fromJSON); err != nil {
				t.Fatal(err)
			} else if !bytes.Equal(pb2, pb) {
				t.Errorf("%s.json decoded and encoded in protobuf is not %s.pb", name, name)
			}
		})
	}
}

// decodeWatch decodes a watch body as client-go's watch client does (rest/watch's
// Decoder over the stream serializer's frames).
func decodeWatch(t *testing.T, body []byte, framer runtime.Framer, stream, embedded runtime.Decoder) []watch.Event {
	t.Helper()
	d := restclientwatch.NewDecoder(streaming.NewDecoder(framer.NewFrameReader(io.NopCloser(bytes.NewReader(body))), stream), embedded)
	var events []watch.Event
	for {
		typ, obj, err := d.Decode()
		if errors.Is(err, io.EOF) {
			return events
		}
		if err != nil {
			t.Fatalf("event %d: %v", len(events), err)
		}
		events = append(events, watch.Event{Type: typ, Object: obj})
	}
}

// TestGoldenWatch checks that watch.pb and watch.json decode, with client-go's watch
// decoder, to the five events they were made of, and watch.pb's framing by hand.
func TestGoldenWatch(t *testing.T) {
	want := watchEvents()
	for _, e := range want { // decoding sets apiVersion and kind
		gvks, _, err := scheme.Scheme.ObjectKinds(e.Object)
		if err != nil {
			t.Fatal(err)
		}
		e.Object.GetObjectKind().SetGroupVersionKind(gvks[0])
	}
	pb := readGolden(t, "watch.pb")
	js := readGolden(t, "watch.json")
	for _, c := range []struct {
		file string
		got  []watch.Event
	}{
		{"watch.pb", decodeWatch(t, pb, protobuf.LengthDelimitedFramer, protobuf.NewRawSerializer(scheme.Scheme, scheme.Scheme), pbDecoder)},
		{"watch.json", decodeWatch(t, js, json.Framer, jsonDecoder, jsonDecoder)},
	} {
		if len(c.got) != len(want) {
			t.Fatalf("%s: %d events, want %d", c.file, len(c.got), len(want))
		}
		for i, e := range c.got {
			if e.Type != want[i].Type {
				t.Errorf("%s event %d: type %s, want %s", c.file, i, e.Type, want[i].Type)
			}
			semanticEqual(t, c.file+" event "+string(want[i].Type), want[i].Object, e.Object)
		}
	}

	// The frames: a 4-byte big-endian length, then a WatchEvent whose object is what
	// the protobuf serializer writes for the object alone.
	for i, rest := 0, pb; len(rest) > 0; i++ {
		if len(rest) < 4 || int(binary.BigEndian.Uint32(rest)) > len(rest)-4 {
			t.Fatalf("watch.pb frame %d: truncated", i)
		}
		n := binary.BigEndian.Uint32(rest)
		var ev metav1.WatchEvent
		if err := ev.Unmarshal(rest[4 : 4+n]); err != nil {
			t.Fatalf("watch.pb frame %d: %v", i, err)
		}
		rest = rest[4+n:]
		if i >= len(want) {
			t.Fatalf("watch.pb: more than %d frames", len(want))
		}
		_, objPB, err := encodePair(want[i].Object)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type != string(want[i].Type) || !bytes.Equal(ev.Object.Raw, objPB) {
			t.Errorf("watch.pb frame %d: %s event, %d object bytes; want %s and the object's %d protobuf bytes", i, ev.Type, len(ev.Object.Raw), want[i].Type, len(objPB))
		}
	}
	if lines := bytes.Count(js, []byte("\n")); lines != len(want) || !bytes.HasSuffix(js, []byte("\n")) {
		t.Errorf("watch.json: %d lines, want %d newline-terminated", lines, len(want))
	}
}

// TestGoldenUpToDate checks that the files are what pbgolden writes now (same
// k8s.io/api, same cases), and that none is left over from a former case.
func TestGoldenUpToDate(t *testing.T) {
	files, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range sortedNames(files) {
		b, err := os.ReadFile(filepath.Join(goldenDir, name))
		switch {
		case err != nil:
			t.Errorf("%v: run make protobuf-golden", err)
		case !bytes.Equal(b, files[name]):
			t.Errorf("%s is not what pbgolden writes now: run make protobuf-golden", name)
		}
	}
	stale, err := staleFiles(goldenDir, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range stale {
		t.Errorf("%s is no case's: delete it", name)
	}
	again, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if !bytes.Equal(again[name], b) {
			t.Errorf("%s: two runs wrote different bytes", name)
		}
	}
}

// TestStreamServerJSON checks that the stream server lists its pods exactly as
// kube-apiserver would write them: pod-uniform-N.json and pod-realistic-N.json, written
// by apimachinery, are the server's own JSON byte for byte (and a newline).
func TestStreamServerJSON(t *testing.T) {
	for _, p := range []struct{ profile, name string }{{"pods", "pod-uniform"}, {streamserver.RealisticPods, "pod-realistic"}} {
		s, err := streamserver.New(streamserver.Options{Profile: p.profile, Objects: streamObjects, Namespace: "bench", Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		for i := range s.Len() {
			name := p.name + "-" + string(rune('0'+i)) + ".json"
			if got, want := append(s.ObjectJSON(i), '\n'), readGolden(t, name); !bytes.Equal(got, want) {
				t.Errorf("%s object %d is not %s:\n%s\n%s", p.profile, i, name, got, want)
			}
		}
	}
}
