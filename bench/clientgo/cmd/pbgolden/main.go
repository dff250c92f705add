// Command pbgolden writes the golden test data of kinformer's protobuf decoder
// (object/testdata/protobuf): Kubernetes objects as kube-apiserver writes them in JSON
// and in protobuf, made by k8s.io/apimachinery's own serializers, so that the engine
// (which never imports k8s.io) can be tested against the real bytes.
//
// For each case NAME it writes
//
//   - NAME.json: the object as apimachinery's JSON serializer writes it
//     (json.NewSerializerWithOptions with DefaultMetaFactory, Yaml, Pretty and Strict
//     false, the serializer kube-apiserver answers application/json with), through the
//     versioning encoder that sets apiVersion and kind, newline included;
//   - NAME.pb: the object as apimachinery's protobuf serializer writes it
//     (protobuf.NewSerializer, application/vnd.kubernetes.protobuf): the 4 bytes
//     "k8s\x00", then a runtime.Unknown message whose typeMeta holds apiVersion and kind
//     and whose raw holds the object's message.
//
// and a watch stream, watch.pb and watch.json, as kube-apiserver writes the body of a
// watch (GET ...?watch=1) in each encoding: five events (ADDED, MODIFIED, DELETED,
// BOOKMARK, ERROR) encoded as the apiserver's watch encoder does, each object by the
// serializer above, wrapped in a metav1.WatchEvent, encoded by the stream serializer and
// framed by its framer (protobuf: a 4-byte big-endian length before each raw
// WatchEvent message; JSON: one event per line). It also writes README.md, which lists
// the cases and the k8s.io/api version that made them.
//
// The objects are fixed (times, UIDs, values): a run writes the same bytes as the last
// one until k8s.io/api or the cases change. pod-uniform-N and pod-realistic-N are the
// first 3 objects of the stream server's pods and realistic-pods profiles
// (bench/internal/streamserver, made in-process with -objects 3 and the default seed),
// decoded from the JSON the server lists and written again by the serializers above.
//
// Run it from the bench/clientgo module (`make protobuf-golden` does):
//
//	cd bench/clientgo && go run ./cmd/pbgolden -out ../../object/testdata/protobuf
//
// Its test (go test ./cmd/pbgolden) decodes every pair with client-go's serializers and
// checks that the two decode to equal objects, that the watch streams decode to the
// five events, and that the files are what this command writes now.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kinformer/kinformer/bench/internal/streamserver"
)

// defaultOut is the golden directory, relative to the bench/clientgo module.
const defaultOut = "../../object/testdata/protobuf"

const clientgoModule = "github.com/kinformer/kinformer/bench/clientgo"

// streamObjects is how many objects of each stream server profile are written.
const streamObjects = 3

func main() {
	log.SetFlags(0)
	log.SetPrefix("pbgolden: ")
	if err := run(os.Args[1:]); err != nil {
		log.Fatal(err)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("pbgolden", flag.ExitOnError)
	out := fs.String("out", defaultOut, "directory to write the files into (the default is relative to the bench/clientgo module, which must then be the working directory)")
	_ = fs.Parse(args)
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	outSet := false
	fs.Visit(func(f *flag.Flag) { outSet = outSet || f.Name == "out" })
	if !outSet {
		if gomod, err := os.ReadFile("go.mod"); err != nil || !bytes.Contains(gomod, []byte("module "+clientgoModule+"\n")) {
			return fmt.Errorf("the default -out (%s) is relative to the bench/clientgo module: run from there, or pass -out", defaultOut)
		}
	}
	files, err := generate()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	names := sortedNames(files)
	var total int
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(*out, name), files[name], 0o644); err != nil {
			return err
		}
		total += len(files[name])
	}
	// Files of a former case are not removed (the test reports them): list them here.
	if stale, err := staleFiles(*out, files); err == nil && len(stale) > 0 {
		log.Printf("not written by this run, delete them if they are no case's any more: %s", strings.Join(stale, ", "))
	}
	log.Printf("%d files, %d bytes, written to %s", len(names), total, *out)
	return nil
}

func sortedNames(files map[string][]byte) []string {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// staleFiles are the .json and .pb files of dir that files does not hold.
func staleFiles(dir string, files map[string][]byte) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var stale []string
	for _, e := range entries {
		n := e.Name()
		if _, ok := files[n]; !ok && (strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".pb")) {
			stale = append(stale, n)
		}
	}
	return stale, nil
}

// The serializers kube-apiserver answers with (those of serializer.NewCodecFactory, as
// client-go's scheme.Codecs has them).
var (
	jsonSerializer = json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme.Scheme, scheme.Scheme,
		json.SerializerOptions{Yaml: false, Pretty: false, Strict: false})
	// strictJSON reads the stream server's objects, failing on a field k8s.io/api does
	// not know (it would be missing from the files).
	strictJSON = json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme.Scheme, scheme.Scheme,
		json.SerializerOptions{Strict: true})
	protobufSerializer = protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	// protobufRaw is protobuf's stream serializer: messages without the prefix and the
	// runtime.Unknown envelope, each framed by protobuf.LengthDelimitedFramer.
	protobufRaw = protobuf.NewRawSerializer(scheme.Scheme, scheme.Scheme)
)

// versioned is s behind the versioning encoder kube-apiserver puts in front of every
// serializer (CodecFactory.EncoderForVersion), for obj's group version: it sets the
// object's apiVersion and kind for the encoding.
func versioned(s runtime.Encoder, gv schema.GroupVersion) runtime.Encoder {
	return scheme.Codecs.EncoderForVersion(s, gv)
}

func groupVersionOf(obj runtime.Object) (schema.GroupVersion, error) {
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil {
		return schema.GroupVersion{}, err
	}
	return gvks[0].GroupVersion(), nil
}

// encodePair is obj's JSON and protobuf encodings.
func encodePair(obj runtime.Object) (js, pb []byte, err error) {
	gv, err := groupVersionOf(obj)
	if err != nil {
		return nil, nil, err
	}
	if js, err = runtime.Encode(versioned(jsonSerializer, gv), obj); err != nil {
		return nil, nil, err
	}
	if pb, err = runtime.Encode(versioned(protobufSerializer, gv), obj); err != nil {
		return nil, nil, err
	}
	return js, pb, nil
}

// encodeWatch is the body of a watch of pods carrying events, as kube-apiserver writes
// it (k8s.io/apiserver's watchEncoder.doEncode): each object encoded by embedded, wrapped
// in a metav1.WatchEvent, which stream encodes, behind framer.
func encodeWatch(events []watch.Event, embedded, stream runtime.Encoder, framer runtime.Framer) ([]byte, error) {
	gv := corev1.SchemeGroupVersion // the watched resource's: pods
	var body bytes.Buffer
	enc := streaming.NewEncoder(framer.NewFrameWriter(&body), versioned(stream, gv))
	emb := versioned(embedded, gv)
	for _, e := range events {
		raw, err := runtime.Encode(emb, e.Object)
		if err != nil {
			return nil, fmt.Errorf("%s event: %w", e.Type, err)
		}
		if err := enc.Encode(&metav1.WatchEvent{Type: string(e.Type), Object: runtime.RawExtension{Raw: raw}}); err != nil {
			return nil, fmt.Errorf("%s event: %w", e.Type, err)
		}
	}
	return body.Bytes(), nil
}

// streamCases are the first streamObjects pods of the stream server's pods and
// realistic-pods profiles, as pod-uniform-N and pod-realistic-N (N from 0).
func streamCases() ([]golden, error) {
	var cases []golden
	for _, p := range []struct{ profile, name, note string }{
		{"pods", "pod-uniform", "the stream server's pods profile"},
		{streamserver.RealisticPods, "pod-realistic", "the stream server's realistic-pods profile"},
	} {
		s, err := streamserver.New(streamserver.Options{Profile: p.profile, Objects: streamObjects, Namespace: "bench", Seed: 1})
		if err != nil {
			return nil, err
		}
		if s.Lazy() {
			return nil, fmt.Errorf("%s: a lazy stream server", p.profile)
		}
		for i := range s.Len() {
			obj, _, err := strictJSON.Decode(s.ObjectJSON(i), nil, nil)
			if err != nil {
				return nil, fmt.Errorf("%s object %d: %w", p.profile, i, err)
			}
			cases = append(cases, golden{
				name: fmt.Sprintf("%s-%d", p.name, i),
				obj:  obj,
				note: fmt.Sprintf("object %d of %s (-objects %d -seed 1)", i, p.note, streamObjects),
			})
		}
	}
	return cases, nil
}

// allCases are the fixed cases with the stream server's after pod-minimal.
func allCases() ([]golden, error) {
	stream, err := streamCases()
	if err != nil {
		return nil, err
	}
	fixed := fixedCases()
	at := slices.IndexFunc(fixed, func(g golden) bool { return g.name == "pod-minimal" }) + 1
	return slices.Insert(fixed, at, stream...), nil
}

// generate returns every file pbgolden writes, by name.
func generate() (map[string][]byte, error) {
	cases, err := allCases()
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, c := range cases {
		js, pb, err := encodePair(c.obj)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		if _, dup := files[c.name+".json"]; dup {
			return nil, fmt.Errorf("two cases named %s", c.name)
		}
		files[c.name+".json"], files[c.name+".pb"] = js, pb
	}
	if files["watch.pb"], err = encodeWatch(watchEvents(), protobufSerializer, protobufRaw, protobuf.LengthDelimitedFramer); err != nil {
		return nil, err
	}
	if files["watch.json"], err = encodeWatch(watchEvents(), jsonSerializer, jsonSerializer, json.Framer); err != nil {
		return nil, err
	}
	readme, err := readme(cases)
	if err != nil {
		return nil, err
	}
	files["README.md"] = readme
	return files, nil
}

// moduleVersions are the versions of k8s.io/api and k8s.io/apimachinery linked in.
func moduleVersions() (api, apimachinery string, err error) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "", "", errors.New("no build information to read the k8s.io/api version from")
	}
	for _, d := range bi.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		switch d.Path {
		case "k8s.io/api":
			api = d.Version
		case "k8s.io/apimachinery":
			apimachinery = d.Version
		}
	}
	if api == "" || apimachinery == "" {
		return "", "", errors.New("build information names no k8s.io/api or k8s.io/apimachinery")
	}
	return api, apimachinery, nil
}
