package streamserver

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestVarintRoundTrip(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 300, 16383, 16384, 1 << 32, math.MaxInt64, math.MaxUint64} {
		b := appendVarint([]byte{0xff}, v)[1:]
		if len(b) != varintLen(v) {
			t.Errorf("%d: %d bytes, varintLen says %d", v, len(b), varintLen(v))
		}
		got, n, err := readVarint(append(b, 0x01))
		if err != nil || got != v || n != len(b) {
			t.Errorf("%d: read %d (%d bytes, %v)", v, got, n, err)
		}
		if len(b) > 1 {
			if _, _, err := readVarint(b[:len(b)-1]); err == nil {
				t.Errorf("%d: a truncated varint reads", v)
			}
		}
	}
	if n := bytesFieldLen(200); n != 1+2+200 {
		t.Errorf("bytesFieldLen(200) = %d", n)
	}
}

// eachField reads back every wire type, and a length-delimited field's offset.
func TestEachField(t *testing.T) {
	msg := appendStringField(nil, 1, "name")
	msg = appendVarint(append(msg, pbTag(2, wireVarint)), 300)
	msg = binary.LittleEndian.AppendUint64(append(msg, pbTag(3, wire64)), 7)
	msg = binary.LittleEndian.AppendUint32(append(msg, pbTag(4, wire32)), 7)
	msg = appendBytesField(msg, 15, bytes.Repeat([]byte{'x'}, 130))
	var got []string
	err := eachField(msg, func(f pbField) error {
		got = append(got, strconv.Itoa(f.num)+":"+strconv.Itoa(f.wt)+":"+strconv.Itoa(len(f.val)))
		if f.val != nil && !bytes.Equal(msg[f.at:f.at+len(f.val)], f.val) {
			t.Errorf("field %d: offset %d is not its value", f.num, f.at)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "1:2:4 2:0:0 3:1:0 4:5:0 15:2:130"; strings.Join(got, " ") != want {
		t.Errorf("fields %q, want %q", strings.Join(got, " "), want)
	}
	for _, bad := range [][]byte{msg[:len(msg)-1], {0x0a, 0x05, 'a'}, {0x00}, {0x0b}} {
		if err := eachField(bad, func(pbField) error { return nil }); err == nil {
			t.Errorf("% x reads", bad)
		}
	}
}

// fakeMessage is a stand-in for the object's protobuf encoding as k8s.io/api writes it:
// metadata (1) with name (1), namespace (3), resourceVersion (6) and annotations (12,
// the stamp's entry between two others), and an opaque spec (2) that holds the same
// digits as the resourceVersion, which must not be taken for it.
func fakeMessage(it *item, rv, stamp []byte) []byte {
	entry := func(k, v string) []byte { return appendStringField(appendStringField(nil, 1, k), 2, v) }
	meta := appendStringField(nil, 1, it.name)
	meta = appendStringField(meta, 3, it.ns)
	meta = appendBytesField(meta, 6, rv)
	meta = appendBytesField(meta, 12, entry("a.example/first", string(it.rvs)))
	meta = appendBytesField(meta, 12, entry(StampAnnotation, string(stamp)))
	meta = appendBytesField(meta, 12, entry("z.example/last", "0000000000000000000"))
	msg := appendBytesField(nil, 1, meta)
	return appendBytesField(msg, 2, append([]byte("spec "), it.rvs...))
}

// writeFakeFile writes a -protobuf-objects file of s's objects, msg making each message.
func writeFakeFile(t *testing.T, s *Server, msg func(i int, it *item) []byte) string {
	t.Helper()
	b := ProtobufFileHeader(s.kind, len(s.items))
	for i := range s.items {
		b = AppendProtobufRecord(b, msg(i, &s.items[i]))
	}
	path := filepath.Join(t.TempDir(), "objects.pb")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestProtobufTemplatePatchesHoles(t *testing.T) {
	s, err := New(Options{Objects: 3})
	if err != nil {
		t.Fatal(err)
	}
	it := &s.items[1]
	tmpl, err := pbTemplate(fakeMessage(it, it.rvs, zeroStamp), it)
	if err != nil {
		t.Fatal(err)
	}
	rv, stamp := []byte("48299999"), []byte("1754000000123456789")
	if got, want := tmpl.appendTo(nil, rv, stamp), fakeMessage(it, rv, stamp); !bytes.Equal(got, want) {
		t.Errorf("patched:\n% x\nwant\n% x", got, want)
	}
	if tmpl.size(len(rv)) != len(fakeMessage(it, rv, stamp)) {
		t.Errorf("size %d", tmpl.size(len(rv)))
	}
}

// A file that is not exactly the server's objects is refused, with a reason.
func TestLoadProtobufRefusesOtherObjects(t *testing.T) {
	o := Options{Objects: 5}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	good := func(_ int, it *item) []byte { return fakeMessage(it, it.rvs, zeroStamp) }
	for name, c := range map[string]struct {
		o    Options
		msg  func(int, *item) []byte
		want string
	}{
		"another seed":  {Options{Objects: 5, Seed: 2}, good, "named"},
		"fewer objects": {Options{Objects: 4}, good, "5 Pod objects, the server has 4"},
		"another kind":  {Options{Objects: 5, Profile: "configmaps"}, good, "5 Pod objects, the server has 5 ConfigMap"},
		"another rv": {o, func(i int, it *item) []byte {
			return fakeMessage(it, []byte(strconv.FormatInt(it.rv+1, 10)), zeroStamp)
		}, "resourceVersion"},
		"no stamp": {o, func(_ int, it *item) []byte {
			return appendBytesField(nil, 1, appendBytesField(appendStringField(nil, 1, it.name), 6, it.rvs))
		}, "0 " + StampAnnotation + " annotations"},
		"two resourceVersions": {o, func(_ int, it *item) []byte {
			m := fakeMessage(it, it.rvs, zeroStamp)
			return appendBytesField(m, 1, appendBytesField(nil, 6, it.rvs)) // a second metadata
		}, "2 metadata fields"},
		"a sent stamp": {o, func(_ int, it *item) []byte { return fakeMessage(it, it.rvs, []byte("1754000000123456789")) }, "want \"0000000000000000000\""},
		"truncated":    {o, func(_ int, it *item) []byte { m := fakeMessage(it, it.rvs, zeroStamp); return m[:len(m)-1] }, "bytes, only"},
	} {
		path := writeFakeFile(t, s, c.msg)
		c.o.ProtobufObjects = path
		_, err := New(c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, c.want)
		}
	}
	data, _ := os.ReadFile(writeFakeFile(t, s, good))
	for _, bad := range [][]byte{data[:len(data)-1], append(data, 0), []byte("not a file")} {
		path := filepath.Join(t.TempDir(), "bad.pb")
		_ = os.WriteFile(path, bad, 0o644)
		if _, err := New(Options{Objects: 5, ProtobufObjects: path}); err == nil {
			t.Errorf("a file of %d bytes loads", len(bad))
		}
	}
	if _, err := New(Options{Objects: 5, ProtobufObjects: writeFakeFile(t, s, good)}); err != nil {
		t.Errorf("the server's own objects: %v", err)
	}
}

// unknown reads a whole protobuf object: the magic and a runtime.Unknown, whose kind and
// raw message it returns.
func unknown(t *testing.T, b []byte) (kind string, raw []byte) {
	t.Helper()
	rest, ok := bytes.CutPrefix(b, []byte(protobufMagic))
	if !ok {
		t.Fatalf("no magic: % x", b[:min(len(b), 8)])
	}
	err := eachField(rest, func(f pbField) error {
		switch f.num {
		case 1:
			return eachField(f.val, func(g pbField) error {
				if g.num == 2 {
					kind = string(g.val)
				} else if g.num == 1 && string(g.val) != "v1" {
					t.Errorf("apiVersion %q", g.val)
				}
				return nil
			})
		case 2:
			raw = f.val
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return kind, raw
}

func fields(t *testing.T, msg []byte) map[int][][]byte {
	t.Helper()
	m := map[int][][]byte{}
	if err := eachField(msg, func(f pbField) error { m[f.num] = append(m[f.num], f.val); return nil }); err != nil {
		t.Fatal(err)
	}
	return m
}

func pbGet(t *testing.T, url, accept string) (contentType string, body []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v: %s", url, resp.Status, err, body)
	}
	return resp.Header.Get("Content-Type"), body
}

const clientGoAccept = "application/vnd.kubernetes.protobuf,application/json"

// A protobuf list pages as the JSON one does and carries the objects as in the file; JSON
// clients still get JSON.
func TestProtobufList(t *testing.T) {
	plain, err := New(Options{Objects: 25})
	if err != nil {
		t.Fatal(err)
	}
	path := writeFakeFile(t, plain, func(_ int, it *item) []byte { return fakeMessage(it, it.rvs, zeroStamp) })
	s, url := start(t, Options{Objects: 25, ProtobufObjects: path})
	if ct, body := pbGet(t, url+"/api/v1/namespaces/bench/pods?limit=10", "application/json, "+protobufType); ct != "application/json" || body[0] != '{' {
		t.Errorf("a JSON-first client got %s", ct)
	}
	var got int
	cont := ""
	for page := 0; ; page++ {
		ct, body := pbGet(t, url+"/api/v1/namespaces/bench/pods?limit=10&continue="+cont, clientGoAccept)
		if ct != protobufType {
			t.Fatalf("Content-Type %q", ct)
		}
		kind, list := unknown(t, body)
		if kind != "PodList" {
			t.Fatalf("kind %q", kind)
		}
		lf := fields(t, list)
		meta := fields(t, lf[1][0])
		if string(meta[2][0]) != strconv.FormatInt(s.r0, 10) {
			t.Errorf("page %d: list resourceVersion %q", page, meta[2][0])
		}
		for _, msg := range lf[2] {
			it := &s.items[got]
			if want := fakeMessage(it, it.rvs, zeroStamp); !bytes.Equal(msg, want) {
				t.Fatalf("item %d:\n% x\nwant\n% x", got, msg, want)
			}
			got++
		}
		if len(meta[3]) == 0 {
			if page != 2 || got != 25 {
				t.Errorf("%d items on %d pages", got, page+1)
			}
			break
		}
		cont = string(meta[3][0])
		var remaining uint64
		_ = eachField(lf[1][0], func(f pbField) error {
			if f.num == 4 && f.wt == wireVarint {
				remaining = f.v
			}
			return nil
		})
		if want := uint64(25 - got); remaining != want {
			t.Errorf("page %d: remainingItemCount %d, want %d", page, remaining, want)
		}
	}
}

// readFrame reads one length-prefixed watch frame and returns the event's type and the
// object's kind and message.
func readFrame(t *testing.T, r *bufio.Reader) (typ, kind string, obj []byte) {
	t.Helper()
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, binary.BigEndian.Uint32(n[:]))
	if _, err := io.ReadFull(r, frame); err != nil {
		t.Fatal(err)
	}
	ev := fields(t, frame)
	ext := fields(t, ev[2][0])
	kind, obj = unknown(t, ext[1][0])
	return string(ev[1][0]), kind, obj
}

// A protobuf watch sends the JSON watch's events, each the object's message with the
// event's resourceVersion and a send-time stamp, and bookmarks of only a
// resourceVersion.
func TestProtobufWatch(t *testing.T) {
	plain, err := New(Options{Objects: 12})
	if err != nil {
		t.Fatal(err)
	}
	path := writeFakeFile(t, plain, func(_ int, it *item) []byte { return fakeMessage(it, it.rvs, zeroStamp) })
	s, url := start(t, Options{Objects: 12, WatchEvents: 25, ProtobufObjects: path})

	before := time.Now().UnixNano()
	req, _ := http.NewRequest(http.MethodGet, url+"/api/v1/namespaces/bench/pods?watch=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan", nil)
	req.Header.Set("Accept", clientGoAccept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != protobufWatchType {
		t.Fatalf("Content-Type %q", ct)
	}
	r := bufio.NewReader(resp.Body)
	check := func(k int, typ, kind string, obj []byte, wantTyp string, it *item, rv []byte) {
		t.Helper()
		if typ != wantTyp || kind != "Pod" {
			t.Fatalf("event %d: %s %s, want %s Pod", k, typ, kind, wantTyp)
		}
		var stamp []byte
		_ = eachField(fields(t, obj)[1][0], func(f pbField) error {
			if f.num == 12 && string(fields(t, f.val)[1][0]) == StampAnnotation {
				stamp = fields(t, f.val)[2][0]
			}
			return nil
		})
		ns, err := strconv.ParseInt(string(stamp), 10, 64)
		if len(stamp) != stampWidth || err != nil || ns < before || ns > time.Now().UnixNano() {
			t.Fatalf("event %d: stamp %q", k, stamp)
		}
		if want := fakeMessage(it, rv, stamp); !bytes.Equal(obj, want) {
			t.Fatalf("event %d:\n% x\nwant\n% x", k, obj, want)
		}
	}
	for i := range s.items {
		typ, kind, obj := readFrame(t, r)
		check(i, typ, kind, obj, "ADDED", &s.items[i], s.items[i].rvs)
	}
	typ, _, obj := readFrame(t, r)
	meta := fields(t, fields(t, obj)[1][0])
	if typ != "BOOKMARK" || string(meta[6][0]) != strconv.FormatInt(s.r0, 10) ||
		string(fields(t, meta[12][0])[1][0]) != "k8s.io/initial-events-end" {
		t.Fatalf("after the initial events: %s %v", typ, meta)
	}
	for k := range int64(25) {
		typ, kind, obj := readFrame(t, r)
		wantTyp, i := EventAt(k, len(s.items))
		check(int(k), typ, kind, obj, wantTyp, &s.items[i], []byte(strconv.FormatInt(s.r0+1+k, 10)))
	}
	typ, _, obj = readFrame(t, r) // a second later
	meta = fields(t, fields(t, obj)[1][0])
	if typ != "BOOKMARK" || string(meta[6][0]) != strconv.FormatInt(s.r0+25, 10) || len(meta) != 1 {
		t.Fatalf("idle: %s %v", typ, meta)
	}
}

func TestEmitProtobufAllocatesNothing(t *testing.T) {
	plain, err := New(Options{Objects: 100})
	if err != nil {
		t.Fatal(err)
	}
	path := writeFakeFile(t, plain, func(_ int, it *item) []byte { return fakeMessage(it, it.rvs, zeroStamp) })
	s, err := New(Options{Objects: 100, ProtobufObjects: path})
	if err != nil {
		t.Fatal(err)
	}
	w := &watcher{s: s, items: s.items, kind: "Pod", pb: true, bw: bufio.NewWriterSize(io.Discard, 256<<10)}
	k := int64(0)
	if n := testing.AllocsPerRun(1000, func() { w.change(k); k++ }); n != 0 {
		t.Fatalf("%v allocations per event", n)
	}
	if w.err != nil {
		t.Fatal(w.err)
	}
}

// A resourceVersion of another length cannot be patched in place: the watch fails rather
// than send a corrupt message.
func TestProtobufWatchRefusesLongerResourceVersions(t *testing.T) {
	plain, err := New(Options{Objects: 3})
	if err != nil {
		t.Fatal(err)
	}
	path := writeFakeFile(t, plain, func(_ int, it *item) []byte { return fakeMessage(it, it.rvs, zeroStamp) })
	s, err := New(Options{Objects: 3, ProtobufObjects: path})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := &watcher{s: s, items: s.items, kind: "Pod", pb: true, bw: bufio.NewWriter(&out)}
	w.emit(modified, &s.items[0], []byte("123456789"))
	if w.err == nil || w.events != 0 {
		t.Errorf("a 9-digit resourceVersion: err %v, %d events", w.err, w.events)
	}
}
