package streamserver

import (
	"bufio"
	"io"
	"testing"
)

// BenchmarkEmit is the server's hot path alone: watch events of pre-encoded objects into
// a 256 KiB buffered writer over io.Discard, flushed every 64 events.
//
//	go test -run - -bench Emit ./bench/internal/streamserver/
func BenchmarkEmit(b *testing.B) {
	for _, c := range []struct {
		name string
		o    Options
		meta bool
	}{
		{"pods", Options{Objects: 10000}, false},
		{"pods-no-managed-fields", Options{Objects: 10000, NoManagedFields: true}, false},
		{"pods-metadata-only", Options{Objects: 10000}, true},
		{"configmaps", Options{Profile: "configmaps", Objects: 10000}, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			s, err := New(c.o)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			emitEvents(b, s, c.meta)
		})
	}
}

// emitEvents times a watcher of s writing events to nowhere, in batches of 64 as a
// watch flushes them.
func emitEvents(b *testing.B, s *Server, meta bool) {
	w := &watcher{s: s, items: s.items, kind: "Pod", metaOnly: meta}
	w.cw.w = io.Discard
	w.bw = bufio.NewWriterSize(&w.cw, 256<<10)
	k := int64(0)
	for b.Loop() {
		w.change(k)
		k++
		if w.events >= 64 {
			_ = w.push()
		}
	}
	_ = w.push()
	b.SetBytes(w.cw.n / k)
	b.ReportMetric(float64(k)/b.Elapsed().Seconds(), "events/s")
}
