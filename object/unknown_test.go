package object

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/kinformer/kinformer/internal/jsonscan"
)

func TestUnknownMembers(t *testing.T) {
	var u Unknown
	if u.Len() != 0 || u.Get("x") != nil || u.String() != "{}" {
		t.Fatalf("zero Unknown: len %d, x %s, %s", u.Len(), u.Get("x"), u)
	}
	u.Set("restartPolicy", json.RawMessage(`"Always"`)) // a word, and a word's value
	u.Set("x-custom", json.RawMessage(`{"name": "a", "tolerations" :[1, 2.50]}`))
	u.Set("empty", nil)
	u.Set("restartPolicy", json.RawMessage(`"Never"`)) // replaced in place
	want := []string{"restartPolicy", "x-custom", "empty"}
	if got := slices.Collect(maps.Keys(maps.Collect(u.All()))); len(got) != 3 || u.Len() != 3 {
		t.Fatalf("members %v, len %d", got, u.Len())
	}
	var order []string
	for name := range u.All() {
		order = append(order, name)
	}
	if !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	for name, value := range map[string]string{
		"restartPolicy": `"Never"`,
		"x-custom":      `{"name": "a", "tolerations" :[1, 2.50]}`, // byte for byte
		"empty":         `null`,
	} {
		if got := string(u.Get(name)); got != value {
			t.Errorf("Get(%q) = %s, want %s", name, got, value)
		}
	}

	c := u // a copy is independent
	c.Delete("x-custom")
	c.Set("restartPolicy", json.RawMessage(`"OnFailure"`))
	if u.Len() != 3 || string(u.Get("restartPolicy")) != `"Never"` || c.Len() != 2 {
		t.Errorf("changing a copy changed the original: %s / %s", u, c)
	}
	c.Delete("missing")
	c.Delete("restartPolicy")
	c.Delete("empty")
	if c.Len() != 0 || c.b != nil {
		t.Errorf("all deleted: %s (%d bytes)", c, len(c.b))
	}
}

func TestUnknownEqual(t *testing.T) {
	var a, b Unknown
	a.Set("p", json.RawMessage(`{"a": [1, "<x>"]}`))
	a.Set("q", json.RawMessage(`2`))
	b.Set("q", json.RawMessage(`2`))
	b.Set("p", json.RawMessage(`{"a":[1,"\u003cx\u003e"]}`)) // other order, spacing, escapes
	if !a.Equal(b) || !cmp.Equal(a, b) {
		t.Errorf("%s and %s are the same members", a, b)
	}
	b.Set("q", json.RawMessage(`2.0`)) // numbers compare by their text
	if a.Equal(b) {
		t.Errorf("%s and %s differ", a, b)
	}
	b.Delete("q")
	if a.Equal(b) || b.Equal(a) {
		t.Errorf("%s and %s differ", a, b)
	}
}

// A value that is not JSON text (control bytes) is kept as it is, not packed.
func TestUnknownKeepsNonJSONBytes(t *testing.T) {
	var u Unknown
	odd := json.RawMessage("\"name\x01\x05\":\"Always\"")
	u.Set("v", odd)
	if got := u.Get("v"); !bytes.Equal(got, odd) {
		t.Errorf("Get = %q, want %q", got, odd)
	}
}

// Members are packed, and a pod's share of them is far smaller than its JSON.
func TestUnknownPacksKubernetesWords(t *testing.T) {
	data := realisticPod(3)
	var p Pod
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	spec := p.Spec.Unknown
	text := 0
	for _, v := range spec.All() {
		text += len(v)
	}
	if len(spec.b)*2 > text {
		t.Errorf("spec's unknown members take %d bytes for %d of JSON", len(spec.b), text)
	}
	// And they come back byte for byte.
	var raw struct{ Spec map[string]json.RawMessage }
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	delete(raw.Spec, "nodeName")
	if got := maps.Collect(spec.All()); !cmp.Equal(got, raw.Spec, cmp.Comparer(bytes.Equal)) {
		t.Errorf("spec members differ:\n%s", cmp.Diff(raw.Spec, got, cmp.Comparer(bytes.Equal)))
	}
}

// Decoding keeps no part of its input: every kept byte is a copy.
func TestDecodeRetainsNoInput(t *testing.T) {
	data := realisticPod(4)
	p, err := DecodeValid[*Pod](data)
	if err != nil {
		t.Fatal(err)
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	inside := func(p unsafe.Pointer) bool {
		return uintptr(p) >= base && uintptr(p) < base+uintptr(cap(data))
	}
	for _, u := range []Unknown{p.ObjectMeta.Unknown, p.Spec.Unknown, p.Status.Unknown, p.Status.ContainerStatuses[0].Unknown, p.Status.Conditions[0].Unknown} {
		if len(u.b) > 0 && inside(unsafe.Pointer(unsafe.SliceData(u.b))) {
			t.Errorf("an Unknown refers into the input")
		}
	}
	for _, s := range []string{p.Name, p.Namespace, p.UID, p.GenerateName, p.Spec.NodeName, p.OwnerReferences[0].Name, p.Labels["app"], p.Status.Conditions[0].Type} {
		if inside(unsafe.Pointer(unsafe.StringData(s))) {
			t.Errorf("string %q refers into the input", s)
		}
	}
}

// FuzzPack: packing a JSON value and unpacking it gives back its bytes exactly, and
// scanValue finds the value's end where jsonscan does.
func FuzzPack(f *testing.F) {
	f.Add([]byte(`{"name":"a","image":"nginx","ports":[{"containerPort":80,"protocol":"TCP"}]}`))
	f.Add([]byte(` [ "Always" , {"name" : "x\"y", "restartPolicy":"Never"}, 1.5e3, null ] `))
	f.Add([]byte(`"namespace"`))
	f.Add([]byte(`{"a\\":"\\\\","b":"\u0041lways"}`))
	f.Add(realisticPod(0))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		i := jsonscan.SkipSpace(data, 0)
		end, packed, _ := scanValue(data, i, nil)
		if want := jsonscan.ValueEnd(data, i); end != want || skipValue(data, i) != want {
			t.Fatalf("end %d, skipValue %d, want %d", end, skipValue(data, i), want)
		}
		if got := unpack(nil, packed); !bytes.Equal(got, data[i:end]) {
			t.Fatalf("scanValue+unpack = %q, want %q", got, data[i:end])
		}
		whole, _ := pack(nil, data)
		if got := unpack(nil, whole); !bytes.Equal(got, data) {
			t.Fatalf("pack+unpack = %q, want %q", got, data)
		}
	})
}

// The fast path for the API's timestamps gives what time.Parse gives, and leaves the rest
// to it.
func TestParseUTCSecondsMatchesTimeParse(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		s := fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02dZ", r.IntN(3000), r.IntN(14), r.IntN(33), r.IntN(26), r.IntN(62), r.IntN(62))
		var got, want Time
		gotErr := got.parse([]byte(s))
		parsed, wantErr := time.Parse(time.RFC3339Nano, s)
		want.Time = parsed
		if (gotErr != nil) != (wantErr != nil) || got != want {
			t.Fatalf("%s: %v (%v), want %v (%v)", s, got, gotErr, want, wantErr)
		}
	}
}

// Decoders running at once share the intern tables safely (run with -race).
func TestConcurrentDecodesShareStrings(t *testing.T) {
	var wg sync.WaitGroup
	pods := make([]*Pod, 8)
	for g := range pods {
		wg.Go(func() {
			for i := range 200 {
				p, err := DecodeValid[*Pod](realisticPod(i % 20))
				if err != nil {
					t.Error(err)
					return
				}
				pods[g] = p
			}
		})
	}
	wg.Wait()
	for _, p := range pods[1:] {
		if p.Namespace != pods[0].Namespace || p.Labels["app"] != pods[0].Labels["app"] {
			t.Errorf("pods of the same input differ: %v %v", p.ObjectMeta, pods[0].ObjectMeta)
		}
	}
}
