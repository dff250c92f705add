package object

import (
	"encoding/json"
	"testing"

	"github.com/kinformer/kinformer/internal/codec"
)

// BenchmarkDecodePod measures the decoder that keeps unknown members, whose member and
// value scanning runs for every object the informer caches.
func BenchmarkDecodePod(b *testing.B) {
	data := []byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-1","namespace":"ns","uid":"6d1c5f2e","resourceVersion":"42","creationTimestamp":"2026-11-01T10:00:00Z","labels":{"app":"web","tier":"frontend"},"annotations":{"note":"a \"quoted\" value"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-5d9c7b8f6","uid":"1f0e","controller":true}]},"spec":{"containers":[{"name":"web","image":"nginx:1.27","resources":{"limits":{"cpu":"500m"}}}],"nodeName":"node-1"},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-01T10:00:05Z"}],"podIP":"10.1.0.1"}}`)
	for _, bc := range []struct {
		name   string
		decode func(*Pod) error
	}{
		{"unmarshal", func(p *Pod) error { return json.Unmarshal(data, p) }},
		// keep is the codec alone, without encoding/json's validation pass, so that the
		// scanning shows.
		{"keep", func(p *Pod) error { return codec.Unmarshal(data, p) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for range b.N {
				var p Pod
				if err := bc.decode(&p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
