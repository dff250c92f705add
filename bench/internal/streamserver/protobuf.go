package streamserver

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Media types of the apiserver's protobuf encoding.
const (
	protobufType      = "application/vnd.kubernetes.protobuf"
	protobufWatchType = protobufType + ";stream=watch"
)

// protobufMagic starts every whole protobuf object the apiserver sends: a list body, and
// a watch event's object (k8s.io/apimachinery/pkg/runtime/serializer/protobuf).
const protobufMagic = "k8s\x00"

// unknownTail ends every runtime.Unknown the server writes: contentEncoding (3) and
// contentType (4), empty, as the apiserver writes them.
const unknownTail = "\x1a\x00\x22\x00"

// servesProtobuf reports whether a request gets protobuf: the server has the objects in
// protobuf (Options.ProtobufObjects), the request is not for PartialObjectMetadata
// (served as JSON, which the metadata client also accepts), and the first media type of
// its Accept header the server can serve is protobuf's. client-go asks for
// "application/vnd.kubernetes.protobuf,application/json".
func (s *Server) servesProtobuf(accept string, metaOnly bool) bool {
	if s.pbTypeMeta == nil || metaOnly {
		return false
	}
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, _ := strings.Cut(part, ";")
		switch strings.TrimSpace(mt) {
		case protobufType:
			return true
		case "application/json", "*/*", "application/*":
			return false
		}
	}
	return false
}

// serveProtobufList writes a list page in protobuf: the magic, then a runtime.Unknown
// {typeMeta=1 {apiVersion=1 "v1", kind=2 "PodList"}, raw=2 the list, "", ""}, the list
// being {metadata=1 ListMeta{resourceVersion=2, continue=3, remainingItemCount=4,
// shardInfo=5 {selector=1}}, items=2 each object}. remaining < 0 leaves
// remainingItemCount out; selector "" leaves shardInfo out. page is the positions in
// items of the page's objects.
func (s *Server) serveProtobufList(w http.ResponseWriter, items eagerObjects, page []int, cont string, remaining int, selector string) {
	lm := appendStringField(nil, 2, strconv.FormatInt(s.r0, 10))
	if cont != "" {
		lm = appendStringField(lm, 3, cont)
		if remaining >= 0 {
			lm = appendVarint(append(lm, pbTag(4, wireVarint)), uint64(remaining))
		}
	}
	if selector != "" {
		lm = appendBytesField(lm, 5, appendStringField(nil, 1, selector))
	}
	listLen := bytesFieldLen(len(lm))
	for _, j := range page {
		it := &items[j]
		listLen += bytesFieldLen(it.pb.size(len(it.rvs)))
	}
	head := append([]byte(protobufMagic), s.pbListTypeMeta...)
	head = appendVarint(append(head, pbTag(2, wireBytes)), uint64(listLen))
	head = appendBytesField(head, 1, lm)
	n := len(head) + listLen - bytesFieldLen(len(lm)) + len(unknownTail)

	w.Header().Set("Content-Type", protobufType)
	w.Header().Set("Content-Length", strconv.Itoa(n))
	bw := writerPool.Get().(*bufio.Writer)
	bw.Reset(w)
	defer func() { bw.Reset(nil); writerPool.Put(bw) }()
	bw.Write(head)
	var pre [1 + 10]byte
	for _, j := range page {
		it := &items[j]
		p := appendVarint(append(pre[:0], pbTag(2, wireBytes)), uint64(it.pb.size(len(it.rvs))))
		bw.Write(p)
		it.pb.write(bw, it.rvs, zeroStamp)
	}
	bw.WriteString(unknownTail)
	if err := bw.Flush(); err != nil {
		s.logf("list: %v", err)
	}
	s.lists.Add(1)
	s.bytes.Add(int64(n))
}

// protobufEventType is the type field of a watch event, by event type.
var protobufEventType = [...]string{added: "ADDED", modified: "MODIFIED", deleted: "DELETED"}

// writeProtobufEventHead writes a protobuf watch frame up to the object's own message
// of size bytes, which the caller writes next, followed by unknownTail. The frame is a
// 4-byte big-endian length, then a metav1.WatchEvent {type=1, object=2
// RawExtension{raw=1}} whose raw is a whole protobuf object: the magic and a
// runtime.Unknown {typeMeta=1, raw=2 the object, "", ""}. It allocates nothing: the head
// is built in the watcher's array.
func (w *watcher) writeProtobufEventHead(typ string, size int) {
	tm := w.s.pbTypeMeta
	unknown := len(protobufMagic) + len(tm) + bytesFieldLen(size) + len(unknownTail)
	ext := bytesFieldLen(unknown)
	event := bytesFieldLen(len(typ)) + bytesFieldLen(ext)
	b := binary.BigEndian.AppendUint32(w.pbHead[:0], uint32(event))
	b = appendStringField(b, 1, typ)
	b = appendVarint(append(b, pbTag(2, wireBytes)), uint64(ext))
	b = appendVarint(append(b, pbTag(1, wireBytes)), uint64(unknown))
	b = append(b, protobufMagic...)
	b = append(b, tm...)
	b = appendVarint(append(b, pbTag(2, wireBytes)), uint64(size))
	w.bw.Write(b)
}

// emitProtobuf is emit in protobuf. A resourceVersion of another length than the
// object's own would change the length prefixes inside the pre-encoded message, which the
// server does not rewrite: the watch then fails (a resourceVersion gains a digit only
// after about 50 million events).
func (w *watcher) emitProtobuf(typ int, it *item, rv []byte) {
	if len(rv) != len(it.rvs) {
		if w.err == nil {
			w.err = fmt.Errorf("resourceVersion %s has %d digits, the protobuf objects %d: cannot patch it in place", rv, len(rv), len(it.rvs))
		}
		return
	}
	putStamp(&w.stamp, time.Now().UnixNano())
	w.writeProtobufEventHead(protobufEventType[typ], it.pb.size(len(rv)))
	it.pb.write(w.bw, rv, w.stamp[:])
	w.bw.WriteString(unknownTail)
	w.events++
}

// bookmarkProtobuf is bookmark in protobuf: an object of the watch's kind whose
// metadata (1) has only resourceVersion (6) and, at the end of the initial events, the
// k8s.io/initial-events-end annotation (12).
func (w *watcher) bookmarkProtobuf(rv int64, initialEnd bool) {
	meta := appendStringField(nil, 6, strconv.FormatInt(rv, 10))
	if initialEnd {
		entry := appendStringField(appendStringField(nil, 1, "k8s.io/initial-events-end"), 2, "true")
		meta = appendBytesField(meta, 12, entry)
	}
	obj := appendBytesField(nil, 1, meta)
	w.writeProtobufEventHead("BOOKMARK", len(obj))
	w.bw.Write(obj)
	w.bw.WriteString(unknownTail)
	w.events++
}
