package streamserver

import (
	"bufio"
	"bytes"
	"time"
)

// Kubelet variants as patches of an object's templates.

// patchSpan replaces n bytes at offset at of a template's buf (where its holes are cut out).
type patchSpan struct{ at, n uint32 }

// patchSet is an object's kubeletVariants variants in one encoding: variant v replaces
// each of spans[v] with the next bytes of data[v]. Spans are in ascending order, never
// across a hole, and replace bytes with as many: a variant has its object's size.
type patchSet struct {
	spans [kubeletVariants][]patchSpan
	data  [kubeletVariants][]byte
}

// set sets variant v to spans, shifted by shift, whose bytes are the next ones of data,
// the spans being in order; but the spans whose bytes are base's (at their unshifted
// offsets) are left out.
func (p *patchSet) set(v int, spans []patchSpan, base, data []byte, shift int) {
	p.spans[v], p.data[v] = nil, nil
	for _, s := range spans {
		b := data[:s.n]
		data = data[s.n:]
		if bytes.Equal(b, base[s.at:s.at+s.n]) {
			continue
		}
		p.spans[v] = append(p.spans[v], patchSpan{uint32(int(s.at) + shift), s.n})
		p.data[v] = append(p.data[v], b...)
	}
}

// podVariants are a realistic pod's kubelet variants: JSON whole and as
// PartialObjectMetadata, and protobuf (set by loadProtobuf).
type podVariants struct {
	full, meta, pb patchSet
}

// diffSpans are the spans where variant differs from base (which is as long, and has
// its holes at the same offsets, holes), runs less than 8 bytes apart joined unless a
// hole is between them.
func diffSpans(base, variant []byte, holes [2]int) []patchSpan {
	var spans []patchSpan
	for i := 0; i < len(base); {
		if base[i] == variant[i] {
			i++
			continue
		}
		s := i
		for i < len(base) && base[i] != variant[i] {
			i++
		}
		for _, h := range holes {
			if s < h && h < i {
				panic("streamserver: a kubelet variant changes the bytes around a hole")
			}
		}
		if k := len(spans) - 1; k >= 0 {
			prev := &spans[k]
			end := int(prev.at + prev.n)
			between := false
			for _, h := range holes {
				between = between || end <= h && h <= s
			}
			if s-end < 8 && !between {
				prev.n = uint32(i) - prev.at
				continue
			}
		}
		spans = append(spans, patchSpan{uint32(s), uint32(i - s)})
	}
	return spans
}

// writePatched writes the object of template t as write does, with the spans replaced by
// data.
func (t *template) writePatched(w *bufio.Writer, rv, stamp []byte, spans []patchSpan, data []byte) {
	prev, h := 0, 0
	holesTo := func(end int) { // the holes before end, with the bytes before each
		for ; h < len(t.at) && t.at[h] <= end; h++ {
			w.Write(t.buf[prev:t.at[h]])
			if t.kinds[h] == holeRV {
				w.Write(rv)
			} else {
				w.Write(stamp)
			}
			prev = t.at[h]
		}
	}
	for _, s := range spans {
		holesTo(int(s.at))
		w.Write(t.buf[prev:s.at])
		w.Write(data[:s.n])
		data = data[s.n:]
		prev = int(s.at + s.n)
	}
	holesTo(len(t.buf))
	w.Write(t.buf[prev:])
}

// appendPatched is writePatched for a byte slice (tests).
func (t *template) appendPatched(b, rv, stamp []byte, spans []patchSpan, data []byte) []byte {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	t.writePatched(w, rv, stamp, spans, data)
	_ = w.Flush()
	return append(b, buf.Bytes()...)
}

// emitKubelet is emit of a realistic pod's change: its kubelet variant v.
func (w *watcher) emitKubelet(typ int, it *item, rv []byte, v int) {
	kv := it.kubelet
	if w.pb {
		if len(rv) != len(it.rvs) {
			w.emitProtobuf(typ, it, rv) // which fails the watch
			return
		}
		putStamp(&w.stamp, time.Now().UnixNano())
		w.writeProtobufEventHead(protobufEventType[typ], it.pb.size(len(rv)))
		it.pb.writePatched(w.bw, rv, w.stamp[:], kv.pb.spans[v], kv.pb.data[v])
		w.bw.WriteString(unknownTail)
		w.events++
		return
	}
	putStamp(&w.stamp, time.Now().UnixNano())
	w.bw.WriteString(eventPrefix[typ])
	if w.metaOnly {
		it.meta.writePatched(w.bw, rv, w.stamp[:], kv.meta.spans[v], kv.meta.data[v])
	} else {
		it.full.writePatched(w.bw, rv, w.stamp[:], kv.full.spans[v], kv.full.data[v])
	}
	w.bw.WriteString(eventSuffix)
	w.events++
}
