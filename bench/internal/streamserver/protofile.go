package streamserver

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
)

// The -protobuf-objects file holds the protobuf encoding of every object the server
// generates with the same flags, in list order: the raw message of the kind (a Pod's,
// fields metadata=1, spec=2, status=3), with the object's own resourceVersion and the
// stamp "0000000000000000000", as k8s.io/api's Marshal writes it. The main module cannot
// encode a Pod in protobuf without importing k8s.io, so bench/clientgo/cmd/pbprep, in the
// client-go module, makes it from the server's JSON; the server only frames the messages
// and patches their two holes.
//
// The layout: the line protobufFileMagic, the kind (a length-prefixed string), the number
// of objects (a varint), then each message length-prefixed (a varint).
const protobufFileMagic = "kinformer protobuf objects v1\n"

// ProtobufFileHeader is the start of a -protobuf-objects file of n objects of kind
// ("Pod", "Secret", "ConfigMap"); each object's AppendProtobufRecord follows, in list
// order.
func ProtobufFileHeader(kind string, n int) []byte {
	b := append([]byte(protobufFileMagic), byte(len(kind)))
	b = append(b, kind...)
	return appendVarint(b, uint64(n))
}

// AppendProtobufRecord appends one object's record of a -protobuf-objects file: msg,
// length-prefixed.
func AppendProtobufRecord(b, msg []byte) []byte {
	return append(appendVarint(b, uint64(len(msg))), msg...)
}

// readProtobufFile returns the kind and the messages of a -protobuf-objects file.
func readProtobufFile(data []byte) (kind string, msgs [][]byte, err error) {
	rest, ok := bytes.CutPrefix(data, []byte(protobufFileMagic))
	if !ok || len(rest) == 0 || len(rest) < 1+int(rest[0]) {
		return "", nil, errors.New("not a protobuf objects file (bench/clientgo/cmd/pbprep writes them)")
	}
	kind, rest = string(rest[1:1+rest[0]]), rest[1+rest[0]:]
	n, l, err := readVarint(rest)
	if err != nil {
		return "", nil, fmt.Errorf("object count: %w", err)
	}
	rest = rest[l:]
	if n > uint64(len(rest)) { // every record takes at least a byte
		return "", nil, fmt.Errorf("%d objects in %d bytes", n, len(rest))
	}
	msgs = make([][]byte, n)
	for i := range msgs {
		size, l, err := readVarint(rest)
		if err != nil || size > uint64(len(rest)-l) {
			return "", nil, fmt.Errorf("object %d of %d: truncated", i, n)
		}
		msgs[i], rest = rest[l:l+int(size)], rest[l+int(size):]
	}
	if len(rest) > 0 {
		return "", nil, fmt.Errorf("%d bytes after the %d objects", len(rest), n)
	}
	return kind, msgs, nil
}

// loadProtobuf reads the -protobuf-objects file into every item's pb template. The file
// must hold exactly the server's objects in list order, which it checks by kind, count
// and each object's name and resourceVersion: a file prepared with other flags (another
// seed or count, managedFields or not) would otherwise serve other objects in protobuf
// than in JSON.
func (s *Server) loadProtobuf(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("streamserver: protobuf objects: %w", err)
	}
	kind, msgs, err := readProtobufFile(data)
	if err != nil {
		return fmt.Errorf("streamserver: protobuf objects %s: %w", path, err)
	}
	if kind != s.kind || len(msgs) != len(s.items) {
		return fmt.Errorf("streamserver: protobuf objects %s: %d %s objects, the server has %d %s objects (prepare the file with the server's flags)",
			path, len(msgs), kind, len(s.items), s.kind)
	}
	for i, msg := range msgs {
		it := &s.items[i]
		if it.pb, err = pbTemplate(msg, it); err != nil {
			return fmt.Errorf("streamserver: protobuf objects %s: object %d: %w (prepare the file with the server's flags)", path, i, err)
		}
		if it.kubelet != nil { // a realistic pod's kubelet variants (realistic_protobuf.go)
			if err := it.kubelet.loadProtobuf(msg, it); err != nil {
				return fmt.Errorf("streamserver: protobuf objects %s: object %d: %w", path, i, err)
			}
		}
	}
	s.pbTypeMeta = appendBytesField(nil, 1, appendStringField(appendStringField(nil, 1, "v1"), 2, s.kind))
	s.pbListTypeMeta = appendBytesField(nil, 1, appendStringField(appendStringField(nil, 1, "v1"), 2, s.kind+"List"))
	return nil
}

// pbTemplate makes the template of one object's message: the bytes without its
// resourceVersion digits and stamp digits, whose offsets it finds by reading the
// message's metadata (field 1, an ObjectMeta): resourceVersion is its field 6, and the
// stamp the value of the StampAnnotation entry of annotations, field 12 (a map entry:
// key 1, value 2). Each must be there exactly once, with it's resourceVersion and the
// zero stamp, and the name (field 1) must be it's. The holes keep their lengths when
// filled (resourceVersions all have as many digits), so no length prefix changes.
func pbTemplate(msg []byte, it *item) (template, error) {
	var meta []byte
	metaAt, metas := 0, 0
	err := eachField(msg, func(f pbField) error {
		if f.num == 1 && f.wt == wireBytes {
			meta, metaAt = f.val, f.at
			metas++
		}
		return nil
	})
	if err != nil {
		return template{}, err
	}
	if metas != 1 {
		return template{}, fmt.Errorf("%d metadata fields, want 1", metas)
	}
	var name, rv []byte
	rvAt, rvs, stampAt, stamps := 0, 0, 0, 0
	err = eachField(meta, func(f pbField) error {
		switch {
		case f.wt != wireBytes:
		case f.num == 1:
			name = f.val
		case f.num == 6:
			rv, rvAt = f.val, metaAt+f.at
			rvs++
		case f.num == 12:
			var key, val []byte
			valAt := 0
			if err := eachField(f.val, func(e pbField) error {
				switch e.num {
				case 1:
					key = e.val
				case 2:
					val, valAt = e.val, e.at
				}
				return nil
			}); err != nil {
				return fmt.Errorf("annotation: %w", err)
			}
			if string(key) != StampAnnotation {
				return nil
			}
			if !bytes.Equal(val, zeroStamp) {
				return fmt.Errorf("annotation %s is %q, want %q", StampAnnotation, val, zeroStamp)
			}
			stampAt = metaAt + f.at + valAt
			stamps++
		}
		return nil
	})
	if err != nil {
		return template{}, fmt.Errorf("metadata: %w", err)
	}
	switch {
	case string(name) != it.name:
		return template{}, fmt.Errorf("named %q, want %q", name, it.name)
	case rvs != 1:
		return template{}, fmt.Errorf("%d resourceVersion fields, want 1", rvs)
	case !bytes.Equal(rv, it.rvs):
		return template{}, fmt.Errorf("resourceVersion %q, want %q", rv, it.rvs)
	case stamps != 1:
		return template{}, fmt.Errorf("%d %s annotations, want 1", stamps, StampAnnotation)
	}
	return cutHoles(msg, rvAt, len(it.rvs), stampAt), nil
}

// cutHoles is the template of msg with its resourceVersion (rvLen bytes at rvAt) and
// stamp (stampWidth bytes at stampAt) cut out.
func cutHoles(msg []byte, rvAt, rvLen, stampAt int) template {
	type hl struct {
		at, n int
		kind  hole
	}
	hs := []hl{{rvAt, rvLen, holeRV}, {stampAt, stampWidth, holeStamp}}
	slices.SortFunc(hs, func(a, b hl) int { return a.at - b.at })
	var t template
	t.buf = make([]byte, 0, len(msg)-rvLen-stampWidth)
	prev := 0
	for i, h := range hs {
		t.buf = append(t.buf, msg[prev:h.at]...)
		t.at[i], t.kinds[i] = len(t.buf), h.kind
		prev = h.at + h.n
	}
	t.buf = append(t.buf, msg[prev:]...)
	return t
}
