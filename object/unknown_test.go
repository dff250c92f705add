package object

import (
	"bytes"
	"encoding/json"
	"maps"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/internal/codec"
)

// Unknown is codec.Members under this package's name (its tests are the codec's): each
// method is the Members method of the same name.
func TestUnknownIsMembers(t *testing.T) {
	var u Unknown
	var m codec.Members
	for _, op := range []struct{ name, value string }{ // an empty value deletes
		{"restartPolicy", `"Always"`}, {"x", `{"a": [1]}`}, {"empty", `null`}, {"restartPolicy", ``},
	} {
		if op.value == "" {
			u.Delete(op.name)
			m.Delete(op.name)
		} else {
			u.Set(op.name, json.RawMessage(op.value))
			m.Set(op.name, json.RawMessage(op.value))
		}
		if u.Len() != m.Len() || u.String() != m.String() || !bytes.Equal(u.Get("x"), m.Get("x")) ||
			!maps.EqualFunc(maps.Collect(u.All()), maps.Collect(m.All()), sameJSON) {
			t.Fatalf("after %+v: Unknown %s (len %d), Members %s (len %d)", op, u, u.Len(), m, m.Len())
		}
	}
	var v Unknown
	v.Set("x", json.RawMessage(`{"a":[1]}`))
	v.Set("empty", json.RawMessage(`null`))
	if !u.Equal(v) || !cmp.Equal(u, v) {
		t.Errorf("%s and %s hold the same members", u, v)
	}
}

func sameJSON(a, b json.RawMessage) bool { return bytes.Equal(a, b) }

// Decoders running at once share the intern tables safely (run with -race).
func TestConcurrentDecodesShareStrings(t *testing.T) {
	var wg sync.WaitGroup
	pods := make([]*Pod, 8)
	for g := range pods {
		wg.Go(func() {
			for i := range 200 {
				p, err := codec.DecodeUnvalidated[*Pod](realisticPod(i%20), DecodeOptions{})
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
